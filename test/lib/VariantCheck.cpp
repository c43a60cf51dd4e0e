//===- VariantCheck.cpp - Kernel variants against the reference -*- C++ -*-===//
//
// qtrain-variant-check LIB.so: calls every forward variant
// `train_step_site0_forward_b<B>(x, W, init, out)` of a lowered linear layer
// (W: f32[4x16], x: f32[8x16], init and out: f32[8x4]; bare pointers) and
// compares its output with what the reference predicts at that bitwidth: the
// runtime's quantizer (per channel for W, per tensor for x) and an fp64
// matmul. It also checks that the neighbouring bitwidth's prediction is far
// off, so a variant that ignored its bitwidth would fail.
//
// Variants at 1..16 bits are integer kernels (qtrain-integer-kernels): they
// must equal, bit for bit, the reference integer computation: the
// reference quantizer's grid indices q as centred codes c = q - 2^(b-1),
// exact integer sums T1 = sum cx*cw, T2 = sum cx, T3 = sum cw, T4 = K, and
// the epilogue in f64 in the documented order, rounded once to f32.
//
//===----------------------------------------------------------------------===//

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
constexpr int kM = 8, kN = 4, kK = 16;
using Variant = void (*)(float *, float *, float *, float *);

/// The reference forward product at `bits`: quantized x times quantized W^T
/// in fp64 (0 bits: full precision).
std::vector<double> reference(const std::vector<float> &w,
                              const std::vector<float> &x, int bits) {
  std::vector<float> wq(w.size()), xq(x.size());
  if (rt::fakeQuantPerChannel(w.data(), wq.data(), {kN, kK}, 0, bits,
                              rt::Rounding::Nearest)
          .failed() ||
      rt::fakeQuantPerTensor(x.data(), xq.data(), x.size(), bits,
                             rt::Rounding::Nearest)
          .failed())
    return {};
  std::vector<double> y(kM * kN, 0.0);
  for (int m = 0; m < kM; ++m)
    for (int n = 0; n < kN; ++n)
      for (int k = 0; k < kK; ++k)
        y[m * kN + n] += double(xq[m * kK + k]) * double(wq[n * kK + k]);
  return y;
}

/// The integer kernel's result at `bits`, computed from the reference
/// quantizer's grid indices with exact integer sums.
std::vector<float> integerReference(const std::vector<float> &w,
                                    const std::vector<float> &x, int bits) {
  const int half = 1 << (bits - 1);
  rt::FiniteRange xr = rt::finiteRange(x.data(), x.size());
  rt::QuantGrid xg;
  if (rt::makeQuantGrid(xr.min, xr.max, bits, xg).failed())
    return {};
  std::vector<rt::QuantGrid> wg(kN);
  for (int n = 0; n < kN; ++n) {
    rt::FiniteRange r = rt::finiteRange(&w[n * kK], kK);
    if (rt::makeQuantGrid(r.min, r.max, bits, wg[n]).failed())
      return {};
  }
  std::vector<int64_t> cx(x.size()), cw(w.size());
  for (size_t i = 0; i < x.size(); ++i)
    cx[i] = rt::quantIndexNearest(x[i], xg) - half;
  for (int n = 0; n < kN; ++n)
    for (int k = 0; k < kK; ++k)
      cw[n * kK + k] = rt::quantIndexNearest(w[n * kK + k], wg[n]) - half;
  std::vector<float> y(kM * kN);
  for (int m = 0; m < kM; ++m)
    for (int n = 0; n < kN; ++n) {
      int64_t t1 = 0, t2 = 0, t3 = 0, t4 = kK;
      for (int k = 0; k < kK; ++k) {
        t1 += cx[m * kK + k] * cw[n * kK + k];
        t2 += cx[m * kK + k];
        t3 += cw[n * kK + k];
      }
      double sA = xg.scale, sW = wg[n].scale;
      double lA = double(xg.min) + double(half) * sA;
      double lW = double(wg[n].min) + double(half) * sW;
      double sum = (sA * sW) * double(t1);
      sum = sum + (sA * lW) * double(t2);
      sum = sum + (lA * sW) * double(t3);
      sum = sum + (lA * lW) * double(t4);
      y[m * kN + n] = float(0.0 + sum);
    }
  return y;
}

double maxError(const std::vector<float> &got, const std::vector<double> &ref) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(double(got[i]) - ref[i]));
  return worst;
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: qtrain-variant-check LIB.so\n");
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "variant-check: %s\n", dlerror());
    return 2;
  }
  std::mt19937 gen(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> w(kN * kK), x(kM * kK);
  for (float &v : w)
    v = normal(gen);
  for (float &v : x)
    v = normal(gen);

  int failures = 0;
  for (int bits : {0, 2, 3, 4, 5, 6, 7, 8}) {
    std::string symbol = "train_step_site0_forward_b" + std::to_string(bits);
    auto variant = reinterpret_cast<Variant>(dlsym(lib, symbol.c_str()));
    if (!variant) {
      std::printf("variant-check: %s missing\n", symbol.c_str());
      ++failures;
      continue;
    }
    std::vector<float> wIn = w, xIn = x, init(kM * kN, 0.0f), out(kM * kN);
    variant(xIn.data(), wIn.data(), init.data(), out.data());
    double err = maxError(out, reference(w, x, bits));
    // Against the fp64 product of fake-quantized values: fp32 accumulation
    // (0 bits) or the fp32 rounding of each dequantized value (integer
    // kernels), 16 products of magnitude <= ~16: well below 1e-4.
    bool ok = err <= 1e-4;
    std::printf("variant-check: %-30s max |y - ref(%d)| = %.2e", symbol.c_str(),
                bits, err);
    if (bits >= 1) {
      std::vector<float> exact = integerReference(w, x, bits);
      bool same = exact.size() == out.size() &&
                  std::memcmp(exact.data(), out.data(),
                              out.size() * sizeof(float)) == 0;
      std::printf(", integer reference %s", same ? "bit-exact" : "DIFFERS");
      ok &= same;
    }
    if (bits >= 3) {
      double other = maxError(out, reference(w, x, bits - 1));
      std::printf(", |y - ref(%d)| = %.2e", bits - 1, other);
      ok &= other > 1e-3;
    }
    std::printf(" %s\n", ok ? "ok" : "MISMATCH");
    failures += !ok;
  }
  std::printf("variant-check: %s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
