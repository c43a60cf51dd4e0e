//===- InputGradCheck.cpp - Integer input gradients, reference ---*- C++
//-*-===//
//
// qtrain-input-grad-check LIB.so: calls `input_grad_b<B>(e, w, init, seed,
// step, out)` (E: f32[8x4], W: f32[4x16] quantized per output channel,
// init and out: f32[8x16]; bare pointers) of a module lowered with
// qtrain-integer-kernels input-grad=int, for B = 4 and 8 (the error at 8
// bits, stochastic rounding, stream 1), and checks that it equals, bit for
// bit, the plain integer computation written here from the runtime's
// quantizer (docs/passes/integer-kernels.md):
//
//   s_W, mn_W, q_W    the weight's grid per row, its grid indices
//   E'  = f32(E * s_W)              quantized per tensor: grid gE, indices
//                                   q_E (the Philox noise of element i)
//   T1..T4 of the codes c_E = q_E - 2^7 and c_W = q_W - 2^(B-1) (the
//   weight's grid indices on [0, 2^B - 1]: scale 1, low 0), the f64
//   epilogue in the documented order, rounded once to f32; plus the zero
//   points sum_f Q(E')[m, f] * f32(mn_W / s_W)[f] in f32, f in order.
//
// It also checks the result against the method's definition, sum_f
// Q(E')[m, f] * Q(W)[f, c] / s_W[f] in f64 (within 1e-5 relative).
//
// With --bf16 (a module lowered with input-grad=bf16) it checks init +
// sum_f bf16(Q(E)) * bf16(Q(W)) instead, within 1e-5 relative (the f32
// sums), and that this is more than 1e-4 relative away from the f32 product
// (so the rounding is not skipped).
//
// With --fp8 (a module whose error is rounded to e5m2, scaled per tensor,
// lowered with input-grad=fp8) it checks the method of that fold,
// init + sum_f R(E')[m, f] * Q(W)[f, c] / s_W[f] in f64 with R the
// runtime's scaled rounding (rt::roundScaled, M = 57344), within 1e-5
// relative, and that this is more than 1e-4 relative away from the unfolded
// product init + sum_f R(E) Q(W) (so the fold is not skipped).
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/FloatFormat.h"
#include "qtrain/runtime/Quantize.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <random>
#include <string>
#include <vector>

namespace rt = qtrain::rt;

namespace {
constexpr int kM = 8, kF = 4, kC = 16;
constexpr int kErrorBits = 8;
constexpr uint32_t kStream = 1;
using Variant = void (*)(float *, float *, float *, int64_t, int32_t, float *);

/// The weight's grid per row (output channel) and its grid indices, as
/// the runtime's quantizer makes them.
bool weightGrids(const std::vector<float> &w, int bits,
                 std::vector<rt::QuantGrid> &gw, std::vector<int64_t> &qw) {
  gw.assign(kF, {});
  qw.assign(kF * kC, 0);
  for (int f = 0; f < kF; ++f) {
    rt::FiniteRange r = rt::finiteRange(&w[f * kC], kC);
    if (rt::makeQuantGrid(r.min, r.max, bits, gw[f]).failed())
      return false;
    for (int c = 0; c < kC; ++c)
      qw[f * kC + c] = rt::quantIndexNearest(w[f * kC + c], gw[f]);
  }
  return true;
}

struct Reference {
  std::vector<float> exact;
  std::vector<double> method;
};

bool reference(const std::vector<float> &e, const std::vector<float> &w,
               const std::vector<float> &init, int bits, uint64_t seed,
               uint32_t step, Reference &out) {
  std::vector<rt::QuantGrid> gw;
  std::vector<int64_t> qw;
  if (!weightGrids(w, bits, gw, qw))
    return false;
  std::vector<float> scaled(kM * kF);
  for (int m = 0; m < kM; ++m)
    for (int f = 0; f < kF; ++f)
      scaled[m * kF + f] = e[m * kF + f] * gw[f].scale;
  rt::FiniteRange er = rt::finiteRange(scaled.data(), scaled.size());
  rt::QuantGrid ge, gr;
  if (rt::makeQuantGrid(er.min, er.max, kErrorBits, ge).failed() ||
      rt::makeQuantGrid(0.0f, float((1 << bits) - 1), bits, gr).failed())
    return false;
  rt::PhiloxStream noise(seed, kStream, step);
  std::vector<float> eq(kM * kF);
  std::vector<int64_t> qe(kM * kF);
  for (size_t i = 0; i < eq.size(); ++i) {
    eq[i] = rt::fakeQuantStochastic(scaled[i], ge, noise.noise(i));
    qe[i] = std::lround((double(eq[i]) - double(ge.min)) / double(ge.scale));
  }
  const int64_t hE = 1 << (kErrorBits - 1), hW = 1 << (bits - 1);
  std::vector<float> z(kF);
  for (int f = 0; f < kF; ++f)
    z[f] = gw[f].min / gw[f].scale;
  out.exact.assign(kM * kC, 0.0f);
  out.method.assign(kM * kC, 0.0);
  for (int m = 0; m < kM; ++m) {
    float u = 0.0f;
    for (int f = 0; f < kF; ++f)
      u = u + eq[m * kF + f] * z[f];
    for (int c = 0; c < kC; ++c) {
      int64_t t1 = 0, t2 = 0, t3 = 0, t4 = kF;
      for (int f = 0; f < kF; ++f) {
        int64_t ce = qe[m * kF + f] - hE, cw = qw[f * kC + c] - hW;
        t1 += ce * cw;
        t2 += ce;
        t3 += cw;
        double wq =
            double(gw[f].scale) * double(qw[f * kC + c]) + double(gw[f].min);
        out.method[m * kC + c] +=
            double(eq[m * kF + f]) * (wq / double(gw[f].scale));
      }
      double sA = ge.scale, sW = gr.scale;
      double lA = double(ge.min) + double(hE) * sA;
      double lW = double(gr.min) + double(hW) * sW;
      double sum = (sA * sW) * double(t1);
      sum = sum + (sA * lW) * double(t2);
      sum = sum + (lA * sW) * double(t3);
      sum = sum + (lA * lW) * double(t4);
      float y = float(double(init[m * kC + c]) + sum);
      out.exact[m * kC + c] = y + (0.0f + u);
      out.method[m * kC + c] += double(init[m * kC + c]);
    }
  }
  return true;
}
/// x rounded to bf16 (nearest even), as f32.
float bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;
  std::memcpy(&x, &bits, 4);
  return x;
}

/// init + sum_f Q(E) Q(W) in f64, with both factors rounded to bf16 or not.
bool bf16Reference(const std::vector<float> &e, const std::vector<float> &w,
                   const std::vector<float> &init, int bits, uint64_t seed,
                   uint32_t step, bool round, std::vector<double> &out) {
  std::vector<float> eq(e.size()), wq(w.size());
  rt::PhiloxStream noise(seed, kStream, step);
  if (rt::fakeQuantPerTensor(e.data(), eq.data(), e.size(), kErrorBits,
                             rt::Rounding::Stochastic, &noise)
          .failed() ||
      rt::fakeQuantPerChannel(w.data(), wq.data(), {kF, kC}, 0, bits,
                              rt::Rounding::Nearest)
          .failed())
    return false;
  out.assign(kM * kC, 0.0);
  for (int m = 0; m < kM; ++m)
    for (int c = 0; c < kC; ++c) {
      double y = init[m * kC + c];
      for (int f = 0; f < kF; ++f) {
        float a = eq[m * kF + f], b = wq[f * kC + c];
        y += round ? double(bf16(a)) * double(bf16(b)) : double(a) * b;
      }
      out[m * kC + c] = y;
    }
  return true;
}

/// The --fp8 references: init + sum_f R(E s_W)[m, f] Q(W)[f, c] / s_W[f]
/// (`folded`) or init + sum_f R(E)[m, f] Q(W)[f, c] (not), in f64.
bool fp8Reference(const std::vector<float> &e, const std::vector<float> &w,
                  const std::vector<float> &init, int bits, bool folded,
                  std::vector<double> &out) {
  std::vector<rt::QuantGrid> gw;
  std::vector<int64_t> qw;
  if (!weightGrids(w, bits, gw, qw))
    return false;
  std::vector<float> wq(w.size());
  for (int f = 0; f < kF; ++f)
    for (int c = 0; c < kC; ++c)
      wq[f * kC + c] = float(qw[f * kC + c]) * gw[f].scale + gw[f].min;
  std::vector<float> scaled(e), rounded(e.size());
  if (folded)
    for (int m = 0; m < kM; ++m)
      for (int f = 0; f < kF; ++f)
        scaled[m * kF + f] = e[m * kF + f] * gw[f].scale;
  if (rt::roundScaled(scaled.data(), rounded.data(), scaled.size(),
                      rt::FloatFormat{5, 2, 0}, 57344.0f,
                      rt::Overflow::Infinity)
          .failed())
    return false;
  out.assign(kM * kC, 0.0);
  for (int m = 0; m < kM; ++m)
    for (int c = 0; c < kC; ++c) {
      double y = init[m * kC + c];
      for (int f = 0; f < kF; ++f)
        y += double(rounded[m * kF + f]) * double(wq[f * kC + c]) /
             (folded ? double(gw[f].scale) : 1.0);
      out[m * kC + c] = y;
    }
  return true;
}

double maxError(const std::vector<float> &got, const std::vector<double> &ref,
                double &scale) {
  double worst = 0;
  scale = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::fabs(double(got[i]) - ref[i]));
    scale = std::max(scale, std::fabs(ref[i]));
  }
  return worst;
}
} // namespace

int main(int argc, char **argv) {
  std::string mode = argc == 3 ? argv[1] : "";
  bool bf16Mode = mode == "--bf16", fp8Mode = mode == "--fp8";
  if (argc != 2 && !bf16Mode && !fp8Mode) {
    std::fprintf(stderr,
                 "usage: qtrain-input-grad-check [--bf16|--fp8] LIB.so\n");
    return 2;
  }
  void *lib = dlopen(argv[argc - 1], RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "input-grad-check: %s\n", dlerror());
    return 2;
  }
  std::mt19937 gen(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> e(kM * kF), w(kF * kC), init(kM * kC);
  for (float &v : e)
    v = 1e-3f * normal(gen);
  for (float &v : w)
    v = 0.3f * normal(gen) + 0.05f;
  for (float &v : init)
    v = 1e-3f * normal(gen);

  int failures = 0;
  const uint64_t seed = 0x1234abcdULL;
  const uint32_t step = 5;
  for (int bits : {4, 8}) {
    std::string symbol = "input_grad_b" + std::to_string(bits);
    auto variant = reinterpret_cast<Variant>(dlsym(lib, symbol.c_str()));
    if (fp8Mode || bf16Mode) {
      // Near the mode's reference, and away from what skipping its
      // rounding or fold would give.
      std::vector<double> near, away;
      bool refs =
          fp8Mode
              ? fp8Reference(e, w, init, bits, true, near) &&
                    fp8Reference(e, w, init, bits, false, away)
              : bf16Reference(e, w, init, bits, seed, step, true, near) &&
                    bf16Reference(e, w, init, bits, seed, step, false, away);
      if (!variant || !refs) {
        std::printf("input-grad-check: %s missing\n", symbol.c_str());
        ++failures;
        continue;
      }
      std::vector<float> eIn = e, wIn = w, initIn = init, out(kM * kC);
      variant(eIn.data(), wIn.data(), initIn.data(), int64_t(seed),
              int32_t(step), out.data());
      double scale, awayScale;
      double err = maxError(out, near, scale);
      double apart = maxError(out, away, awayScale);
      bool ok = err <= 1e-5 * scale && apart > 1e-4 * awayScale;
      std::printf("input-grad-check: %s max |y - %s| = %.2e, |y - %s| = "
                  "%.2e of max |y| %.2e %s\n",
                  symbol.c_str(), fp8Mode ? "fp8 method" : "bf16 ref", err,
                  fp8Mode ? "unfolded" : "f32 ref", apart, scale,
                  ok ? "ok" : "MISMATCH");
      failures += !ok;
      continue;
    }
    Reference ref;
    if (!variant || !reference(e, w, init, bits, seed, step, ref)) {
      std::printf("input-grad-check: %s missing or no reference\n",
                  symbol.c_str());
      ++failures;
      continue;
    }
    std::vector<float> eIn = e, wIn = w, initIn = init, out(kM * kC);
    variant(eIn.data(), wIn.data(), initIn.data(), int64_t(seed), int32_t(step),
            out.data());
    bool same = std::memcmp(out.data(), ref.exact.data(),
                            out.size() * sizeof(float)) == 0;
    double scale;
    double worst = maxError(out, ref.method, scale);
    bool ok = same && worst <= 1e-5 * scale;
    std::printf("input-grad-check: %s integer reference %s, max |y - "
                "method| = %.2e of max |y| %.2e %s\n",
                symbol.c_str(), same ? "bit-exact" : "DIFFERS", worst, scale,
                ok ? "ok" : "MISMATCH");
    failures += !ok;
  }
  std::printf("input-grad-check: %s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
