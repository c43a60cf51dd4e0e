//===- MicrokernelsTests.cpp - The CPU GEMM microkernels ------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Every kernel of microkernels.h against a plain reference over awkward shapes
/// (edges of every tile and block), operand layouts (row/column major,
/// offset subviews, strided C) and accumulation into a non-zero C: the
/// integer kernels bit for bit, f32/bf16 within their stated bounds; the
/// integer kernels at their overflow-free accumulation length with extreme
/// codes. lit runs this binary twice: as it is (AVX-512 here) and with
/// QTRAIN_MICROKERNELS=portable (test/Microkernels/portable.test).
///
//===----------------------------------------------------------------------===//

#include "qtrain/microkernels.h"

#include "LibraryConv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

namespace {

struct Shape {
  int64_t M, N, K;
};
// Tiles are 12 x 32 (K groups of 1, 2, 4); K blocks 512/512/1024; M blocks
// 240. Shapes straddle each.
const Shape kShapes[] = {{1, 1, 1},      {12, 32, 4},    {13, 33, 5},
                         {7, 100, 3},    {250, 70, 129}, {37, 65, 1030},
                         {241, 31, 513}, {3, 2, 2049},   {300, 6, 70},
                         {18, 64, 33}}; // a 6-row tail: the half-height tile

/// A matrix stored with a leading dimension larger than its width, at an
/// offset, row or column major: exercises every stride and offset argument.
template <class T>
struct Strided {
  std::vector<T> storage;
  int64_t offset, s0, s1;
  Strided(int64_t rows, int64_t cols, bool columnMajor) {
    offset = 3;
    int64_t ld = (columnMajor ? rows : cols) + 5;
    s0 = columnMajor ? 1 : ld;
    s1 = columnMajor ? ld : 1;
    storage.assign(size_t(offset + ld * (columnMajor ? cols : rows) + 8), T());
  }
  T &at(int64_t i, int64_t j) {
    return storage[size_t(offset + i * s0 + j * s1)];
  }
};

template <class T, class Gen>
Strided<T> filled(int64_t rows, int64_t cols, bool columnMajor, Gen gen) {
  Strided<T> m(rows, cols, columnMajor);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      m.at(i, j) = gen();
  return m;
}

float roundBF16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  bits &= 0xffff0000u;
  std::memcpy(&x, &bits, 4);
  return x;
}

TEST(Microkernels, IsaMatchesEnvironment) {
  const char *forced = std::getenv("QTRAIN_MICROKERNELS");
  if (forced && std::strcmp(forced, "portable") == 0)
    EXPECT_STREQ(qtrain_mk_isa(), "portable");
  else
    SUCCEED() << "isa: " << qtrain_mk_isa();
}

// f32 and bf16: within K * 2^-p * sum |a||b| of an fp64 product of the
// (bf16-rounded) operands, plus the initial C.
void checkFloat(bool bf16) {
  std::mt19937 gen(7);
  std::normal_distribution<float> normal;
  for (const Shape &s : kShapes)
    for (int layout = 0; layout < 4; ++layout) {
      auto a = filled<float>(s.M, s.K, layout & 1, [&] { return normal(gen); });
      auto b = filled<float>(s.K, s.N, layout & 2, [&] { return normal(gen); });
      auto c = filled<float>(s.M, s.N, false, [&] { return normal(gen); });
      auto c0 = c;
      (bf16 ? qtrain_mk_gemm_bf16
            : qtrain_mk_gemm_f32)(s.M, s.N, s.K, a.storage.data(), a.offset,
                                  a.s0, a.s1, b.storage.data(), b.offset, b.s0,
                                  b.s1, c.storage.data(), c.offset, c.s0, c.s1);
      for (int64_t i = 0; i < s.M; ++i)
        for (int64_t j = 0; j < s.N; ++j) {
          double exact = c0.at(i, j), magnitude = std::fabs(exact);
          for (int64_t k = 0; k < s.K; ++k) {
            double x = a.at(i, k), y = b.at(k, j);
            if (bf16) {
              x = roundBF16(float(x));
              y = roundBF16(float(y));
            }
            exact += x * y;
            magnitude += std::fabs(x * y);
          }
          double bound = double(s.K + 2) * std::ldexp(1.0, -23) * magnitude;
          ASSERT_NEAR(c.at(i, j), exact, bound)
              << s.M << "x" << s.N << "x" << s.K << " layout " << layout
              << " at " << i << "," << j;
        }
      // Nothing outside C was written.
      for (size_t e = 0; e < size_t(c.offset); ++e)
        ASSERT_EQ(c.storage[e], c0.storage[e]);
    }
}

TEST(Microkernels, F32MatchesReference) { checkFloat(false); }
TEST(Microkernels, BF16MatchesReference) { checkFloat(true); }

/// One integer GEMM C += A * B on strided operands.
using IntegerGemm = std::function<void(const Shape &, Strided<int8_t> &,
                                       Strided<int8_t> &, Strided<int32_t> &)>;

/// An integer kernel is exact, for codes of `aBits` x `bBits` bits, over
/// every shape and layout.
void checkInteger(int aBits, int bBits, const IntegerGemm &run) {
  std::mt19937 gen(11);
  std::uniform_int_distribution<int> aCode(-(1 << (aBits - 1)),
                                           (1 << (aBits - 1)) - 1);
  std::uniform_int_distribution<int> bCode(-(1 << (bBits - 1)),
                                           (1 << (bBits - 1)) - 1);
  std::uniform_int_distribution<int32_t> init(-1000000, 1000000);
  for (const Shape &s : kShapes)
    for (int layout = 0; layout < 4; ++layout) {
      auto a = filled<int8_t>(s.M, s.K, layout & 1,
                              [&] { return int8_t(aCode(gen)); });
      auto b = filled<int8_t>(s.K, s.N, layout & 2,
                              [&] { return int8_t(bCode(gen)); });
      auto c = filled<int32_t>(s.M, s.N, false, [&] { return init(gen); });
      auto c0 = c;
      run(s, a, b, c);
      for (int64_t i = 0; i < s.M; ++i)
        for (int64_t j = 0; j < s.N; ++j) {
          int64_t exact = c0.at(i, j);
          for (int64_t k = 0; k < s.K; ++k)
            exact += int64_t(a.at(i, k)) * b.at(k, j);
          ASSERT_EQ(c.at(i, j), exact)
              << aBits << "x" << bBits << " bits, " << s.M << "x" << s.N << "x"
              << s.K << " layout " << layout << " at " << i << "," << j;
        }
    }
}

void s8Gemm(const Shape &s, Strided<int8_t> &a, Strided<int8_t> &b,
            Strided<int32_t> &c) {
  qtrain_mk_gemm_s8s8s32(s.M, s.N, s.K, a.storage.data(), a.offset, a.s0, a.s1,
                         b.storage.data(), b.offset, b.s0, b.s1,
                         c.storage.data(), c.offset, c.s0, c.s1);
}

IntegerGemm bitSerialGemm(int aBits, int bBits) {
  return [=](const Shape &s, Strided<int8_t> &a, Strided<int8_t> &b,
             Strided<int32_t> &c) {
    qtrain_mk_gemm_bitserial(s.M, s.N, s.K, a.storage.data(), a.offset, a.s0,
                             a.s1, b.storage.data(), b.offset, b.s0, b.s1,
                             c.storage.data(), c.offset, c.s0, c.s1, aBits,
                             bBits);
  };
}

/// B packed once at `bits` (8 or 4), then multiplied.
IntegerGemm packedGemm(int bits) {
  return [=](const Shape &s, Strided<int8_t> &a, Strided<int8_t> &b,
             Strided<int32_t> &c) {
    int64_t bytes = qtrain_mk_packed_b_bytes(s.N, s.K, bits);
    ASSERT_GT(bytes, 0);
    // 4 bits: half the bytes of 8.
    if (bits == 4)
      EXPECT_EQ(2 * bytes, qtrain_mk_packed_b_bytes(s.N, s.K, 8));
    std::vector<uint8_t> packed(static_cast<size_t>(bytes));
    qtrain_mk_pack_b(s.N, s.K, b.storage.data(), b.offset, b.s0, b.s1, bits,
                     packed.data());
    qtrain_mk_gemm_s8_packed_b(s.M, s.N, s.K, a.storage.data(), a.offset, a.s0,
                               a.s1, packed.data(), bits, c.storage.data(),
                               c.offset, c.s0, c.s1);
  };
}

TEST(Microkernels, S8MatchesReferenceExactly) {
  for (int bits : {8, 5, 3})
    checkInteger(bits, bits, s8Gemm);
  checkInteger(8, 3, s8Gemm);
}

TEST(Microkernels, BitSerialMatchesReferenceExactly) {
  for (int aBits = 1; aBits <= 4; ++aBits)
    for (int bBits = 1; bBits <= 4; ++bBits)
      checkInteger(aBits, bBits, bitSerialGemm(aBits, bBits));
}

// Packed k-bit weights: B packed once (8 or 4 bits), A any layout; exact.
TEST(Microkernels, PackedBMatchesReferenceExactly) {
  for (int bits : {8, 4})
    checkInteger(8, bits, packedGemm(bits));
  EXPECT_EQ(qtrain_mk_packed_b_bytes(4, 4, 3), -1);
}

// 16-bit codes (9..16-bit grids): exact over every shape and layout, and
// at the maximum accumulation length with extreme codes.
void checkS16(int bits, std::mt19937 &gen) {
  std::uniform_int_distribution<int> code(-(1 << (bits - 1)),
                                          (1 << (bits - 1)) - 1);
  std::uniform_int_distribution<int32_t> init(-1000000, 1000000);
  for (const Shape &s : kShapes)
    for (int layout = 0; layout < 4; ++layout) {
      auto a = filled<int16_t>(s.M, s.K, layout & 1,
                               [&] { return int16_t(code(gen)); });
      auto b = filled<int16_t>(s.K, s.N, layout & 2,
                               [&] { return int16_t(code(gen)); });
      auto c = filled<int32_t>(s.M, s.N, false, [&] { return init(gen); });
      auto c0 = c;
      qtrain_mk_gemm_s16s16s32(s.M, s.N, s.K, a.storage.data(), a.offset, a.s0,
                               a.s1, b.storage.data(), b.offset, b.s0, b.s1,
                               c.storage.data(), c.offset, c.s0, c.s1);
      for (int64_t i = 0; i < s.M; ++i)
        for (int64_t j = 0; j < s.N; ++j) {
          int64_t exact = c0.at(i, j);
          for (int64_t k = 0; k < s.K; ++k)
            exact += int64_t(a.at(i, k)) * b.at(k, j);
          // Sums that leave 32 bits wrap, as in the loop form.
          ASSERT_EQ(c.at(i, j), int32_t(uint32_t(uint64_t(exact))))
              << bits << " bits, " << s.M << "x" << s.N << "x" << s.K
              << " layout " << layout << " at " << i << "," << j;
        }
    }
}

TEST(Microkernels, S16MatchesReferenceExactly) {
  std::mt19937 gen(17);
  for (int bits : {9, 12, 16})
    checkS16(bits, gen);
  for (int bits : {9, 10, 12, 15}) {
    int64_t K = qtrain_mk_max_accumulation_length("s16s16s32", bits, bits);
    ASSERT_GT(K, 0);
    int16_t lo = int16_t(-(1 << (bits - 1))), hi = int16_t(-(lo + 1));
    std::vector<int16_t> a(size_t(2 * K)), b(size_t(2 * K)); // B col-major
    for (int64_t k = 0; k < K; ++k) {
      a[size_t(k)] = lo;
      a[size_t(K + k)] = k % 2 ? lo : hi;
      b[size_t(k)] = lo;
      b[size_t(K + k)] = hi;
    }
    std::vector<int32_t> c(4, 0);
    qtrain_mk_gemm_s16s16s32(2, 2, K, a.data(), 0, K, 1, b.data(), 0, 1, K,
                             c.data(), 0, 2, 1);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        int64_t exact = 0;
        for (int64_t k = 0; k < K; ++k)
          exact += int64_t(a[size_t(i * K + k)]) * b[size_t(j * K + k)];
        ASSERT_LE(exact, INT32_MAX);
        EXPECT_EQ(c[size_t(i * 2 + j)], exact) << bits << " bits, K = " << K;
      }
    EXPECT_EQ(int64_t(c[0]), K * int64_t(lo) * lo);
  }
}

TEST(Microkernels, AccumulationLengths) {
  EXPECT_EQ(qtrain_mk_max_accumulation_length("s8s8s32", 8, 8), 131071);
  EXPECT_EQ(qtrain_mk_max_accumulation_length("s8s8s32", 4, 4), 33554431);
  EXPECT_EQ(qtrain_mk_max_accumulation_length("bitserial", 2, 2), 536870911);
  EXPECT_EQ(qtrain_mk_max_accumulation_length("s8s8s32", 9, 8), -1);
  EXPECT_EQ(qtrain_mk_max_accumulation_length("bitserial", 5, 1), -1);
  EXPECT_EQ(qtrain_mk_max_accumulation_length("s16", 8, 8), -1);
  EXPECT_EQ(qtrain_mk_max_accumulation_length("s16s16s32", 9, 9), 32767);
  EXPECT_EQ(qtrain_mk_max_accumulation_length("s16s16s32", 12, 12), 511);
  EXPECT_EQ(qtrain_mk_max_accumulation_length("s16s16s32", 16, 16), 1);
  EXPECT_EQ(qtrain_mk_max_accumulation_length("s16s16s32", 17, 8), -1);
  // Tight: one more term of the largest product overflows 32 bits.
  for (int bits = 1; bits <= 8; ++bits) {
    int64_t k = qtrain_mk_max_accumulation_length("s8s8s32", bits, bits);
    int64_t largest = int64_t(1) << (2 * bits - 2);
    EXPECT_LE(k * largest, INT32_MAX);
    EXPECT_GT((k + 1) * largest, INT32_MAX);
  }
}

/// At its maximum length, with the extreme codes (both at their minimum:
/// the largest positive product; and minimum x maximum: the most negative
/// sum), a kernel's sum is exact.
void checkAtMaxLength(int aBits, int bBits, bool bitSerial) {
  int64_t K = qtrain_mk_max_accumulation_length(
      bitSerial ? "bitserial" : "s8s8s32", aBits, bBits);
  ASSERT_GT(K, 0);
  const int64_t M = 2, N = 3;
  int8_t aMin = int8_t(-(1 << (aBits - 1))), bMin = int8_t(-(1 << (bBits - 1)));
  int8_t bMax = int8_t((1 << (bBits - 1)) - 1);
  std::vector<int8_t> a(size_t(M * K)), b(size_t(K * N)); // A row-, B col-major
  for (int64_t k = 0; k < K; ++k) {
    a[size_t(k)] = aMin;                 // row 0: minimum
    a[size_t(K + k)] = k % 2 ? aMin : 0; // row 1: mixed
    b[size_t(k)] = bMin;                 // column 0: minimum
    b[size_t(K + k)] = bMax;             // column 1: maximum
    b[size_t(2 * K + k)] = k % 3 ? bMin : bMax;
  }
  std::vector<int32_t> c(size_t(M * N), 0);
  if (bitSerial)
    qtrain_mk_gemm_bitserial(M, N, K, a.data(), 0, K, 1, b.data(), 0, 1, K,
                             c.data(), 0, N, 1, aBits, bBits);
  else
    qtrain_mk_gemm_s8s8s32(M, N, K, a.data(), 0, K, 1, b.data(), 0, 1, K,
                           c.data(), 0, N, 1);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      int64_t exact = 0;
      for (int64_t k = 0; k < K; ++k)
        exact += int64_t(a[size_t(i * K + k)]) * b[size_t(j * K + k)];
      ASSERT_GE(exact, INT32_MIN);
      ASSERT_LE(exact, INT32_MAX);
      EXPECT_EQ(c[size_t(i * N + j)], exact)
          << aBits << "x" << bBits << " bits, K = " << K << " at " << i << ","
          << j;
    }
  // Row 0 x column 0 is exactly K times the largest product.
  EXPECT_EQ(int64_t(c[0]), K * (int64_t(aMin) * bMin));
}

TEST(Microkernels, S8ExactAtMaxAccumulationLength) {
  checkAtMaxLength(8, 8, false);
  checkAtMaxLength(6, 6, false);
}

TEST(Microkernels, BitSerialExactAtMaxAccumulationLength) {
  checkAtMaxLength(4, 4, true);
  checkAtMaxLength(4, 3, true);
}

// At 8 x 8 bits' maximum accumulation length, extreme codes, packed B.
TEST(Microkernels, PackedBExactAtMaxAccumulationLength) {
  const int64_t K = qtrain_mk_max_accumulation_length("s8s8s32", 8, 8);
  const int64_t M = 2, N = 2;
  std::vector<int8_t> a(size_t(M * K)), b(size_t(K * N));
  for (int64_t k = 0; k < K; ++k) {
    a[size_t(k)] = -128;
    a[size_t(K + k)] = 127;
    b[size_t(k * N)] = -128;
    b[size_t(k * N + 1)] = 127;
  }
  std::vector<uint8_t> packed(size_t(qtrain_mk_packed_b_bytes(N, K, 8)));
  qtrain_mk_pack_b(N, K, b.data(), 0, N, 1, 8, packed.data());
  std::vector<int32_t> c(size_t(M * N), 0);
  qtrain_mk_gemm_s8_packed_b(M, N, K, a.data(), 0, K, 1, packed.data(), 8,
                             c.data(), 0, N, 1);
  EXPECT_EQ(int64_t(c[0]), K * 16384);
  EXPECT_EQ(int64_t(c[1]), K * -128 * 127);
  EXPECT_EQ(int64_t(c[2]), K * 127 * -128);
  EXPECT_EQ(int64_t(c[3]), K * 127 * 127);
}

// Past every stated length the kernels still compute modulo 2^32, like
// the i32 loops they replace, and without signed overflow: K = 2^24 + 64
// makes the column sums of B (128 x K in magnitude) pass int32's range
// (UBSan's check in scripts/sanitize.sh runtime).
TEST(Microkernels, S8WrapsModulo2To32BeyondItsLength) {
  const int64_t K = (int64_t(1) << 24) + 64, M = 1, N = 2;
  std::vector<int8_t> a(size_t(M * K), -128), b(size_t(K * N));
  for (int64_t k = 0; k < K; ++k) {
    b[size_t(k * N)] = -128;
    b[size_t(k * N + 1)] = 127;
  }
  std::vector<int32_t> c(size_t(M * N), 0);
  qtrain_mk_gemm_s8s8s32(M, N, K, a.data(), 0, K, 1, b.data(), 0, N, 1,
                         c.data(), 0, N, 1);
  auto wrap = [](int64_t v) { return int32_t(uint32_t(uint64_t(v))); };
  EXPECT_EQ(c[0], wrap(K * 16384));
  EXPECT_EQ(c[1], wrap(K * -128 * 127));
}

// C += A * B with A the same memory as C (a bufferized contraction may run
// in place): A is read as it was before the call.
TEST(Microkernels, InputSharingTheOutputIsReadBeforeWriting) {
  const int64_t M = 40, N = 40, K = 40;
  std::mt19937 gen(9);
  std::normal_distribution<float> normal;
  std::vector<float> x(size_t(M * K)), b(size_t(K * N));
  for (float &v : x)
    v = normal(gen);
  for (float &v : b)
    v = normal(gen);
  std::vector<float> before = x;
  qtrain_mk_gemm_f32(M, N, K, x.data(), 0, K, 1, b.data(), 0, N, 1, x.data(), 0,
                     N, 1);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double exact = before[size_t(i * N + j)], magnitude = std::fabs(exact);
      for (int64_t k = 0; k < K; ++k) {
        exact += double(before[size_t(i * K + k)]) * b[size_t(k * N + j)];
        magnitude +=
            std::fabs(double(before[size_t(i * K + k)]) * b[size_t(k * N + j)]);
      }
      ASSERT_NEAR(x[size_t(i * N + j)], exact,
                  double(K + 2) * std::ldexp(1.0, -23) * magnitude);
    }
}

TEST(Microkernels, TwoThreadsMatchOne) {
  std::mt19937 gen(3);
  std::uniform_int_distribution<int> code(-128, 127);
  const int64_t M = 300, N = 200, K = 700;
  std::vector<int8_t> a(size_t(M * K)), b(size_t(K * N));
  for (int8_t &v : a)
    v = int8_t(code(gen));
  for (int8_t &v : b)
    v = int8_t(code(gen));
  std::vector<int32_t> one(size_t(M * N), 0), two(size_t(M * N), 0);
  qtrain_mk_gemm_s8s8s32(M, N, K, a.data(), 0, K, 1, b.data(), 0, N, 1,
                         one.data(), 0, N, 1);
  qtrain_mk_set_num_threads(2);
  qtrain_mk_gemm_s8s8s32(M, N, K, a.data(), 0, K, 1, b.data(), 0, N, 1,
                         two.data(), 0, N, 1);
  qtrain_mk_set_num_threads(1);
  EXPECT_EQ(one, two);
}

/// A convolution case: geometry and operand layouts.
struct ConvCase {
  int64_t N, C, H, W, F, KH, KW, strideH, strideW, dilationH, dilationW;
  bool xPadded;  // X a window of a larger buffer (strided rows, offset)
  bool wStrided; // W's channels interleaved ([F, KH, KW, C] in memory)
  bool yStrided; // Y's rows padded
  int threads;
};

/// With `bf16`, qtrain_mk_conv2d_nchw_bf16 against the products of the
/// bf16-rounded operands (exact in f32 and f64), with the same bound.
void checkConv(const ConvCase &t, bool bf16 = false) {
  int64_t OH = (t.H - t.dilationH * (t.KH - 1) - 1) / t.strideH + 1;
  int64_t OW = (t.W - t.dilationW * (t.KW - 1) - 1) / t.strideW + 1;
  std::mt19937 gen(11);
  std::normal_distribution<float> normal;
  // X: [N, C, H, W] inside a buffer with W + 3 per row and an offset.
  int64_t xRow = t.W + (t.xPadded ? 3 : 0);
  int64_t xs[4] = {t.C * t.H * xRow, t.H * xRow, xRow, 1};
  int64_t xOffset = t.xPadded ? 5 : 0;
  std::vector<float> x(size_t(xOffset + t.N * xs[0] + 4));
  for (float &v : x)
    v = normal(gen);
  // W: [F, C, KH, KW], in memory [F, KH, KW, C] when strided.
  int64_t ws[4] = {t.C * t.KH * t.KW, t.KH * t.KW, t.KW, 1};
  if (t.wStrided) {
    ws[1] = 1;
    ws[2] = t.KW * t.C;
    ws[3] = t.C;
  }
  std::vector<float> w(size_t(t.F * t.C * t.KH * t.KW));
  for (float &v : w)
    v = normal(gen);
  int64_t yRow = OW + (t.yStrided ? 2 : 0);
  int64_t ys[4] = {t.F * OH * yRow, OH * yRow, yRow, 1};
  std::vector<float> y(size_t(t.N * ys[0] + 3));
  for (float &v : y)
    v = normal(gen);
  std::vector<float> y0 = y;
  qtrain_mk_set_num_threads(t.threads);
  (bf16 ? qtrain_mk_conv2d_nchw_bf16 : qtrain_mk_conv2d_nchw_f32)(
      t.N, t.C, t.H, t.W, t.F, t.KH, t.KW, OH, OW, t.strideH, t.strideW,
      t.dilationH, t.dilationW, x.data(), xOffset, xs[0], xs[1], xs[2], xs[3],
      w.data(), 0, ws[0], ws[1], ws[2], ws[3], y.data(), 0, ys[0], ys[1], ys[2],
      ys[3]);
  qtrain_mk_set_num_threads(1);
  if (bf16) {
    for (float &v : x)
      v = roundBF16(v);
    for (float &v : w)
      v = roundBF16(v);
  }
  int64_t depth = t.C * t.KH * t.KW;
  for (int64_t n = 0; n < t.N; ++n)
    for (int64_t f = 0; f < t.F; ++f)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          size_t at = size_t(n * ys[0] + f * ys[1] + oh * ys[2] + ow);
          double exact = y0[at], magnitude = std::fabs(exact);
          for (int64_t c = 0; c < t.C; ++c)
            for (int64_t kh = 0; kh < t.KH; ++kh)
              for (int64_t kw = 0; kw < t.KW; ++kw) {
                double p =
                    double(
                        x[size_t(xOffset + n * xs[0] + c * xs[1] +
                                 (oh * t.strideH + kh * t.dilationH) * xs[2] +
                                 ow * t.strideW + kw * t.dilationW)]) *
                    w[size_t(f * ws[0] + c * ws[1] + kh * ws[2] + kw * ws[3])];
                exact += p;
                magnitude += std::fabs(p);
              }
          ASSERT_NEAR(y[at], exact,
                      double(depth + 2) * std::ldexp(1.0, -23) * magnitude)
              << "at " << n << "," << f << "," << oh << "," << ow;
        }
  // Row padding of Y and the words past it are untouched.
  for (size_t e = 0; e < y.size(); ++e) {
    int64_t inImage = int64_t(e) % ys[0], col = inImage % yRow;
    if (int64_t(e) >= t.N * ys[0] || col >= OW)
      ASSERT_EQ(y[e], y0[e]) << "wrote outside Y at " << e;
  }
}

// The implicit-GEMM convolution against direct summation: shapes of the
// example models' layers (a 3x3 layer, LeNet's 5x5 and its input gradient
// with 6 output channels) and strides, dilations, strided operands, runs
// of a panel that cross output rows, two threads.
TEST(Microkernels, ConvF32MatchesDirectConvolution) {
  const ConvCase cases[] = {
      {2, 32, 26, 26, 64, 3, 3, 1, 1, 1, 1, false, false, false, 1},
      {3, 16, 18, 18, 6, 5, 5, 1, 1, 1, 1, true, true, true, 1},
      {2, 3, 17, 13, 5, 3, 2, 2, 3, 1, 1, true, false, true, 1},
      {2, 4, 15, 16, 7, 3, 3, 1, 1, 2, 3, false, true, false, 1},
      {5, 6, 9, 40, 13, 1, 1, 1, 1, 1, 1, true, false, false, 2},
      {4, 8, 12, 12, 40, 3, 3, 1, 2, 1, 1, false, false, true, 2},
  };
  for (const ConvCase &t : cases)
    checkConv(t);
}

/// Runs the s8 convolution of `t` through the C API on random or extreme
/// codes (all -128: the largest products, and the A offset's column sums at
/// their largest) and checks every output against the int64 sum wrapped to
/// 32 bits, and that nothing outside Y was written.
void checkConvS8(const ConvCase &t, bool extreme) {
  int64_t OH = (t.H - t.dilationH * (t.KH - 1) - 1) / t.strideH + 1;
  int64_t OW = (t.W - t.dilationW * (t.KW - 1) - 1) / t.strideW + 1;
  std::mt19937 gen(13);
  std::uniform_int_distribution<int> code(-128, 127);
  auto next = [&] { return int8_t(extreme ? -128 : code(gen)); };
  int64_t xRow = t.W + (t.xPadded ? 3 : 0);
  int64_t xs[4] = {t.C * t.H * xRow, t.H * xRow, xRow, 1};
  int64_t xOffset = t.xPadded ? 5 : 0;
  std::vector<int8_t> x(size_t(xOffset + t.N * xs[0] + 4));
  for (int8_t &v : x)
    v = next();
  int64_t ws[4] = {t.C * t.KH * t.KW, t.KH * t.KW, t.KW, 1};
  if (t.wStrided) {
    ws[1] = 1;
    ws[2] = t.KW * t.C;
    ws[3] = t.C;
  }
  std::vector<int8_t> w(size_t(t.F * t.C * t.KH * t.KW));
  for (int8_t &v : w)
    v = next();
  int64_t yRow = OW + (t.yStrided ? 2 : 0);
  int64_t ys[4] = {t.F * OH * yRow, OH * yRow, yRow, 1};
  std::vector<int32_t> y(size_t(t.N * ys[0]));
  for (int32_t &v : y)
    v = int32_t(gen() % 1000) - 500;
  std::vector<int32_t> y0 = y;
  qtrain_mk_set_num_threads(t.threads);
  qtrain_mk_conv2d_nchw_s8s8s32(t.N, t.C, t.H, t.W, t.F, t.KH, t.KW, OH, OW,
                                t.strideH, t.strideW, t.dilationH, t.dilationW,
                                x.data(), xOffset, xs[0], xs[1], xs[2], xs[3],
                                w.data(), 0, ws[0], ws[1], ws[2], ws[3],
                                y.data(), 0, ys[0], ys[1], ys[2], ys[3]);
  qtrain_mk_set_num_threads(1);
  for (int64_t n = 0; n < t.N; ++n)
    for (int64_t f = 0; f < t.F; ++f)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          size_t at = size_t(n * ys[0] + f * ys[1] + oh * ys[2] + ow);
          int64_t exact = y0[at];
          for (int64_t c = 0; c < t.C; ++c)
            for (int64_t kh = 0; kh < t.KH; ++kh)
              for (int64_t kw = 0; kw < t.KW; ++kw)
                exact +=
                    int64_t(
                        x[size_t(xOffset + n * xs[0] + c * xs[1] +
                                 (oh * t.strideH + kh * t.dilationH) * xs[2] +
                                 ow * t.strideW + kw * t.dilationW)]) *
                    w[size_t(f * ws[0] + c * ws[1] + kh * ws[2] + kw * ws[3])];
          ASSERT_EQ(y[at], int32_t(uint32_t(uint64_t(exact))))
              << "at " << n << "," << f << "," << oh << "," << ow
              << (extreme ? " (extreme codes)" : "");
        }
  for (size_t e = 0; e < y.size(); ++e)
    if (int64_t(e) % yRow >= OW)
      ASSERT_EQ(y[e], y0[e]) << "wrote outside Y at " << e;
}

// The bf16 convolution (bf16 products, f32 sums) on the same cases, plus
// an odd depth (the last k pair half empty) and a depth over one K block.
TEST(Microkernels, ConvBF16MatchesDirectConvolution) {
  const ConvCase cases[] = {
      {2, 32, 26, 26, 64, 3, 3, 1, 1, 1, 1, false, false, false, 1},
      {3, 16, 18, 18, 6, 5, 5, 1, 1, 1, 1, true, true, true, 1},
      {2, 3, 17, 13, 5, 3, 2, 2, 3, 1, 1, true, false, true, 1},
      {2, 4, 15, 16, 7, 3, 3, 1, 1, 2, 3, false, true, false, 1},
      {5, 6, 9, 40, 13, 1, 1, 1, 1, 1, 1, true, false, false, 2},
      {4, 8, 12, 12, 40, 3, 3, 1, 2, 1, 1, false, false, true, 2},
      {2, 3, 9, 9, 5, 3, 3, 1, 1, 1, 1, true, true, false, 1},
      {1, 64, 9, 9, 12, 5, 5, 1, 1, 1, 1, false, false, false, 1},
  };
  for (const ConvCase &t : cases)
    checkConv(t, /*bf16=*/true);
}

// The s8 implicit-GEMM convolution is exact: every output equals the
// int64 sum wrapped to 32 bits, for random and extreme codes.
TEST(Microkernels, ConvS8MatchesDirectConvolutionExactly) {
  const ConvCase cases[] = {
      {2, 32, 26, 26, 64, 3, 3, 1, 1, 1, 1, false, false, false, 1},
      {3, 16, 18, 18, 6, 5, 5, 1, 1, 1, 1, true, true, true, 1},
      {2, 3, 17, 13, 5, 3, 2, 2, 3, 1, 1, true, false, true, 2},
      {2, 7, 15, 16, 7, 3, 3, 1, 1, 2, 3, false, true, false, 1},
      // Few channels: words of four taps along a row instead of four
      // channels (LeNet's conv1; with a stride and a dilation).
      {3, 1, 32, 32, 6, 5, 5, 1, 1, 1, 1, true, false, true, 1},
      {2, 2, 17, 19, 5, 3, 3, 2, 2, 1, 2, false, true, false, 1},
  };
  for (bool extreme : {false, true})
    for (const ConvCase &t : cases)
      checkConvS8(t, extreme);
}

// The s8 convolution at the s8 kernels' maximum accumulation length
// (C KH KW <= 131071 for 8 x 8 bits) with extreme codes: every product is
// the largest, (-128)^2, and the channel-blocked words pad C to a multiple
// of 4; the sum is exact.
TEST(Microkernels, ConvS8ExactAtMaxAccumulationLength) {
  const int64_t K = qtrain_mk_max_accumulation_length("s8s8s32", 8, 8);
  const int64_t KH = 3, KW = 3, C = K / (KH * KW), F = 2, H = 3, W = 3;
  ASSERT_LE(C * KH * KW, K);
  std::vector<int8_t> x(size_t(C * H * W), -128), w(size_t(F * C * KH * KW));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = i < w.size() / 2 ? -128 : 127; // filter 1: the most negative sum
  std::vector<int32_t> y(size_t(F), 0);
  qtrain_mk_conv2d_nchw_s8s8s32(
      1, C, H, W, F, KH, KW, 1, 1, 1, 1, 1, 1, x.data(), 0, C * H * W, H * W, W,
      1, w.data(), 0, C * KH * KW, KH * KW, KW, 1, y.data(), 0, F, 1, 1, 1);
  EXPECT_EQ(int64_t(y[0]), C * KH * KW * 16384);
  EXPECT_EQ(int64_t(y[1]), C * KH * KW * -128 * 127);
}

//===----------------------------------------------------------------------===//
// Convolutions through the library (oneDNN where the build has it)
//===----------------------------------------------------------------------===//

/// Sets the library mode for a scope, then back to QTRAIN_CONV_LIBRARY's.
struct LibraryMode {
  explicit LibraryMode(qtrain::mk::ConvLibraryMode mode) {
    qtrain::mk::setConvLibraryMode(mode);
  }
  ~LibraryMode() {
    const char *env = std::getenv("QTRAIN_CONV_LIBRARY");
    using qtrain::mk::ConvLibraryMode;
    qtrain::mk::setConvLibraryMode(
        env && std::strcmp(env, "always") == 0  ? ConvLibraryMode::Always
        : env && std::strcmp(env, "never") == 0 ? ConvLibraryMode::Never
                                                : ConvLibraryMode::Auto);
  }
};

/// Whether the library takes convolutions here: built with one, and our
/// kernels on their AVX-512 path (QTRAIN_MICROKERNELS=portable: never).
bool libraryRuns() {
  return qtrain::mk::hasConvLibrary() &&
         std::strcmp(qtrain_mk_isa(), "avx512") == 0;
}

/// The example models' layers (batch 3) and the unit tests' awkward cases.
const ConvCase kLibraryCases[] = {
    {3, 6, 14, 14, 16, 5, 5, 1, 1, 1, 1, false, false, false, 1},
    {3, 16, 18, 18, 6, 5, 5, 1, 1, 1, 1, true, true, true, 2},
    {3, 32, 26, 26, 64, 3, 3, 1, 1, 1, 1, false, true, true, 1},
    {3, 64, 28, 28, 32, 3, 3, 1, 1, 1, 1, true, false, false, 2},
    {3, 1, 32, 32, 6, 5, 5, 1, 1, 1, 1, true, false, true, 1},
    {2, 3, 17, 13, 5, 3, 2, 2, 3, 1, 1, true, false, true, 2},
    {2, 7, 15, 16, 7, 3, 3, 1, 1, 2, 3, false, true, false, 1},
    {5, 6, 9, 40, 13, 1, 1, 1, 1, 1, 1, true, false, false, 2},
};

// Every convolution the library takes meets the C API's contract: f32
// within the stated bound, s8 exact and wrapped, strided operands served,
// nothing outside Y written.
TEST(Microkernels, ConvLibraryMatchesDirectConvolution) {
  LibraryMode always(qtrain::mk::ConvLibraryMode::Always);
  for (const ConvCase &t : kLibraryCases) {
    checkConv(t);
    for (bool extreme : {false, true})
      checkConvS8(t, extreme);
  }
}

/// A dense NCHW convolution of `C` channels through the library on
/// `threads` threads; returns whether the library ran it.
template <class In, class Acc>
bool libraryConv(int64_t N, int64_t C, int64_t H, int64_t F, int64_t K,
                 const std::vector<In> &x, const std::vector<In> &w,
                 std::vector<Acc> &y, int threads) {
  int64_t OH = H - K + 1;
  qtrain::mk::LibraryConvCall call{N,
                                   C,
                                   H,
                                   H,
                                   F,
                                   K,
                                   K,
                                   OH,
                                   OH,
                                   1,
                                   1,
                                   1,
                                   1,
                                   x.data(),
                                   {C * H * H, H * H, H, 1},
                                   w.data(),
                                   {C * K * K, K * K, K, 1},
                                   y.data(),
                                   {F * OH * OH, OH * OH, OH, 1}};
  if constexpr (std::is_same_v<In, float>)
    return qtrain::mk::libraryConvF32(call, threads);
  else
    return qtrain::mk::libraryConvS8(call, threads);
}

// The library's sums do not depend on the thread count: convnet's conv2 at
// 1 and 2 threads, bit for bit in f32 too (each output reduced in one
// thread, in one order). The library runs where this build has one.
TEST(Microkernels, ConvLibraryTwoThreadsMatchOne) {
  LibraryMode always(qtrain::mk::ConvLibraryMode::Always);
  const int64_t N = 6, C = 32, H = 26, F = 64, K = 3, OH = H - K + 1;
  std::mt19937 gen(17);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> code(-128, 127);
  std::vector<float> x(size_t(N * C * H * H)), w(size_t(F * C * K * K));
  for (float &v : x)
    v = normal(gen);
  for (float &v : w)
    v = normal(gen);
  std::vector<int8_t> xc(x.size()), wc(w.size());
  for (int8_t &v : xc)
    v = int8_t(code(gen));
  for (int8_t &v : wc)
    v = int8_t(code(gen));
  std::vector<float> one(size_t(N * F * OH * OH), 0.5f), two = one;
  std::vector<int32_t> oneS8(one.size(), 7), twoS8 = oneS8;
  EXPECT_EQ(libraryConv(N, C, H, F, K, x, w, one, 1), libraryRuns());
  EXPECT_EQ(libraryConv(N, C, H, F, K, x, w, two, 2), libraryRuns());
  EXPECT_EQ(libraryConv(N, C, H, F, K, xc, wc, oneS8, 1), libraryRuns());
  EXPECT_EQ(libraryConv(N, C, H, F, K, xc, wc, twoS8, 2), libraryRuns());
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
  EXPECT_EQ(oneS8, twoS8);
}

// The library's s8 sums at the s8 kernels' maximum accumulation length with
// the largest sums either way: the u8 sums (code + 128) wrap in int32 and
// the offset takes them back exactly; no f32 stage rounds them.
TEST(Microkernels, ConvLibraryExactAtMaxAccumulationLength) {
  LibraryMode always(qtrain::mk::ConvLibraryMode::Always);
  const int64_t depth = qtrain_mk_max_accumulation_length("s8s8s32", 8, 8);
  const int64_t K = 3, C = depth / (K * K), F = 2, H = 3;
  for (int8_t input : {int8_t(-128), int8_t(127)}) {
    std::vector<int8_t> x(size_t(C * H * H), input), w(size_t(F * C * K * K));
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = i < w.size() / 2 ? -128 : 127;
    std::vector<int32_t> y(size_t(F), 0);
    EXPECT_EQ(libraryConv(1, C, H, F, K, x, w, y, 1), libraryRuns());
    if (!libraryRuns())
      continue;
    EXPECT_EQ(int64_t(y[0]), C * K * K * input * -128);
    EXPECT_EQ(int64_t(y[1]), C * K * K * input * 127);
  }
}

// Auto leaves to our kernels the layers the library is slower on (a
// single input channel, convnet's conv2 forward) and takes LeNet's conv2.
TEST(Microkernels, ConvLibraryAutoPolicy) {
  LibraryMode automatic(qtrain::mk::ConvLibraryMode::Auto);
  const int64_t N = 128, K = 5;
  std::vector<float> x1(size_t(N * 32 * 32)), w1(size_t(6 * 25)),
      y1(size_t(N * 6 * 28 * 28));
  EXPECT_FALSE(libraryConv(N, 1, 32, 6, K, x1, w1, y1, 1));
  std::vector<float> x2(size_t(N * 6 * 14 * 14)), w2(size_t(16 * 6 * 25)),
      y2(size_t(N * 16 * 10 * 10));
  EXPECT_EQ(libraryConv(N, 6, 14, 16, K, x2, w2, y2, 1), libraryRuns());
  std::vector<int8_t> x3(size_t(N * 32 * 26 * 26)), w3(size_t(64 * 32 * 9));
  std::vector<int32_t> y3(size_t(N * 64 * 24 * 24));
  EXPECT_FALSE(libraryConv(N, 32, 26, 64, 3, x3, w3, y3, 1));
}

// Y sharing memory with X: X is read as it was before the call.
TEST(Microkernels, ConvInputSharingTheOutputIsReadBeforeWriting) {
  const int64_t N = 2, C = 3, H = 6, W = 6, F = 3, K = 1;
  std::mt19937 gen(5);
  std::normal_distribution<float> normal;
  std::vector<float> x(size_t(N * C * H * W)), w(size_t(F * C * K * K));
  for (float &v : x)
    v = normal(gen);
  for (float &v : w)
    v = normal(gen);
  std::vector<float> before = x;
  // A 1x1 convolution with F = C writes the very elements it reads.
  qtrain_mk_conv2d_nchw_f32(N, C, H, W, F, K, K, H, W, 1, 1, 1, 1, x.data(), 0,
                            C * H * W, H * W, W, 1, w.data(), 0, C, 1, 1, 1,
                            x.data(), 0, F * H * W, H * W, W, 1);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t f = 0; f < F; ++f)
      for (int64_t p = 0; p < H * W; ++p) {
        double exact = before[size_t((n * F + f) * H * W + p)];
        for (int64_t c = 0; c < C; ++c)
          exact += double(before[size_t((n * C + c) * H * W + p)]) *
                   w[size_t(f * C + c)];
        ASSERT_NEAR(x[size_t((n * F + f) * H * W + p)], exact, 1e-5);
      }
}

} // namespace
