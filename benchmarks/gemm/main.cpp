//===- main.cpp - qtrain's GEMM variants against oneDNN and OpenBLAS ------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// qtrain-bench-gemm M N K VARIANTS.so [threads]: times the forward
/// variants of one linear layer y = x W^T (x: M x K, W: N x K) that qtrain
/// compiled (benchmarks/gemm/run.sh builds VARIANTS.so with qtrain-opt) next
/// to oneDNN f32, bf16 and u8s8s32 matmuls and OpenBLAS sgemm, in the same
/// process, on the same data:
///
///   qtrain fp32        train_step_site0_forward_b0 (no quantization)
///   qtrain int b       train_step_site0_forward_b<b> (b = 10, 8, 4, 2,
///                      1): quantize both
///                      operands + integer product + corrections, as
///                      training runs it
///
///   mk ...             the microkernels of runtime/kernels/cpu on their
///                      own: f32 and bf16 on x and W, the integer ones on
///                      given codes (no quantization)
///
/// Median of 9 repetitions after 2 warm-ups; prints ms, GOP/s (2 M N K),
/// the ratio to qtrain fp32, to qtrain int8 and to oneDNN u8s8s32, and the
/// share of the per-core instruction peak (fp32 FMA 64, bf16 and int16 VNNI
/// 128, int8 VNNI 256 ops per cycle at the nominal clock). Every output is
/// checked: fp32
/// kernels against an fp64 product, quantized ones against the fp64
/// product within the quantization error of their bitwidth, the
/// microkernels' integer results bit for bit against int64 sums at 4096
/// sampled outputs (the error column counts mismatches).
///
//===----------------------------------------------------------------------===//

#include "qtrain/microkernels.h"

#include "../common/Timing.h"

#include <cblas.h>
#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <functional>
#include <malloc.h>
#include <random>
#include <string>
#include <vector>

namespace {

using qtrain::bench::clockGHz;
using qtrain::bench::medianMs;

using Variant = void (*)(float *, float *, float *, float *);

/// max |y - ref| / max |ref|.
double relError(const std::vector<float> &y, const std::vector<double> &ref) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    worst = std::max(worst, std::fabs(double(y[i]) - ref[i]));
    scale = std::max(scale, std::fabs(ref[i]));
  }
  return worst / (scale > 0 ? scale : 1);
}

/// `count` random centred codes of `bits` bits.
std::vector<int8_t> randomCodes(size_t count, int bits, std::mt19937 &gen) {
  std::uniform_int_distribution<int> code(-(1 << (bits - 1)),
                                          (1 << (bits - 1)) - 1);
  std::vector<int8_t> codes(count);
  for (int8_t &v : codes)
    v = int8_t(code(gen));
  return codes;
}

/// Outputs of acc = x W^T (codes; x: M x K, W: N x K) that differ from
/// int64 sums, at 4096 sampled positions.
template <class Code>
double mismatches(const std::vector<Code> &x, const std::vector<Code> &w,
                  const std::vector<int32_t> &acc, int64_t M, int64_t N,
                  int64_t K, std::mt19937 &gen) {
  std::uniform_int_distribution<int64_t> pickM(0, M - 1), pickN(0, N - 1);
  double wrong = 0;
  for (int i = 0; i < 4096; ++i) {
    int64_t m = pickM(gen), n = pickN(gen), sum = 0;
    for (int64_t k = 0; k < K; ++k)
      sum += int64_t(x[size_t(m * K + k)]) * w[size_t(n * K + k)];
    wrong += sum != acc[size_t(m * N + n)];
  }
  return wrong;
}

struct Row {
  std::string name;
  double ms = 0, peakOps = 0, error = 0, bound = 0;
};

} // namespace

int main(int argc, char **argv) {
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: qtrain-bench-gemm M N K VARIANTS.so [threads]\n");
    return 2;
  }
  const int64_t M = std::atoll(argv[1]), N = std::atoll(argv[2]),
                K = std::atoll(argv[3]);
  const int threads = argc > 5 ? std::atoi(argv[5]) : 1;
  // As the runtime's Trainer does: temporaries reuse heap pages instead of
  // faulting in fresh mappings on every call.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  void *lib = dlopen(argv[4], RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "qtrain-bench-gemm: %s\n", dlerror());
    return 2;
  }
  // oneDNN reads OMP_NUM_THREADS at start-up: run.sh sets it. The
  // variants' GEMMs run on the copy of the microkernels linked into
  // VARIANTS.so: set its thread count there.
  openblas_set_num_threads(threads);
  if (auto setThreads = reinterpret_cast<void (*)(int32_t)>(
          dlsym(lib, "qtrain_mk_set_num_threads")))
    setThreads(threads);

  std::mt19937 gen(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(size_t(M * K)), w(size_t(N * K));
  for (float &v : x)
    v = normal(gen);
  for (float &v : w)
    v = normal(gen) * 0.05f;
  // fp64 reference of y = x W^T.
  std::vector<double> ref(size_t(M * N), 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k) {
      double a = x[size_t(m * K + k)];
      for (int64_t n = 0; n < N; ++n)
        ref[size_t(m * N + n)] += a * double(w[size_t(n * K + k)]);
    }

  double ghz = clockGHz();
  double ops = 2.0 * double(M) * double(N) * double(K);
  std::vector<Row> rows;
  std::vector<float> y(size_t(M * N));

  // qtrain's variants: (x, W, init, out); the variant may write into its
  // arguments, so each call gets fresh copies (outside the timing only for
  // the init, which is part of the product's contract).
  std::vector<float> xIn = x, wIn = w, init(size_t(M * N), 0.0f);
  auto runVariant = [&](Variant fn) {
    std::copy(x.begin(), x.end(), xIn.begin());
    std::copy(w.begin(), w.end(), wIn.begin());
    std::fill(init.begin(), init.end(), 0.0f);
    fn(xIn.data(), wIn.data(), init.data(), y.data());
  };
  double copyMs = medianMs([&]() {
    std::copy(x.begin(), x.end(), xIn.begin());
    std::copy(w.begin(), w.end(), wIn.begin());
    std::fill(init.begin(), init.end(), 0.0f);
  });
  for (int bits : {0, 10, 8, 4, 2, 1}) {
    std::string symbol = "train_step_site0_forward_b" + std::to_string(bits);
    auto fn = reinterpret_cast<Variant>(dlsym(lib, symbol.c_str()));
    if (!fn)
      continue;
    double ms = medianMs([&]() { runVariant(fn); }) - copyMs;
    // A sanity bound, not an accuracy claim: each operand is off by up to
    // half a grid step, a few 2^-bits of max |y| for these data (1 bit,
    // two levels per operand, is off by more than max |y| itself). The
    // variants are exact against the reference integer computation in the
    // lit tests (test/Pipelines/*variants.test).
    double bound = bits == 0   ? 1e-5
                   : bits == 1 ? INFINITY
                               : 32.0 / double(1 << bits);
    rows.push_back(
        {bits == 0 ? "qtrain fp32" : "qtrain int" + std::to_string(bits), ms,
         bits == 0  ? 64.0
         : bits > 8 ? 128.0
                    : 256.0,
         relError(y, ref), bound});
  }

  // The microkernels on their own (runtime/kernels/cpu): f32 and bf16 on
  // x and W, the integer ones on given codes of x and W (no quantization),
  // checked bit for bit against int64 sums at sampled outputs.
  qtrain_mk_set_num_threads(threads);
  auto mkF32 = [&](decltype(&qtrain_mk_gemm_f32) fn) {
    return medianMs([&]() {
      std::fill(y.begin(), y.end(), 0.0f);
      fn(M, N, K, x.data(), 0, K, 1, w.data(), 0, 1, K, y.data(), 0, N, 1);
    });
  };
  rows.push_back(
      {"mk f32", mkF32(qtrain_mk_gemm_f32), 64, relError(y, ref), 1e-5});
  rows.push_back(
      {"mk bf16", mkF32(qtrain_mk_gemm_bf16), 128, relError(y, ref), 2e-2});
  for (int bits : {8, 4, 2, 1}) {
    std::vector<int8_t> xc = randomCodes(x.size(), bits, gen);
    std::vector<int8_t> wc = randomCodes(w.size(), bits, gen);
    std::vector<int32_t> acc(size_t(M * N));
    bool serial = bits <= 4;
    double ms = medianMs([&]() {
      std::fill(acc.begin(), acc.end(), 0);
      if (serial)
        qtrain_mk_gemm_bitserial(M, N, K, xc.data(), 0, K, 1, wc.data(), 0, 1,
                                 K, acc.data(), 0, N, 1, bits, bits);
      else
        qtrain_mk_gemm_s8s8s32(M, N, K, xc.data(), 0, K, 1, wc.data(), 0, 1, K,
                               acc.data(), 0, N, 1);
    });
    // Exact: the error column counts mismatches at 4096 sampled outputs.
    double wrong = mismatches(xc, wc, acc, M, N, K, gen);
    rows.push_back({serial ? "mk W" + std::to_string(bits) + "A" +
                                 std::to_string(bits) + " bitser"
                           : "mk s8 codes",
                    ms, 256, wrong, 0});
  }

  // 16-bit codes (10-bit grids: the 9..16-bit variants), vpdpwssd; exact
  // at sampled outputs.
  {
    std::uniform_int_distribution<int> code(-512, 511);
    std::vector<int16_t> xc(x.size()), wc(w.size());
    for (int16_t &v : xc)
      v = int16_t(code(gen));
    for (int16_t &v : wc)
      v = int16_t(code(gen));
    std::vector<int32_t> acc(size_t(M * N));
    double ms = medianMs([&]() {
      std::fill(acc.begin(), acc.end(), 0);
      qtrain_mk_gemm_s16s16s32(M, N, K, xc.data(), 0, K, 1, wc.data(), 0, 1, K,
                               acc.data(), 0, N, 1);
    });
    rows.push_back(
        {"mk s16 codes", ms, 128, mismatches(xc, wc, acc, M, N, K, gen), 0});
  }

  // Packed k-bit weights (B packed once, outside the timing, as weights
  // between updates): 8-bit and 4-bit codes, A 8-bit; exact at sampled
  // outputs.
  for (int bits : {8, 4}) {
    std::vector<int8_t> xc = randomCodes(x.size(), 8, gen);
    std::vector<int8_t> wc = randomCodes(w.size(), bits, gen);
    std::vector<uint8_t> packed(size_t(qtrain_mk_packed_b_bytes(N, K, bits)));
    qtrain_mk_pack_b(N, K, wc.data(), 0, 1, K, bits, packed.data());
    std::vector<int32_t> acc(size_t(M * N));
    double ms = medianMs([&]() {
      std::fill(acc.begin(), acc.end(), 0);
      qtrain_mk_gemm_s8_packed_b(M, N, K, xc.data(), 0, K, 1, packed.data(),
                                 bits, acc.data(), 0, N, 1);
    });
    double wrong = mismatches(xc, wc, acc, M, N, K, gen);
    rows.push_back(
        {"mk A8 W" + std::to_string(bits) + " packed", ms, 256, wrong, 0});
  }

  // OpenBLAS sgemm.
  rows.push_back({"OpenBLAS sgemm", medianMs([&]() {
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(M),
                                int(N), int(K), 1.0f, x.data(), int(K),
                                w.data(), int(K), 0.0f, y.data(), int(N));
                  }),
                  64, relError(y, ref), 1e-5});

  // oneDNN matmuls: f32, bf16 (f32 output), u8 x s8 -> s32.
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  auto matmul = [&](memory::data_type a, memory::data_type b,
                    memory::data_type c, void *aData, void *bData,
                    void *cData) {
    memory::desc aDesc({M, K}, a, memory::format_tag::ab);
    memory::desc bDesc({K, N}, b, memory::format_tag::ba);
    memory::desc cDesc({M, N}, c, memory::format_tag::ab);
    // oneDNN 2.x: an operation descriptor, then the primitive's.
    matmul::desc desc(aDesc, bDesc, cDesc);
    matmul::primitive_desc pd(desc, eng);
    dnnl::matmul prim(pd);
    memory am(aDesc, eng, aData), bm(bDesc, eng, bData), cm(cDesc, eng, cData);
    return medianMs([&]() {
      prim.execute(
          strm,
          {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
      strm.wait();
    });
  };
  rows.push_back({"oneDNN f32",
                  matmul(memory::data_type::f32, memory::data_type::f32,
                         memory::data_type::f32, x.data(), w.data(), y.data()),
                  64, relError(y, ref), 1e-5});
  {
    std::vector<uint16_t> xb(x.size()), wb(w.size());
    auto toBf16 = [](float v) {
      uint32_t u;
      std::memcpy(&u, &v, 4);
      return uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
    };
    for (size_t i = 0; i < x.size(); ++i)
      xb[i] = toBf16(x[i]);
    for (size_t i = 0; i < w.size(); ++i)
      wb[i] = toBf16(w[i]);
    rows.push_back(
        {"oneDNN bf16",
         matmul(memory::data_type::bf16, memory::data_type::bf16,
                memory::data_type::f32, xb.data(), wb.data(), y.data()),
         128, relError(y, ref), 2e-2});
  }
  double u8s8 = 0;
  {
    // Affine codes of x (u8) and symmetric codes of W (s8); the check
    // dequantizes the s32 result.
    float xMin = *std::min_element(x.begin(), x.end());
    float xMax = *std::max_element(x.begin(), x.end());
    float wMax = 0;
    for (float v : w)
      wMax = std::max(wMax, std::fabs(v));
    float xs = (xMax - xMin) / 255.0f, ws = wMax / 127.0f;
    std::vector<uint8_t> xq(x.size());
    std::vector<int8_t> wq(w.size());
    for (size_t i = 0; i < x.size(); ++i)
      xq[i] = uint8_t(std::lrint((x[i] - xMin) / xs));
    for (size_t i = 0; i < w.size(); ++i)
      wq[i] = int8_t(std::lrint(w[i] / ws));
    std::vector<int32_t> acc(size_t(M * N));
    u8s8 = matmul(memory::data_type::u8, memory::data_type::s8,
                  memory::data_type::s32, xq.data(), wq.data(), acc.data());
    // y = xs ws sum(qx qw) + xMin ws sum(qw): the column sums of W.
    std::vector<double> colSum(size_t(N), 0.0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k)
        colSum[size_t(n)] += wq[size_t(n * K + k)];
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n)
        y[size_t(m * N + n)] = float(double(xs) * ws * acc[size_t(m * N + n)] +
                                     double(xMin) * ws * colSum[size_t(n)]);
    rows.push_back({"oneDNN u8s8s32", u8s8, 256, relError(y, ref), 8.0 / 256});
  }

  double fp32Ms = rows.front().name == "qtrain fp32" ? rows.front().ms : 0;
  double int8Ms = 0;
  for (const Row &r : rows)
    if (r.name == "qtrain int8")
      int8Ms = r.ms;
  std::printf("M=%lld N=%lld K=%lld, %d thread(s), clock %.2f GHz, "
              "kernels: %s, OpenBLAS core: %s\n",
              (long long)M, (long long)N, (long long)K, threads, ghz,
              qtrain_mk_isa(), openblas_get_corename());
  std::printf("%-17s %10s %9s %11s %11s %11s %8s %10s\n", "kernel", "ms",
              "GOP/s", "vs qt fp32", "vs qt int8", "vs u8s8s32", "% peak",
              "rel err");
  int failures = 0;
  for (const Row &r : rows) {
    double gops = ops / (r.ms * 1e6);
    double peak = ghz > 0 ? 100.0 * gops / (r.peakOps * ghz * threads) : 0;
    bool ok = r.error <= r.bound;
    failures += !ok;
    std::printf("%-17s %10.3f %9.1f %10.2fx %10.2fx %10.2fx %7.1f%% %10.2e%s\n",
                r.name.c_str(), r.ms, gops, fp32Ms > 0 ? fp32Ms / r.ms : 0,
                int8Ms > 0 ? int8Ms / r.ms : 0, u8s8 / r.ms, peak, r.error,
                ok ? "" : "  CHECK FAILED");
  }
  return failures ? 1 : 0;
}
