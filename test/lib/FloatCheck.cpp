//===- FloatCheck.cpp - Compare lowered float roundings with the reference ===//
//
// qtrain-float-check LIB.so: calls the function `round` of a lowered module
// (bare-pointer memrefs, results as out-parameters) with the signature
//
//   round(x: f32[65536], out0..out7: f32[65536])
//
// where out_i = qtrain.round_float x to kFormats[i], and compares every
// output bit for bit with qtrain::rt::roundToFormat
// (runtime/include/qtrain/runtime/FloatFormat.h). The inputs are, for every
// sign and exponent field, the significands at and next to every rounding
// boundary of every mantissa width (ties, half-ulps, carries into the next
// binade), each format's thresholds and their neighbours, NaNs, infinities,
// zeros, f32 subnormals, and random bit patterns.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/FloatFormat.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <vector>

namespace rt = qtrain::rt;

namespace {
constexpr int64_t kCount = 65536;
constexpr int kOutputs = 8;
using RoundFn = void (*)(float *, float *, float *, float *, float *, float *,
                         float *, float *, float *);

/// The formats of the `round` function, in its result order.
struct Case {
  rt::FloatFormat format;
  rt::Overflow overflow;
};
const Case kFormats[kOutputs] = {
    {{6, 9, 0}, rt::Overflow::Infinity},  // the paper's high format
    {{4, 3, 4}, rt::Overflow::Saturate},  // P and Y low
    {{5, 2, 0}, rt::Overflow::Infinity},  // GY low
    {{8, 7, 0}, rt::Overflow::Infinity},  // bf16
    {{7, 23, 0}, rt::Overflow::Saturate}, // 23 mantissa bits, narrower range
    {{2, 1, -1}, rt::Overflow::Saturate}, // tiny: no subnormal exponent gap
    {{8, 23, 0}, rt::Overflow::Saturate}, // f32 that saturates inf
    {{3, 0, 0}, rt::Overflow::Saturate},  // no mantissa: ties go up
};

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t toBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

std::vector<float> makeInputs() {
  std::vector<float> in;
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t field = 0; field < 256; ++field)
      for (int shift = 0; shift <= 23; ++shift) {
        uint32_t half = shift ? 1u << (shift - 1) : 0;
        uint32_t ulp = 1u << shift;
        for (uint32_t mant :
             {0u, half - 1, half, half + 1, ulp + half, ulp + half - 1,
              0x7FFFFFu, 0x7FFFFFu - half, 0x7FFFFFu - half + 1})
          in.push_back(fromBits(sign | (field << 23) | (mant & 0x7FFFFFu)));
      }
  for (const Case &c : kFormats) {
    for (double v :
         {c.format.maxFinite(), c.format.overflowThreshold(),
          c.format.minNormal(), c.format.minSubnormal(),
          c.format.underflowThreshold(), 1.5 * c.format.minSubnormal(),
          3 * c.format.underflowThreshold()}) {
      float f = float(v);
      for (float g : {f, std::nextafter(f, 0.0f), std::nextafter(f, INFINITY)})
        in.push_back(g), in.push_back(-g);
    }
  }
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN,
                  fromBits(0x7FC01234u), fromBits(0xFF812345u)})
    in.push_back(v);
  // splitmix64 for the rest: random bit patterns.
  uint64_t state = 0x5EED;
  while (in.size() < size_t(kCount)) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    in.push_back(fromBits(uint32_t(z)));
    if (in.size() < size_t(kCount))
      in.push_back(fromBits(uint32_t(z >> 32)));
  }
  in.resize(kCount);
  return in;
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: qtrain-float-check LIB.so\n");
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "float-check: %s\n", dlerror());
    return 2;
  }
  auto round = reinterpret_cast<RoundFn>(dlsym(lib, "round"));
  if (!round) {
    std::fprintf(stderr, "float-check: no symbol 'round'\n");
    return 2;
  }
  std::vector<float> x = makeInputs();
  std::vector<std::vector<float>> out(kOutputs,
                                      std::vector<float>(kCount, 0.0f));
  round(x.data(), out[0].data(), out[1].data(), out[2].data(), out[3].data(),
        out[4].data(), out[5].data(), out[6].data(), out[7].data());
  long compared = 0, mismatches = 0;
  for (int o = 0; o < kOutputs; ++o)
    for (int64_t i = 0; i < kCount; ++i) {
      float want =
          rt::roundToFormat(x[i], kFormats[o].format, kFormats[o].overflow);
      float got = out[o][i];
      ++compared;
      bool same = std::isnan(want) ? toBits(got) == toBits(x[i])
                                   : toBits(got) == toBits(want);
      if (!same && ++mismatches <= 10)
        std::printf("float-check: mismatch %s input %a (0x%08x): got %a "
                    "(0x%08x), want %a\n",
                    kFormats[o].format.toString().c_str(), x[i], toBits(x[i]),
                    got, toBits(got), want);
    }
  std::printf("float-check: %ld values compared, %ld mismatches\n", compared,
              mismatches);
  return mismatches ? 1 : 0;
}
