//===- FloatCheck.cpp - Compare lowered float roundings with the reference ===//
//
// qtrain-float-check [--scaled] LIB.so: calls the function `round` (or,
// with --scaled, `round_scaled`, below) of a lowered module
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
// With --scaled: round_scaled(x0..x7, out0..out7) with out_i =
// qtrain.round_float x_i to <5, 2, 0> scaled(57344.0), x_i of
// kScaledSizes[i] elements, compared bit for bit with rt::roundScaled. The
// tensors: random magnitudes at several ranges, a maximum exactly at
// 57344 * 2^k and one just above it (k + 1), zeros, +inf, NaN, maxima beyond
// both ends of the clamp of k, and a size that is not a multiple of the
// reduction's partial accumulators.
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

constexpr int kScaled = 8;
const int64_t kScaledSizes[kScaled] = {4096, 4096, 4096, 4096,
                                       4096, 4096, 4096, 1073};
using ScaledFn = void (*)(float *, float *, float *, float *, float *, float *,
                          float *, float *, float *, float *, float *, float *,
                          float *, float *, float *, float *);

/// Random values of magnitude in [2^lo, 2^hi), either sign.
std::vector<float> randomValues(int64_t count, int lo, int hi, uint64_t seed) {
  std::vector<float> v;
  uint64_t state = seed;
  while (int64_t(v.size()) < count) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    int exponent = lo + int((z >> 32) % uint64_t(hi - lo));
    float mantissa = 1.0f + float(z & 0xFFFFFF) / float(1 << 24);
    v.push_back(((z >> 31) & 1 ? -1.0f : 1.0f) *
                std::ldexp(mantissa, exponent));
  }
  return v;
}

int checkScaled(void *lib) {
  auto round = reinterpret_cast<ScaledFn>(dlsym(lib, "round_scaled"));
  if (!round) {
    std::fprintf(stderr, "float-check: no symbol 'round_scaled'\n");
    return 2;
  }
  const float m = 57344.0f;
  std::vector<std::vector<float>> x(kScaled), out(kScaled);
  // Spreads wider than e5m2's 32 binades: the scale decides which of the
  // smallest elements become subnormals or zero.
  x[0] = randomValues(kScaledSizes[0], -60, -10, 1); // small gradients
  x[1] = randomValues(kScaledSizes[1], -60, -20, 2);
  x[1][17] = std::ldexp(m, -35); // the maximum exactly at M * 2^k
  x[2] = x[1];
  x[2][17] = std::nextafter(std::ldexp(m, -35), INFINITY); // just above
  x[3].assign(kScaledSizes[3], 0.0f);
  x[3][5] = -0.0f;
  x[4] = randomValues(kScaledSizes[4], -40, 5, 4);
  x[4][100] = INFINITY;
  x[5] = randomValues(kScaledSizes[5], -40, 5, 5);
  x[5][200] = NAN;
  x[6] = randomValues(kScaledSizes[6], 100, 126, 6);   // k clamped to 100
  x[6].back() = std::ldexp(1.0f, -120);                // far below the grid
  x[7] = randomValues(kScaledSizes[7], -126, -118, 7); // k clamped to -100
  for (int i = 0; i < kScaled; ++i)
    out[i].assign(kScaledSizes[i], 0.0f);
  round(x[0].data(), x[1].data(), x[2].data(), x[3].data(), x[4].data(),
        x[5].data(), x[6].data(), x[7].data(), out[0].data(), out[1].data(),
        out[2].data(), out[3].data(), out[4].data(), out[5].data(),
        out[6].data(), out[7].data());
  long compared = 0, mismatches = 0;
  for (int i = 0; i < kScaled; ++i) {
    std::vector<float> want(kScaledSizes[i]);
    if (rt::roundScaled(x[i].data(), want.data(), want.size(), {5, 2, 0}, m,
                        rt::Overflow::Infinity)
            .failed())
      return 2;
    for (size_t j = 0; j < want.size(); ++j) {
      ++compared;
      bool same = std::isnan(want[j]) ? std::isnan(out[i][j])
                                      : toBits(out[i][j]) == toBits(want[j]);
      if (!same && ++mismatches <= 10)
        std::printf("float-check: mismatch tensor %d element %zu input %a: "
                    "got %a, want %a\n",
                    i, j, x[i][j], out[i][j], want[j]);
    }
  }
  std::printf("float-check: %ld scaled values compared, %ld mismatches\n",
              compared, mismatches);
  return mismatches ? 1 : 0;
}
} // namespace

int main(int argc, char **argv) {
  bool scaled = argc == 3 && std::strcmp(argv[1], "--scaled") == 0;
  if (argc != 2 && !scaled) {
    std::fprintf(stderr, "usage: qtrain-float-check [--scaled] LIB.so\n");
    return 2;
  }
  void *lib = dlopen(argv[argc - 1], RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "float-check: %s\n", dlerror());
    return 2;
  }
  if (scaled)
    return checkScaled(lib);
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
