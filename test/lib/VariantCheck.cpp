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
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Quantize.h"

#include <cmath>
#include <cstdio>
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
    // fp32 accumulation of 16 products of magnitude <= ~16: well below 1e-4.
    bool ok = err <= 1e-4;
    std::printf("variant-check: %-30s max |y - ref(%d)| = %.2e", symbol.c_str(),
                bits, err);
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
