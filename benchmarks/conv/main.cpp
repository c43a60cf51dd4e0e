//===- main.cpp - qtrain's implicit-GEMM convolutions against oneDNN ------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// qtrain-bench-conv [threads]: for every convolution of the example
/// models' training steps (forward convolutions and the input gradients of
/// stride-1 layers, which are convolutions of the padded error), at batch
/// 128, times in one process on the same data:
///
///   qtrain f32 / s8 implicit   qtrain_mk_conv2d_nchw_{f32,s8s8s32} on our
///                              own kernels: the patches packed straight
///                              from the NCHW input
///   qtrain f32 / s8 C API      the same calls as the training step makes
///                              them: oneDNN where LibraryConv.h's policy
///                              takes the layer, with the layout changes
///   qtrain f32 / s8 im2col     the explicit form qtrain ran before: a
///                              K-major patch buffer, then the GEMM kernel
///   oneDNN f32 / u8s8s32       oneDNN's convolution with the layouts it
///                              picks (reorders outside the timing)
///
/// Median of 9 runs after 2 warm-ups; prints ms, GOP/s (2 N F OH OW C KH
/// KW), the ratio to qtrain's f32 implicit convolution and the share of the
/// per-core instruction peak (fp32 FMA 64, int8 VNNI 256 ops per cycle at
/// the nominal clock). Outputs are checked at 4096 sampled positions: f32
/// against an fp64 sum (relative error), s8 bit for bit against int64 sums
/// (mismatch count), oneDNN's likewise after a reorder back to NCHW.
///
//===----------------------------------------------------------------------===//

#include "qtrain/microkernels.h"

#include "LibraryConv.h"

#include "../common/Timing.h"

#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using qtrain::bench::clockGHz;
using qtrain::bench::medianMs;

struct Layer {
  const char *name;
  int64_t C, H, F, K; // square inputs and kernels, stride 1
};

struct Shape {
  int64_t N, C, H, F, K, OH;
  int64_t depth() const { return C * K * K; }
  int64_t rows() const { return N * OH * OH; }
  double ops() const { return 2.0 * double(F) * double(rows()) * depth(); }
};

struct Row {
  std::string name;
  double ms, peakOps, error;
  bool exact;
};

/// The K-major patches [C*K*K, N*OH*OW] of x (NCHW), as qtrain built them
/// before the implicit kernels.
template <class T>
void im2col(const Shape &s, const std::vector<T> &x, std::vector<T> &p) {
  int64_t rows = s.rows();
  for (int64_t c = 0; c < s.C; ++c)
    for (int64_t kh = 0; kh < s.K; ++kh)
      for (int64_t kw = 0; kw < s.K; ++kw) {
        T *dst = &p[size_t(((c * s.K + kh) * s.K + kw) * rows)];
        for (int64_t n = 0; n < s.N; ++n)
          for (int64_t oh = 0; oh < s.OH; ++oh) {
            const T *src =
                &x[size_t(((n * s.C + c) * s.H + oh + kh) * s.H + kw)];
            for (int64_t ow = 0; ow < s.OH; ++ow)
              *dst++ = src[ow];
          }
      }
}

/// Output (n, f, oh, ow) of the direct convolution, in double / int64.
template <class T, class Acc>
Acc direct(const Shape &s, const std::vector<T> &x, const std::vector<T> &w,
           int64_t n, int64_t f, int64_t oh, int64_t ow) {
  Acc sum = 0;
  for (int64_t c = 0; c < s.C; ++c)
    for (int64_t kh = 0; kh < s.K; ++kh)
      for (int64_t kw = 0; kw < s.K; ++kw)
        sum += Acc(x[size_t(((n * s.C + c) * s.H + oh + kh) * s.H + ow + kw)]) *
               Acc(w[size_t(((f * s.C + c) * s.K + kh) * s.K + kw)]);
  return sum;
}

/// Max relative error (f32) or mismatch count (integers) of y (NCHW)
/// against the direct convolution at 4096 sampled outputs.
template <class T, class Acc, class Y>
double check(const Shape &s, const std::vector<T> &x, const std::vector<T> &w,
             const std::vector<Y> &y) {
  std::mt19937 gen(3);
  std::uniform_int_distribution<int64_t> pick(0, int64_t(y.size()) - 1);
  double worst = 0, scale = 0, wrong = 0;
  for (int i = 0; i < 4096; ++i) {
    int64_t at = pick(gen);
    int64_t ow = at % s.OH, oh = at / s.OH % s.OH, f = at / (s.OH * s.OH) % s.F,
            n = at / (s.OH * s.OH * s.F);
    Acc ref = direct<T, Acc>(s, x, w, n, f, oh, ow);
    if constexpr (std::is_floating_point_v<Acc>) {
      worst = std::max(worst, std::fabs(double(y[size_t(at)]) - ref));
      scale = std::max(scale, std::fabs(ref));
    } else {
      wrong += Y(ref) != y[size_t(at)];
    }
  }
  if constexpr (std::is_floating_point_v<Acc>)
    return worst / (scale > 0 ? scale : 1);
  return wrong;
}

/// oneDNN's forward convolution of x by w (formats its choice, reorders
/// untimed); returns ms and writes y (NCHW).
double onednn(const Shape &s, dnnl::memory::data_type src,
              dnnl::memory::data_type wei, dnnl::memory::data_type dst, void *x,
              void *w, void *y) {
  using namespace dnnl;
  using tag = memory::format_tag;
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  memory::dims xd{s.N, s.C, s.H, s.H}, wd{s.F, s.C, s.K, s.K},
      yd{s.N, s.F, s.OH, s.OH};
  memory::desc xAny(xd, src, tag::any), wAny(wd, wei, tag::any),
      yAny(yd, dst, tag::any);
  // oneDNN 2.x: an operation descriptor, then the primitive's.
  convolution_forward::desc desc(prop_kind::forward_inference,
                                 algorithm::convolution_direct, xAny, wAny,
                                 yAny, {1, 1}, {0, 0}, {0, 0});
  convolution_forward::primitive_desc pd(desc, eng);
  memory xUser({xd, src, tag::nchw}, eng, x),
      wUser({wd, wei, tag::oihw}, eng, w), yUser({yd, dst, tag::nchw}, eng, y);
  memory xm(pd.src_desc(), eng), wm(pd.weights_desc(), eng),
      ym(pd.dst_desc(), eng);
  reorder(xUser, xm).execute(strm, xUser, xm);
  reorder(wUser, wm).execute(strm, wUser, wm);
  convolution_forward prim(pd);
  double ms = medianMs([&]() {
    prim.execute(
        strm, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}});
    strm.wait();
  });
  reorder(ym, yUser).execute(strm, ym, yUser);
  strm.wait();
  return ms;
}

void run(const Layer &layer, int threads, double ghz) {
  Shape s{128, layer.C, layer.H, layer.F, layer.K, layer.H - layer.K + 1};
  std::mt19937 gen(1);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> code(-128, 127);
  std::vector<float> x(size_t(s.N * s.C * s.H * s.H)),
      w(size_t(s.F * s.depth())), y(size_t(s.N * s.F * s.OH * s.OH));
  for (float &v : x)
    v = normal(gen);
  for (float &v : w)
    v = normal(gen);
  std::vector<int8_t> xc(x.size()), wc(w.size());
  for (int8_t &v : xc)
    v = int8_t(code(gen));
  for (int8_t &v : wc)
    v = int8_t(code(gen));
  std::vector<int32_t> acc(y.size());
  std::vector<Row> rows;
  const int64_t N = s.N, C = s.C, H = s.H, F = s.F, K = s.K, OH = s.OH;

  auto implicitF32 = [&]() {
    qtrain_mk_conv2d_nchw_f32(N, C, H, H, F, K, K, OH, OH, 1, 1, 1, 1, x.data(),
                              0, C * H * H, H * H, H, 1, w.data(), 0, C * K * K,
                              K * K, K, 1, y.data(), 0, F * OH * OH, OH * OH,
                              OH, 1);
  };
  using qtrain::mk::ConvLibraryMode;
  using qtrain::mk::setConvLibraryMode;
  setConvLibraryMode(ConvLibraryMode::Never);
  std::fill(y.begin(), y.end(), 0.0f);
  double ms = medianMs([&]() {
    std::fill(y.begin(), y.end(), 0.0f);
    implicitF32();
  });
  rows.push_back(
      {"qtrain f32 implicit", ms, 64, check<float, double>(s, x, w, y), false});
  setConvLibraryMode(ConvLibraryMode::Auto);
  ms = medianMs([&]() {
    std::fill(y.begin(), y.end(), 0.0f);
    implicitF32();
  });
  rows.push_back(
      {"qtrain f32 C API", ms, 64, check<float, double>(s, x, w, y), false});

  // The explicit form: patches, then C[f, rows] += W[f, depth] P[depth, rows]
  // and the [F, N*OH*OW] result back to NCHW (untimed: the check only).
  std::vector<float> patches(size_t(s.depth() * s.rows())),
      gemmOut(size_t(F * s.rows()));
  ms = medianMs([&]() {
    im2col(s, x, patches);
    std::fill(gemmOut.begin(), gemmOut.end(), 0.0f);
    qtrain_mk_gemm_f32(F, s.rows(), s.depth(), w.data(), 0, s.depth(), 1,
                       patches.data(), 0, s.rows(), 1, gemmOut.data(), 0,
                       s.rows(), 1);
  });
  auto toNchw = [&](const auto &gemm, auto &out) {
    for (int64_t f = 0; f < F; ++f)
      for (int64_t r = 0; r < s.rows(); ++r)
        out[size_t((r / (OH * OH) * F + f) * OH * OH + r % (OH * OH))] =
            gemm[size_t(f * s.rows() + r)];
  };
  toNchw(gemmOut, y);
  rows.push_back(
      {"qtrain f32 im2col", ms, 64, check<float, double>(s, x, w, y), false});
  ms = onednn(s, dnnl::memory::data_type::f32, dnnl::memory::data_type::f32,
              dnnl::memory::data_type::f32, x.data(), w.data(), y.data());
  rows.push_back(
      {"oneDNN f32", ms, 64, check<float, double>(s, x, w, y), false});

  auto implicitS8 = [&]() {
    std::fill(acc.begin(), acc.end(), 0);
    qtrain_mk_conv2d_nchw_s8s8s32(N, C, H, H, F, K, K, OH, OH, 1, 1, 1, 1,
                                  xc.data(), 0, C * H * H, H * H, H, 1,
                                  wc.data(), 0, C * K * K, K * K, K, 1,
                                  acc.data(), 0, F * OH * OH, OH * OH, OH, 1);
  };
  setConvLibraryMode(ConvLibraryMode::Never);
  ms = medianMs(implicitS8);
  rows.push_back({"qtrain s8 implicit", ms, 256,
                  check<int8_t, int64_t>(s, xc, wc, acc), true});
  setConvLibraryMode(ConvLibraryMode::Auto);
  ms = medianMs(implicitS8);
  rows.push_back({"qtrain s8 C API", ms, 256,
                  check<int8_t, int64_t>(s, xc, wc, acc), true});
  std::vector<int8_t> codePatches(patches.size());
  std::vector<int32_t> accGemm(gemmOut.size());
  ms = medianMs([&]() {
    im2col(s, xc, codePatches);
    std::fill(accGemm.begin(), accGemm.end(), 0);
    qtrain_mk_gemm_s8s8s32(F, s.rows(), s.depth(), wc.data(), 0, s.depth(), 1,
                           codePatches.data(), 0, s.rows(), 1, accGemm.data(),
                           0, s.rows(), 1);
  });
  toNchw(accGemm, acc);
  rows.push_back({"qtrain s8 im2col", ms, 256,
                  check<int8_t, int64_t>(s, xc, wc, acc), true});
  // oneDNN's int8 convolution takes u8 activations: the codes + 128 (the
  // check subtracts 128 * the filter's sums again).
  std::vector<uint8_t> xu(xc.size());
  for (size_t i = 0; i < xc.size(); ++i)
    xu[i] = uint8_t(xc[i] + 128);
  ms = onednn(s, dnnl::memory::data_type::u8, dnnl::memory::data_type::s8,
              dnnl::memory::data_type::s32, xu.data(), wc.data(), acc.data());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t f = 0; f < F; ++f) {
      int32_t sum = 0;
      for (int64_t e = 0; e < s.depth(); ++e)
        sum += wc[size_t(f * s.depth() + e)];
      for (int64_t p = 0; p < OH * OH; ++p)
        acc[size_t((n * F + f) * OH * OH + p)] -= 128 * sum;
    }
  rows.push_back({"oneDNN u8s8s32", ms, 256,
                  check<int8_t, int64_t>(s, xc, wc, acc), true});

  std::printf("%s: N=%lld C=%lld H=W=%lld F=%lld K=%lld (OH=%lld), %d "
              "thread(s), clock %.2f GHz, kernels: %s\n",
              layer.name, (long long)N, (long long)C, (long long)H,
              (long long)F, (long long)K, (long long)OH, threads, ghz,
              qtrain_mk_isa());
  std::printf("%-22s %9s %9s %11s %8s %10s\n", "kernel", "ms", "GOP/s",
              "vs f32 impl", "% peak", "error");
  double base = rows[0].ms;
  for (const Row &r : rows) {
    double gops = s.ops() / (r.ms * 1e6);
    double peak = ghz > 0 ? 100.0 * gops / (r.peakOps * ghz * threads) : 0;
    std::printf("%-22s %9.3f %9.1f %10.2fx %7.1f%% %10.2e%s\n", r.name.c_str(),
                r.ms, gops, base / r.ms, peak, r.error,
                r.exact ? " mismatches" : "");
  }
  std::printf("\n");
  bool bad = false;
  for (const Row &r : rows)
    bad |= r.exact ? r.error != 0 : r.error > 1e-5;
  if (bad) {
    std::printf("CHECK FAILED\n");
    std::exit(1);
  }
}

} // namespace

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  if (threads < 1) {
    std::fprintf(stderr, "usage: qtrain-bench-conv [threads]\n");
    return 2;
  }
  qtrain_mk_set_num_threads(threads);
  double ghz = clockGHz();
  // Forward convolutions and stride-1 input gradients (the padded error
  // convolved with the flipped filter: C and F swap, H = OH + 2 (K - 1)).
  const Layer layers[] = {
      {"lenet conv1 forward", 1, 32, 6, 5},
      {"lenet conv2 forward", 6, 14, 16, 5},
      {"lenet conv2 input gradient", 16, 18, 6, 5},
      {"convnet conv1 forward", 1, 28, 32, 3},
      {"convnet conv2 forward", 32, 26, 64, 3},
      {"convnet conv2 input gradient", 64, 28, 32, 3},
  };
  for (const Layer &layer : layers)
    run(layer, threads, ghz);
  return 0;
}
