//===- MicrokernelsAvx512.cpp - AVX-512 GEMM microkernels -----------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Compiled for AVX-512 (F, BW, VL, DQ, VNNI, BF16, VPOPCNTDQ); nothing
/// here runs unless Gemm.cpp found the features on the CPU. Each kernel
/// keeps its 12 x 32 tile in 24 zmm accumulators: per k-group it loads two
/// B vectors and broadcasts one A element (or pair, or quad) per row.
///
/// With clang the features are a target attribute on this file's own
/// functions (and Driver.h's, internal to this file), not a flag for the
/// whole file: inline functions of the standard library that both this file
/// and the portable Gemm.cpp instantiate (std::vector's members...) are
/// merged by the linker, and must not be the AVX-512 copy.
///
//===----------------------------------------------------------------------===//

#include "Microkernels.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>
#include <vector>

#if defined(__clang__)
#pragma clang attribute push(                                                  \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,"     \
                          "avx512bf16,avx512vpopcntdq"))),                     \
    apply_to = function)
#endif

#include "Driver.h"

namespace qtrain::mk {
namespace {

/// c[r][0..31] += the tile's accumulators, for its first Rows rows.
template <int Rows>
inline void addTile(__m512 (&acc)[Rows][2], float *c, int64_t ldc) {
#pragma unroll
  for (int r = 0; r < Rows; ++r) {
    float *row = c + r * ldc;
    _mm512_storeu_ps(row, _mm512_add_ps(_mm512_loadu_ps(row), acc[r][0]));
    _mm512_storeu_ps(row + 16,
                     _mm512_add_ps(_mm512_loadu_ps(row + 16), acc[r][1]));
  }
}

/// The first Rows rows of a 12 x 32 f32 tile (A panels keep 12 rows).
template <int Rows>
inline void f32Tile(int64_t kc, const float *a, const float *b, float *c,
                    int64_t ldc) {
  __m512 acc[Rows][2];
#pragma unroll
  for (int r = 0; r < Rows; ++r)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k, a += kMR, b += kNR) {
    __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      __m512 av = _mm512_set1_ps(a[r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  addTile<Rows>(acc, c, ldc);
}

void kernelF32Avx512(int64_t kc, const float *a, const float *b, float *c,
                     int64_t ldc) {
  f32Tile<kMR>(kc, a, b, c, ldc);
}
void kernelF32HalfAvx512(int64_t kc, const float *a, const float *b, float *c,
                         int64_t ldc) {
  f32Tile<kMR / 2>(kc, a, b, c, ldc);
}

void kernelBF16Avx512(int64_t groups, const uint16_t *a, const uint16_t *b,
                      float *c, int64_t ldc) {
  __m512 acc[kMR][2];
#pragma unroll
  for (int r = 0; r < kMR; ++r)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t g = 0; g < groups; ++g, a += 2 * kMR, b += 2 * kNR) {
    __m512bh b0 = (__m512bh)_mm512_load_si512(b);
    __m512bh b1 = (__m512bh)_mm512_load_si512(b + 32);
    const int32_t *pairs = reinterpret_cast<const int32_t *>(a);
#pragma unroll
    for (int r = 0; r < kMR; ++r) {
      __m512bh av = (__m512bh)_mm512_set1_epi32(pairs[r]);
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], av, b0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], av, b1);
    }
  }
  addTile(acc, c, ldc);
}

/// The 12 x 32 tile of the integer kernels: per group, 32 bits of A per
/// row (broadcast) against 64 bytes of B per 16 columns, combined by `dot`
/// (a VNNI instruction) into 32-bit sums, then added to C.
template <class Dot>
inline void int32Tile(int64_t groups, const void *aData, const void *bData,
                      int32_t *c, int64_t ldc, Dot dot) {
  const auto *a = static_cast<const int32_t *>(aData);
  const auto *b = static_cast<const char *>(bData);
  __m512i acc[kMR][2];
#pragma unroll
  for (int r = 0; r < kMR; ++r)
    acc[r][0] = acc[r][1] = _mm512_setzero_si512();
  for (int64_t g = 0; g < groups; ++g, a += kMR, b += 4 * kNR) {
    __m512i b0 = _mm512_load_si512(b), b1 = _mm512_load_si512(b + 64);
#pragma unroll
    for (int r = 0; r < kMR; ++r) {
      __m512i av = _mm512_set1_epi32(a[r]);
      acc[r][0] = dot(acc[r][0], av, b0);
      acc[r][1] = dot(acc[r][1], av, b1);
    }
  }
#pragma unroll
  for (int r = 0; r < kMR; ++r) {
    int32_t *row = c + r * ldc;
    __m512i *lo = reinterpret_cast<__m512i *>(row);
    __m512i *hi = reinterpret_cast<__m512i *>(row + 16);
    _mm512_storeu_si512(lo,
                        _mm512_add_epi32(_mm512_loadu_si512(lo), acc[r][0]));
    _mm512_storeu_si512(hi,
                        _mm512_add_epi32(_mm512_loadu_si512(hi), acc[r][1]));
  }
}

/// u8 A (quads) x s8 B.
struct DotU8S8 {
  __m512i operator()(__m512i acc, __m512i a, __m512i b) const {
    return _mm512_dpbusd_epi32(acc, a, b);
  }
};
/// s8 A x u8 B: the unsigned operand of vpdpbusd is B.
struct DotS8U8 {
  __m512i operator()(__m512i acc, __m512i a, __m512i b) const {
    return _mm512_dpbusd_epi32(acc, b, a);
  }
};
/// s16 pairs.
struct DotS16 {
  __m512i operator()(__m512i acc, __m512i a, __m512i b) const {
    return _mm512_dpwssd_epi32(acc, a, b);
  }
};

void kernelU8S8Avx512(int64_t groups, const uint8_t *a, const int8_t *b,
                      int32_t *c, int64_t ldc) {
  int32Tile(groups, a, b, c, ldc, DotU8S8());
}
void kernelS8U8Avx512(int64_t groups, const int8_t *a, const uint8_t *b,
                      int32_t *c, int64_t ldc) {
  int32Tile(groups, a, b, c, ldc, DotS8U8());
}
void kernelS16Avx512(int64_t groups, const int16_t *a, const int16_t *b,
                     int32_t *c, int64_t ldc) {
  int32Tile(groups, a, b, c, ldc, DotS16());
}

/// 64 codes at a time: offset, then one byte-test mask per plane; the sum
/// of q through vpsadbw.
int64_t packLineAvx512(const int8_t *codes, int64_t K, int bits, int64_t words,
                       uint64_t *row) {
  const __m512i offset = _mm512_set1_epi8(char(1 << (bits - 1)));
  const __m512i keep = _mm512_set1_epi8(char((1 << bits) - 1));
  __m512i sums = _mm512_setzero_si512();
  for (int64_t w = 0; w < words; ++w) {
    int64_t k = w * 64;
    __mmask64 live = k + 64 <= K ? ~__mmask64(0)
                     : k < K     ? (__mmask64(1) << (K - k)) - 1
                                 : 0;
    __m512i q = _mm512_maskz_loadu_epi8(live, codes + std::min(k, K));
    q = _mm512_maskz_and_epi32(0xffff, _mm512_maskz_add_epi8(live, q, offset),
                               keep);
    sums = _mm512_add_epi64(sums, _mm512_sad_epu8(q, _mm512_setzero_si512()));
    for (int i = 0; i < bits; ++i)
      row[i * words + w] =
          _mm512_test_epi8_mask(q, _mm512_set1_epi8(char(1 << i)));
  }
  return _mm512_reduce_add_epi64(sums);
}
} // namespace

void gemmF32Avx512(GemmOperands<float, float> operands) {
  gemmBlocked<F32>(operands, kernelF32Avx512, kernelF32HalfAvx512);
}
void gemmBF16Avx512(GemmOperands<float, float> operands) {
  gemmBlocked<BF16>(operands, kernelBF16Avx512);
}
void convF32Avx512(const ConvOperands<float, float> &operands) {
  convF32Blocked(operands, kernelF32Avx512, kernelF32HalfAvx512);
}
void convBF16Avx512(const ConvOperands<float, float> &operands) {
  convBF16Blocked(operands, kernelBF16Avx512);
}
void convS8Avx512(const ConvOperands<int8_t, int32_t> &operands) {
  convS8Blocked(operands, kernelS8U8Avx512);
}
void gemmS16Avx512(GemmOperands<int16_t, int32_t> operands) {
  gemmBlocked<S16>(operands, kernelS16Avx512);
}
void gemmS8Avx512(GemmOperands<int8_t, int32_t> operands) {
  gemmBlocked<S8>(operands, kernelU8S8Avx512);
}
namespace {
/// The bit-serial GEMM with columns across vector lanes: B's planes are
/// stored [plane j][word w][column n], so a zmm holds one word of 8
/// columns; a tile of MR rows x NV vectors of 8 columns keeps one
/// accumulator per (row, a-plane, b-plane, vector) and adds
/// popcount(broadcast A word & B words) per word. No horizontal sums: the
/// planes are combined (weights 2^(i+j)), the centring taken out with row
/// and column sums, and 8 results added to C per vector.
template <int BA, int BB>
struct BitSerialTiles {
  static constexpr int NV = BA * BB == 1 ? 4 : BA * BB <= 4 ? 2 : 1;
  static constexpr int MR = BA * BB == 1 ? 4 : std::max(1, 24 / (BA * BB * NV));

  static void run(const BitSerialOperands &o) {
    auto [M, N, K, a, b, c, aBits, bBits] = o;
    int64_t words = (K + 63) / 64;
    int64_t mPad = (M + MR - 1) / MR * MR;
    int64_t nPad = (N + 8 * NV - 1) / (8 * NV) * (8 * NV);
    uint64_t *aPlanes = scratchA.get<uint64_t>(mPad * BA * words);
    uint64_t *bPlanes = scratchB.get<uint64_t>(BB * words * nPad);
    int64_t *sums = scratchSums.get<int64_t>(mPad + nPad);
    std::fill(aPlanes + M * BA * words, aPlanes + mPad * BA * words, 0);
    std::fill(sums, sums + mPad + nPad, 0);
    packPlanes(a, M, K, BA, words, aPlanes, sums, packLineAvx512);
    // B's columns: planes of one column, then scattered to [j][w][n].
    std::vector<uint64_t> column(size_t(BB * words));
    std::vector<int8_t> line(size_t(b.s0 == 1 ? 0 : K));
    for (int64_t n = 0; n < nPad; ++n) {
      if (n < N) {
        const int8_t *codes = &b.at(0, n);
        if (b.s0 != 1) {
          for (int64_t k = 0; k < K; ++k)
            line[size_t(k)] = b.at(k, n);
          codes = line.data();
        }
        sums[mPad + n] = packLineAvx512(codes, K, BB, words, column.data());
      } else {
        std::fill(column.begin(), column.end(), 0);
      }
      for (int j = 0; j < BB; ++j)
        for (int64_t w = 0; w < words; ++w)
          bPlanes[(j * words + w) * nPad + n] = column[j * words + w];
    }
    const __m512i oa = _mm512_set1_epi64(int64_t(1) << (BA - 1));
    const __m512i kab = _mm512_set1_epi64(K * (int64_t(1) << (BA - 1)) *
                                          (int64_t(1) << (BB - 1)));
    for (int64_t n0 = 0; n0 < N; n0 += 8 * NV)
      for (int64_t m0 = 0; m0 < M; m0 += MR) {
        __m512i acc[MR][BA][BB][NV];
#pragma unroll
        for (int r = 0; r < MR; ++r)
#pragma unroll
          for (int i = 0; i < BA; ++i)
#pragma unroll
            for (int j = 0; j < BB; ++j)
#pragma unroll
              for (int v = 0; v < NV; ++v)
                acc[r][i][j][v] = _mm512_setzero_si512();
        const uint64_t *aRow = aPlanes + m0 * BA * words;
        for (int64_t w = 0; w < words; ++w) {
          __m512i bv[BB][NV];
#pragma unroll
          for (int j = 0; j < BB; ++j)
#pragma unroll
            for (int v = 0; v < NV; ++v)
              bv[j][v] = _mm512_loadu_si512(bPlanes + (j * words + w) * nPad +
                                            n0 + 8 * v);
#pragma unroll
          for (int r = 0; r < MR; ++r)
#pragma unroll
            for (int i = 0; i < BA; ++i) {
              __m512i av =
                  _mm512_set1_epi64(int64_t(aRow[(r * BA + i) * words + w]));
#pragma unroll
              for (int j = 0; j < BB; ++j)
#pragma unroll
                for (int v = 0; v < NV; ++v)
                  acc[r][i][j][v] = _mm512_add_epi64(
                      acc[r][i][j][v],
                      _mm512_popcnt_epi64(_mm512_and_si512(av, bv[j][v])));
            }
        }
        for (int v = 0; v < NV; ++v) {
          int64_t nBase = n0 + 8 * v;
          if (nBase >= N)
            break;
          __m512i colSum = _mm512_loadu_si512(sums + mPad + nBase);
          for (int r = 0; r < MR && m0 + r < M; ++r) {
            __m512i q = _mm512_setzero_si512();
#pragma unroll
            for (int i = 0; i < BA; ++i)
#pragma unroll
              for (int j = 0; j < BB; ++j)
                q = _mm512_add_epi64(
                    q, _mm512_slli_epi64(acc[r][i][j][v], unsigned(i + j)));
            // sum (qa - oa)(qb - ob) = qq - ob*rowsum - oa*colsum + K oa ob
            q = _mm512_sub_epi64(q,
                                 _mm512_set1_epi64(sums[m0 + r] << (BB - 1)));
            q = _mm512_sub_epi64(q, _mm512_mullo_epi64(oa, colSum));
            q = _mm512_add_epi64(q, kab);
            __m256i y32 = _mm512_cvtepi64_epi32(q);
            int64_t live = std::min<int64_t>(8, N - nBase);
            int32_t *y = &c.at(m0 + r, nBase);
            if (c.s1 == 1) {
              __mmask8 mask = __mmask8((1u << live) - 1);
              __m256i old = _mm256_maskz_loadu_epi32(mask, y);
              _mm256_mask_storeu_epi32(y, mask, _mm256_add_epi32(old, y32));
            } else {
              alignas(32) int32_t lanes[8];
              _mm256_store_si256(reinterpret_cast<__m256i *>(lanes), y32);
              for (int64_t l = 0; l < live; ++l)
                y[l * c.s1] =
                    int32_t(uint32_t(y[l * c.s1]) + uint32_t(lanes[l]));
            }
          }
        }
      }
  }
};

template <int BA>
void runWithB(const BitSerialOperands &o) {
  switch (o.bBits) {
  case 1:
    return BitSerialTiles<BA, 1>::run(o);
  case 2:
    return BitSerialTiles<BA, 2>::run(o);
  case 3:
    return BitSerialTiles<BA, 3>::run(o);
  default:
    return BitSerialTiles<BA, 4>::run(o);
  }
}
} // namespace

namespace {
/// 8 x 32 of A (signed quads, broadcast) times B's q (u8, the first
/// operand of vpdpbusd); 4-bit panels are unpacked in registers: a 64-byte
/// load gives columns 0-15 (low nibbles) and 16-31 (high nibbles).
template <int Bits>
void packedTileAvx512(int64_t groups, const int8_t *a, const uint8_t *panel,
                      int32_t *tile) {
  __m512i acc[kPackedMR][2];
  for (int r = 0; r < kPackedMR; ++r)
    acc[r][0] = acc[r][1] = _mm512_setzero_si512();
  const __m512i low = _mm512_set1_epi8(0x0f);
  const int32_t *quads = reinterpret_cast<const int32_t *>(a);
  for (int64_t g = 0; g < groups; ++g, quads += kPackedMR) {
    __m512i b0, b1;
    if constexpr (Bits == 8) {
      b0 = _mm512_loadu_si512(panel + g * 128);
      b1 = _mm512_loadu_si512(panel + g * 128 + 64);
    } else {
      __m512i v = _mm512_loadu_si512(panel + g * 64);
      b0 = _mm512_and_si512(v, low);
      b1 = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
    }
    for (int r = 0; r < kPackedMR; ++r) {
      __m512i av = _mm512_set1_epi32(quads[r]);
      acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], b0, av);
      acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], b1, av);
    }
  }
  for (int r = 0; r < kPackedMR; ++r) {
    __m512i *row = reinterpret_cast<__m512i *>(tile + r * kNR);
    _mm512_store_si512(row,
                       _mm512_add_epi32(_mm512_load_si512(row), acc[r][0]));
    _mm512_store_si512(row + 1,
                       _mm512_add_epi32(_mm512_load_si512(row + 1), acc[r][1]));
  }
}

void packedTileDispatch(int64_t groups, const int8_t *a, const uint8_t *panel,
                        int bits, int32_t *tile) {
  bits == 4 ? packedTileAvx512<4>(groups, a, panel, tile)
            : packedTileAvx512<8>(groups, a, panel, tile);
}
} // namespace

void gemmPackedAvx512(PackedOperands operands) {
  packedBlocked(operands, packedTileDispatch);
}

void bitSerialAvx512(BitSerialOperands operands) {
  switch (operands.aBits) {
  case 1:
    return runWithB<1>(operands);
  case 2:
    return runWithB<2>(operands);
  case 3:
    return runWithB<3>(operands);
  default:
    return runWithB<4>(operands);
  }
}

} // namespace qtrain::mk

#if defined(__clang__)
#pragma clang attribute pop
#endif
