//===- QuantCheck.cpp - Compare lowered quantizers with the reference -*- C++
//-*-===//
//
// qtrain-quant-check LIB.so: calls the function `quant` of a lowered module
// (bare-pointer memrefs, results as out-parameters) with the signature
//
//   quant(x: f32[37x53], bits: i32, seed: i64, step: i32,
//         out0..out3: f32[37x53])
//   out0 = per channel (axis 0), nearest     out1 = per tensor, nearest
//   out2 = per tensor, stochastic, stream 5  out3 = per channel (axis 1),
//                                              stochastic, stream 9
//
// on inputs with normal values, NaN, +-inf, constant rows and huge ranges,
// for every bitwidth 0..16 and several seeds and steps, and compares every
// output bit for bit with runtime/include/qtrain/runtime/Quantize.h.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Philox.h"
#include "qtrain/runtime/Quantize.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <random>
#include <vector>

namespace rt = qtrain::rt;

namespace {
constexpr int64_t kRows = 37, kCols = 53, kCount = kRows * kCols;
using QuantFn = void (*)(float *, int32_t, int64_t, int32_t, float *, float *,
                         float *, float *);

bool sameBits(float a, float b) {
  if (std::isnan(a) && std::isnan(b))
    return true;
  uint32_t ua, ub;
  std::memcpy(&ua, &a, 4);
  std::memcpy(&ub, &b, 4);
  return ua == ub;
}

/// Input cases: plain normal data, special values sprinkled in, a constant
/// row and a row spanning more than FLT_MAX.
std::vector<float> makeInput(int variant, std::mt19937 &gen) {
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> x(kCount);
  for (float &v : x)
    v = normal(gen);
  if (variant >= 1) {
    x[3] = NAN;
    x[kCols + 7] = INFINITY;
    x[2 * kCols + 1] = -INFINITY;
    for (int64_t c = 0; c < kCols; ++c)
      x[5 * kCols + c] = 1.25f; // constant row
    x[6 * kCols] = 3.0e38f;     // huge range in row 6
    x[6 * kCols + 1] = -3.0e38f;
  }
  if (variant >= 2)
    for (int64_t c = 0; c < kCols; ++c)
      x[8 * kCols + c] = NAN; // a row with no finite element
  return x;
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: qtrain-quant-check LIB.so\n");
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "quant-check: %s\n", dlerror());
    return 2;
  }
  auto quant = reinterpret_cast<QuantFn>(dlsym(lib, "quant"));
  if (!quant) {
    std::fprintf(stderr, "quant-check: no symbol 'quant'\n");
    return 2;
  }
  std::mt19937 gen(7);
  std::vector<int64_t> shape = {kRows, kCols};
  long compared = 0, mismatches = 0;
  for (int variant = 0; variant < 3; ++variant) {
    std::vector<float> x = makeInput(variant, gen);
    for (int bits = 0; bits <= 16; ++bits) {
      for (auto [seed, step] :
           {std::pair<uint64_t, uint32_t>{1, 0}, {0x123456789abcdefULL, 77}}) {
        std::vector<float> out[4], ref[4];
        for (int k = 0; k < 4; ++k) {
          out[k].assign(kCount, -1.0f);
          ref[k].assign(kCount, -2.0f);
        }
        std::vector<float> in = x;
        quant(in.data(), bits, int64_t(seed), int32_t(step), out[0].data(),
              out[1].data(), out[2].data(), out[3].data());
        rt::PhiloxStream s5(seed, 5, step), s9(seed, 9, step);
        bool ok = rt::fakeQuantPerChannel(x.data(), ref[0].data(), shape, 0,
                                          bits, rt::Rounding::Nearest)
                      .isOk() &&
                  rt::fakeQuantPerTensor(x.data(), ref[1].data(), kCount, bits,
                                         rt::Rounding::Nearest)
                      .isOk() &&
                  rt::fakeQuantPerTensor(x.data(), ref[2].data(), kCount, bits,
                                         rt::Rounding::Stochastic, &s5)
                      .isOk() &&
                  rt::fakeQuantPerChannel(x.data(), ref[3].data(), shape, 1,
                                          bits, rt::Rounding::Stochastic, &s9)
                      .isOk();
        if (!ok) {
          std::fprintf(stderr, "quant-check: the reference refused bits %d\n",
                       bits);
          return 2;
        }
        for (int k = 0; k < 4; ++k)
          for (int64_t i = 0; i < kCount; ++i, ++compared)
            if (!sameBits(out[k][i], ref[k][i]) && mismatches++ < 10)
              std::printf("quant-check: mismatch output %d element %lld bits "
                          "%d input %a: lowered %a, reference %a\n",
                          k, (long long)i, bits, x[i], out[k][i], ref[k][i]);
      }
    }
  }
  std::printf("quant-check: %ld values compared, %ld mismatches\n", compared,
              mismatches);
  return mismatches ? 1 : 0;
}
