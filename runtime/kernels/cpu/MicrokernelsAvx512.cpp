//===- MicrokernelsAvx512.cpp - AVX-512 GEMM microkernels -----------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Compiled with AVX-512 (F, BW, VL, VNNI, BF16, VPOPCNTDQ) enabled; nothing
/// here runs unless Ukernels.cpp found the features on the CPU. Each kernel
/// keeps its 12 x 32 tile in 24 zmm accumulators: per k-group it loads two
/// B vectors and broadcasts one A element (or pair, or quad) per row.
///
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include <immintrin.h>

namespace qtrain::uk {
namespace {

void kernelF32Avx512(int64_t kc, const float *a, const float *b, float *c,
                     int64_t ldc) {
  __m512 acc[kMR][2];
#pragma unroll
  for (int r = 0; r < kMR; ++r)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k, a += kMR, b += kNR) {
    __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma unroll
    for (int r = 0; r < kMR; ++r) {
      __m512 av = _mm512_set1_ps(a[r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  }
#pragma unroll
  for (int r = 0; r < kMR; ++r) {
    float *row = c + r * ldc;
    _mm512_storeu_ps(row, _mm512_add_ps(_mm512_loadu_ps(row), acc[r][0]));
    _mm512_storeu_ps(row + 16,
                     _mm512_add_ps(_mm512_loadu_ps(row + 16), acc[r][1]));
  }
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
#pragma unroll
  for (int r = 0; r < kMR; ++r) {
    float *row = c + r * ldc;
    _mm512_storeu_ps(row, _mm512_add_ps(_mm512_loadu_ps(row), acc[r][0]));
    _mm512_storeu_ps(row + 16,
                     _mm512_add_ps(_mm512_loadu_ps(row + 16), acc[r][1]));
  }
}

void kernelU8S8Avx512(int64_t groups, const uint8_t *a, const int8_t *b,
                      int32_t *c, int64_t ldc) {
  __m512i acc[kMR][2];
#pragma unroll
  for (int r = 0; r < kMR; ++r)
    acc[r][0] = acc[r][1] = _mm512_setzero_si512();
  for (int64_t g = 0; g < groups; ++g, a += 4 * kMR, b += 4 * kNR) {
    __m512i b0 = _mm512_load_si512(b), b1 = _mm512_load_si512(b + 64);
    const int32_t *quads = reinterpret_cast<const int32_t *>(a);
#pragma unroll
    for (int r = 0; r < kMR; ++r) {
      __m512i av = _mm512_set1_epi32(quads[r]);
      acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], av, b0);
      acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], av, b1);
    }
  }
#pragma unroll
  for (int r = 0; r < kMR; ++r) {
    int32_t *row = c + r * ldc;
    __m512i *lo = reinterpret_cast<__m512i *>(row);
    __m512i *hi = reinterpret_cast<__m512i *>(row + 16);
    _mm512_storeu_si512(lo, _mm512_add_epi32(_mm512_loadu_si512(lo), acc[r][0]));
    _mm512_storeu_si512(hi, _mm512_add_epi32(_mm512_loadu_si512(hi), acc[r][1]));
  }
}

template <int RA, int RB>
void binaryTile(int64_t words, const uint64_t *a, const uint64_t *b,
                int64_t stride, uint64_t *out) {
  __m512i acc[RA][RB];
#pragma unroll
  for (int i = 0; i < RA; ++i)
#pragma unroll
    for (int j = 0; j < RB; ++j)
      acc[i][j] = _mm512_setzero_si512();
  for (int64_t w = 0; w < words; w += 8) {
    __m512i av[RA], bv[RB];
#pragma unroll
    for (int i = 0; i < RA; ++i)
      av[i] = _mm512_load_si512(a + i * stride + w);
#pragma unroll
    for (int j = 0; j < RB; ++j)
      bv[j] = _mm512_load_si512(b + j * stride + w);
#pragma unroll
    for (int i = 0; i < RA; ++i)
#pragma unroll
      for (int j = 0; j < RB; ++j)
        acc[i][j] = _mm512_add_epi64(
            acc[i][j], _mm512_popcnt_epi64(_mm512_and_si512(av[i], bv[j])));
  }
#pragma unroll
  for (int i = 0; i < RA; ++i)
#pragma unroll
    for (int j = 0; j < RB; ++j)
      out[i * RB + j] = _mm512_reduce_add_epi64(acc[i][j]);
}

using FixedTile = void (*)(int64_t, const uint64_t *, const uint64_t *,
                            int64_t, uint64_t *);
template <int RA> constexpr FixedTile tileRow(int rb) {
  return rb == 1   ? binaryTile<RA, 1>
         : rb == 2 ? binaryTile<RA, 2>
         : rb == 3 ? binaryTile<RA, 3>
                   : binaryTile<RA, 4>;
}

void binaryTileAvx512(int ra, int rb, int64_t words, const uint64_t *a,
                      const uint64_t *b, int64_t stride, uint64_t *out) {
  FixedTile tile = ra == 1   ? tileRow<1>(rb)
                    : ra == 2 ? tileRow<2>(rb)
                    : ra == 3 ? tileRow<3>(rb)
                              : tileRow<4>(rb);
  tile(words, a, b, stride, out);
}
} // namespace

void gemmF32Avx512(GemmOperands<float, float> operands) {
  gemmBlocked<F32>(operands, kernelF32Avx512);
}
void gemmBF16Avx512(GemmOperands<float, float> operands) {
  gemmBlocked<BF16>(operands, kernelBF16Avx512);
}
void gemmS8Avx512(GemmOperands<int8_t, int32_t> operands) {
  gemmBlocked<S8>(operands, kernelU8S8Avx512);
}
void bitSerialAvx512(BitSerialOperands operands) {
  bitSerialBlocked(operands, binaryTileAvx512);
}

} // namespace qtrain::uk
