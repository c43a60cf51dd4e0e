//===- Reference.cpp - CPU references of the GPU GEMM kernels ------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

using namespace qtrain::cudacheck;
using qtrain::rt::CudaKernelSpec;

namespace {

/// SplitMix64: a fixed, portable stream (the standard distributions are
/// not the same on every standard library).
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1), exactly an f32 (24 random bits).
  float uniform() {
    return float(int64_t(next() >> 40) - (1 << 23)) * 0x1p-23f;
  }
};

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// An fp8 code drawn uniformly from the finite ones.
uint8_t finiteFp8(SplitMix64 &rng, bool e4m3) {
  for (;;) {
    uint8_t code = uint8_t(rng.next() >> 56);
    // E4M3FN: S.1111.111 is NaN, there is no infinity. E5M2: exponent
    // 11111 is infinity or NaN.
    if (e4m3 ? (code & 0x7f) != 0x7f : (code & 0x7c) != 0x7c)
      return code;
  }
}

/// Fills one operand of `count` elements in `encoding`.
void fillOperand(const std::string &encoding, bool tf32, bool isA, size_t count,
                 SplitMix64 &rng, std::vector<uint8_t> &bytes,
                 std::vector<double> &values) {
  size_t width = encodingBytes(encoding);
  bytes.resize(count * width);
  values.resize(count);
  for (size_t i = 0; i < count; ++i) {
    uint8_t *at = bytes.data() + i * width;
    if (encoding == "f32") {
      float f = rng.uniform();
      std::memcpy(at, &f, 4);
      values[i] = tf32 ? double(roundToTf32(f)) : double(f);
    } else if (encoding == "bf16") {
      uint16_t h = toBf16Bits(rng.uniform());
      at[0] = uint8_t(h), at[1] = uint8_t(h >> 8);
      values[i] = decodeElement(encoding, at);
    } else if (encoding == "e4m3" || encoding == "e5m2") {
      at[0] = finiteFp8(rng, encoding == "e4m3");
      values[i] = decodeElement(encoding, at);
    } else {
      // A in [-128, 127], B in [-127, 127].
      int64_t span = isA ? 256 : 255;
      int code =
          int(int64_t((rng.next() >> 32) % uint64_t(span)) - (isA ? 128 : 127));
      at[0] = uint8_t(int8_t(code));
      values[i] = double(code);
    }
  }
}

/// Element `index` of C as a double (f32 or s32).
double readC(const std::string &encoding, const std::vector<uint8_t> &c,
             size_t index) {
  if (encoding == "s32") {
    int32_t v;
    std::memcpy(&v, c.data() + 4 * index, 4);
    return double(v);
  }
  float f;
  std::memcpy(&f, c.data() + 4 * index, 4);
  return double(f);
}

} // namespace

size_t qtrain::cudacheck::encodingBytes(const std::string &encoding) {
  if (encoding == "f32" || encoding == "s32")
    return 4;
  if (encoding == "bf16")
    return 2;
  return 1;
}

double qtrain::cudacheck::decodeElement(const std::string &encoding,
                                        const uint8_t *bytes) {
  if (encoding == "f32") {
    float f;
    std::memcpy(&f, bytes, 4);
    return double(f);
  }
  if (encoding == "bf16")
    return double(bitsFloat(uint32_t(bytes[0] | bytes[1] << 8) << 16));
  if (encoding == "s8")
    return double(int8_t(bytes[0]));
  uint8_t code = bytes[0];
  double sign = code & 0x80 ? -1.0 : 1.0;
  if (encoding == "e4m3") {
    // OCP E4M3FN: bias 7, subnormals m * 2^-9, 0x7f/0xff NaN, no infinity.
    int e = (code >> 3) & 0xf, m = code & 7;
    if (e == 15 && m == 7)
      return std::nan("");
    if (e == 0)
      return sign * std::ldexp(double(m), -9);
    return sign * std::ldexp(1.0 + m / 8.0, e - 7);
  }
  // E5M2: bias 15, subnormals m * 2^-16, exponent 31 infinity/NaN.
  int e = (code >> 2) & 0x1f, m = code & 3;
  if (e == 31)
    return m == 0 ? sign * HUGE_VAL : std::nan("");
  if (e == 0)
    return sign * std::ldexp(double(m), -16);
  return sign * std::ldexp(1.0 + m / 4.0, e - 15);
}

float qtrain::cudacheck::roundToTf32(float value) {
  if (!std::isfinite(value))
    return value;
  // Sign and magnitude: adding half an ulp of the 10-bit mantissa to the
  // magnitude's bits and truncating rounds ties away from zero.
  uint32_t u = floatBits(value);
  u = (u + 0x1000u) & 0xffffe000u;
  return bitsFloat(u);
}

uint16_t qtrain::cudacheck::toBf16Bits(float value) {
  uint32_t u = floatBits(value);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

Operands qtrain::cudacheck::makeOperands(const CudaKernelSpec &kernel,
                                         uint64_t seed) {
  Operands o;
  bool tf32 = kernel.kind == "tf32";
  // One stream per operand, from the seed and the kernel's name: a
  // kernel's operands do not depend on which others are checked.
  uint64_t name = 1469598103934665603ull;
  for (char ch : kernel.name)
    name = (name ^ uint8_t(ch)) * 1099511628211ull;
  SplitMix64 ra{seed * 0x100000001b3ull ^ name};
  SplitMix64 rb{(seed + 1) * 0x100000001b3ull ^ name ^ 0x5bd1e995ull};
  fillOperand(kernel.a, tf32, true, size_t(kernel.batch * kernel.m * kernel.k),
              ra, o.a, o.aValues);
  fillOperand(kernel.b, tf32, false, size_t(kernel.batch * kernel.n * kernel.k),
              rb, o.b, o.bValues);
  return o;
}

Comparison qtrain::cudacheck::compareWithReference(
    const CudaKernelSpec &kernel, const Operands &operands,
    const std::vector<uint8_t> &c, const Tolerance &tolerance, int64_t maxMacs,
    unsigned threads) {
  const int64_t m = kernel.m, n = kernel.n, k = kernel.k;
  Comparison result;
  result.exact = kernel.kind == "i8";
  result.rows = kernel.batch * m;
  // Every row when it is cheap enough, else an evenly spread sample that
  // includes the first and last rows.
  std::vector<int64_t> rows;
  int64_t macsPerRow = n * k;
  int64_t wanted =
      std::max<int64_t>(1, maxMacs / std::max<int64_t>(1, macsPerRow));
  if (wanted >= result.rows) {
    for (int64_t r = 0; r < result.rows; ++r)
      rows.push_back(r);
  } else {
    for (int64_t s = 0; s < wanted; ++s)
      rows.push_back(wanted == 1 ? 0 : s * (result.rows - 1) / (wanted - 1));
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  }
  result.rowsChecked = int64_t(rows.size());

  const double u = 0x1p-23;
  double relative = double(k) * u + tolerance.extraRelative;
  double absolute = 0;
  if (kernel.kind == "f32" || kernel.kind == "tf32")
    absolute = double(k) * 0x1p-126;
  if (kernel.kind == "fp8")
    relative += 0x1p-10;

  std::mutex lock;
  auto work = [&](unsigned part) {
    Comparison local;
    for (size_t r = part; r < rows.size(); r += threads) {
      int64_t row = rows[r], b = row / m, i = row % m;
      const double *a = operands.aValues.data() + row * k;
      for (int64_t j = 0; j < n; ++j) {
        const double *bv = operands.bValues.data() + (b * n + j) * k;
        size_t index = size_t(row * n + j);
        double got = readC(kernel.c, c, index);
        bool bad;
        double ratio = 0, exact, bound = 0;
        if (result.exact) {
          int64_t sum = 0;
          for (int64_t t = 0; t < k; ++t)
            sum += int64_t(a[t]) * int64_t(bv[t]);
          exact = double(sum);
          bad = got != exact;
        } else {
          // Products of these encodings are exact in double; the sum's
          // own error (k 2^-53 S) is far below every bound.
          double sum = 0, sumAbs = 0;
          for (int64_t t = 0; t < k; ++t) {
            double p = a[t] * bv[t];
            sum += p;
            sumAbs += std::fabs(p);
          }
          exact = sum;
          bound = relative * sumAbs + absolute;
          double err = std::fabs(got - exact);
          bad = !std::isfinite(got) || err > bound;
          ratio = bound > 0 ? err / bound : (err == 0 ? 0 : HUGE_VAL);
          if (!std::isfinite(got))
            ratio = HUGE_VAL;
        }
        local.worstRatio = std::max(local.worstRatio, ratio);
        if (bad) {
          ++local.failures;
          if (local.firstFailure.empty()) {
            char text[256];
            int used = std::snprintf(
                text, sizeof(text), "C[%lld, %lld, %lld] = %.9g, exact %.9g",
                (long long)b, (long long)i, (long long)j, got, exact);
            if (!result.exact && used > 0 && size_t(used) < sizeof(text))
              std::snprintf(text + used, sizeof(text) - size_t(used),
                            ", bound %.3g", bound);
            local.firstFailure = text;
          }
        }
      }
    }
    std::lock_guard<std::mutex> guard(lock);
    result.worstRatio = std::max(result.worstRatio, local.worstRatio);
    result.failures += local.failures;
    if (result.firstFailure.empty())
      result.firstFailure = local.firstFailure;
  };
  threads = std::max(1u, std::min<unsigned>(threads, unsigned(rows.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work, t);
  work(0);
  for (std::thread &t : pool)
    t.join();
  result.passed = result.failures == 0;
  return result;
}
