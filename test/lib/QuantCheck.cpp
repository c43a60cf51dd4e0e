//===- QuantCheck.cpp - Compare lowered quantizers with the reference -----===//
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
// qtrain-quant-check --ema STEPS LIB.so: calls the function `ema` with
//
//   ema(x: f32[64x33], state: f32[2], bits: i32,
//       new_state: f32[2], eval: f32[64x33], codes: i8[64x33], scale: f32,
//       low: f32)
//   new_state = qtrain.range_ema of x into state
//   eval      = x quantized per tensor (nearest) with the running range in
//               state, as the evaluation step does
//   codes, scale, low = qtrain.quantize of x at 8 bits with that range, as
//               the evaluation step's integer kernels do
//
// over STEPS random batches (drifting scale and offset, some NaN/inf, some
// batches without a finite element), feeding new_state back as the next
// state, and compares the state and eval after every step bit for bit with
// rt::RangeEma (update and fakeQuant) run alongside.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Philox.h"
#include "qtrain/runtime/Quantize.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
constexpr int64_t kEmaRows = 64, kEmaCols = 33, kEmaCount = kEmaRows * kEmaCols;
using EmaFn = void (*)(float *, float *, int32_t, float *, float *, int8_t *,
                       float *, float *);

/// Batch `step` of the EMA run: a normal batch whose offset and spread
/// drift over the run (so the running range lags the batch's), with
/// special values now and then.
std::vector<float> makeBatch(long step, std::mt19937 &gen) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  float offset = 3.0f * std::sin(float(step) / 37.0f) + normal(gen);
  float spread = std::exp(normal(gen)) * (1.0f + float(step % 50) / 10.0f);
  std::vector<float> x(kEmaCount);
  for (float &v : x)
    v = offset + spread * normal(gen);
  if (step % 7 == 3)
    x[size_t(step) % kEmaCount] = NAN;
  if (step % 11 == 5)
    x[size_t(step * 13) % kEmaCount] = INFINITY;
  if (step % 97 == 50)
    for (float &v : x)
      v = uniform(gen) < 0.5f ? NAN : -INFINITY; // no finite element
  return x;
}

int checkEma(long steps, const char *path) {
  void *lib = dlopen(path, RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "quant-check: %s\n", dlerror());
    return 2;
  }
  auto ema = reinterpret_cast<EmaFn>(dlsym(lib, "ema"));
  if (!ema) {
    std::fprintf(stderr, "quant-check: no symbol 'ema'\n");
    return 2;
  }
  std::mt19937 gen(11);
  rt::RangeEma reference;
  float state[2] = {0.0f, 0.0f};
  long compared = 0, mismatches = 0, firstBad = -1;
  for (long step = 0; step < steps; ++step) {
    std::vector<float> x = makeBatch(step, gen);
    int bits = int(step % 17);
    std::vector<float> eval(kEmaCount, -1.0f), refEval(kEmaCount, -2.0f);
    float updated[2] = {-1.0f, -1.0f};
    std::vector<int8_t> codes(kEmaCount, 99);
    float scale = -1.0f, low = -1.0f;
    std::vector<float> in = x;
    ema(in.data(), state, bits, updated, eval.data(), codes.data(), &scale,
        &low);
    rt::QuantGrid grid;
    if (reference
            .fakeQuant(x.data(), refEval.data(), kEmaCount, bits,
                       rt::Rounding::Nearest)
            .failed() ||
        reference.grid(8, grid).failed()) {
      std::fprintf(stderr, "quant-check: the reference refused step %ld\n",
                   step);
      return 2;
    }
    // qtrain.quantize: code q - 128 (0 for NaN), and a NaN poisons low.
    bool anyNan = false;
    for (float v : x)
      anyNan |= std::isnan(v);
    float refLow = anyNan ? NAN : grid.min;
    float gridValues[2] = {scale, low}, refGrid[2] = {grid.scale, refLow};
    bool bad = false;
    for (int k = 0; k < 2; ++k, ++compared)
      if (!sameBits(gridValues[k], refGrid[k])) {
        bad = true;
        if (mismatches++ < 10)
          std::printf("quant-check: step %ld 8-bit grid %s: lowered %a, "
                      "reference %a\n",
                      step, k ? "low" : "scale", gridValues[k], refGrid[k]);
      }
    for (int64_t i = 0; i < kEmaCount; ++i, ++compared) {
      int expected =
          std::isnan(x[i]) ? 0 : rt::quantIndexNearest(x[i], grid) - 128;
      if (codes[i] != expected) {
        bad = true;
        if (mismatches++ < 10)
          std::printf("quant-check: step %ld code %lld input %a: lowered %d, "
                      "reference %d\n",
                      step, (long long)i, x[i], int(codes[i]), expected);
      }
    }
    reference.update(x.data(), kEmaCount);
    float expected[2] = {reference.getMin(), reference.getRange()};
    for (int k = 0; k < 2; ++k, ++compared)
      if (!sameBits(updated[k], expected[k])) {
        bad = true;
        if (mismatches++ < 10)
          std::printf("quant-check: step %ld state[%d]: lowered %a, "
                      "reference %a\n",
                      step, k, updated[k], expected[k]);
      }
    for (int64_t i = 0; i < kEmaCount; ++i, ++compared)
      if (!sameBits(eval[i], refEval[i])) {
        bad = true;
        if (mismatches++ < 10)
          std::printf("quant-check: step %ld bits %d eval element %lld input "
                      "%a: lowered %a, reference %a\n",
                      step, bits, (long long)i, x[i], eval[i], refEval[i]);
      }
    if (bad && firstBad < 0)
      firstBad = step;
    state[0] = updated[0];
    state[1] = updated[1];
  }
  std::printf("quant-check: ema: %ld steps, %ld values compared, %ld "
              "mismatches",
              steps, compared, mismatches);
  if (firstBad >= 0)
    std::printf(" (first at step %ld)", firstBad);
  std::printf("\n");
  return mismatches ? 1 : 0;
}
} // namespace

int main(int argc, char **argv) {
  if (argc == 4 && std::strcmp(argv[1], "--ema") == 0) {
    char *end = nullptr;
    long steps = std::strtol(argv[2], &end, 10);
    if (!*argv[2] || *end || steps <= 0) {
      std::fprintf(stderr,
                   "quant-check: --ema needs a positive step count, "
                   "got '%s'\n",
                   argv[2]);
      return 2;
    }
    return checkEma(steps, argv[3]);
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: qtrain-quant-check LIB.so\n"
                         "       qtrain-quant-check --ema STEPS LIB.so\n");
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
