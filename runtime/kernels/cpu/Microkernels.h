//===- Microkernels.h - Packed-panel GEMM microkernels ----------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The innermost kernels of microkernels.h and the packed layouts they read.
/// A microkernel adds an MR x NR tile of A * B to C (row stride ldc, unit
/// column stride) from two packed panels:
///
///   A panel: [K / KG][MR][KG]   (KG consecutive k of one row together)
///   B panel: [K / KG][NR][KG]
///
/// KG is 1 for f32, 2 for bf16 (vdpbf16ps takes pairs) and 16-bit codes
/// (vpdpwssd takes pairs), 4 for 8-bit codes (vpdpbusd takes quads); panels are
/// zero-padded to whole groups, rows and columns. Each kernel exists twice:
/// AVX-512 (MicrokernelsAvx512 .cpp, compiled for AVX-512 and called only when
/// the CPU has it) and portable C++ (Gemm.cpp).
///
/// The bit-serial path works on bit planes instead: rows of 64-bit words,
/// one row per (row, bit) of A and per (column, bit) of B (the AVX-512
/// kernel stores B's planes [plane][word][column], 8 columns to a zmm).
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_KERNELS_CPU_MICROKERNELS_H
#define QTRAIN_RUNTIME_KERNELS_CPU_MICROKERNELS_H

#include <cstdint>

namespace qtrain::mk {

constexpr int kMR = 12; ///< Rows of a microkernel tile.
constexpr int kNR = 32; ///< Columns of a microkernel tile (two zmm).

/// A strided matrix: element (i, j) at p[i * s0 + j * s1].
template <class T>
struct View {
  T *p;
  int64_t s0, s1;
  T &at(int64_t i, int64_t j) const { return p[i * s0 + j * s1]; }
  View sub(int64_t i, int64_t j) const { return {&at(i, j), s0, s1}; }
};

/// C (M x N) += A (M x K) * B (K x N).
template <class In, class Acc>
struct GemmOperands {
  int64_t M, N, K;
  View<const In> a, b;
  View<Acc> c;
};
/// The same on codes of aBits / bBits bits, bit-serial.
struct BitSerialOperands {
  int64_t M, N, K;
  View<const int8_t> a, b;
  View<int32_t> c;
  int aBits, bBits;
};

/// C (M x N) += A (M x K, signed codes) * B packed by qtrain_mk_pack_b:
/// panels of 32 columns, [K/4 groups][32][4] of q = code + 2^(bits-1), one
/// byte each at 8 bits; at 4 bits a group's 128 codes in 64 bytes, byte t
/// holding code t (low nibble) and code t + 64 (high nibble).
struct PackedOperands {
  int64_t M, N, K;
  View<const int8_t> a;
  const uint8_t *packed;
  int bits;
  View<int32_t> c;
};
constexpr int kPackedMR = 8; ///< Rows of the packed-B kernel's tile.

/// A 2-D convolution of images [n0, n1) as implicit GEMMs: per image,
/// Y_n[f, (oh, ow)] += W[f, (c, kh, kw)] * X_n[c, oh*sh + kh*dh,
/// ow*sw + kw*dw], the patches packed from X straight into B panels.
/// X is a strided 4-D view (NCHW), W a view [F, C*KH*KW], Y per image a
/// view [F, OH*OW] (Y_n starts at y + n * yImageStride).
template <class In, class Acc>
struct ConvOperands {
  int64_t n0, n1, C, F, KH, KW, OH, OW;
  int64_t strideH, strideW, dilationH, dilationW;
  const In *x;
  int64_t xStrides[4];
  View<const In> w;
  Acc *y;
  int64_t yImageStride, yStrideF, yStrideCol;
};

/// The single-threaded GEMMs with the AVX-512 microkernels
/// (MicrokernelsAvx512.cpp).
void gemmF32Avx512(GemmOperands<float, float> operands);
void gemmBF16Avx512(GemmOperands<float, float> operands);
void gemmS8Avx512(GemmOperands<int8_t, int32_t> operands);
void gemmS16Avx512(GemmOperands<int16_t, int32_t> operands);
void bitSerialAvx512(BitSerialOperands operands);
void gemmPackedAvx512(PackedOperands operands);
void convF32Avx512(const ConvOperands<float, float> &operands);
void convBF16Avx512(const ConvOperands<float, float> &operands);
void convS8Avx512(const ConvOperands<int8_t, int32_t> &operands);

/// Whether the CPU runs each family (false under QTRAIN_MICROKERNELS=portable).
bool hasAvx512F32();
bool hasAvx512BF16();
bool hasAvx512Vnni();
bool hasAvx512Popcnt();

} // namespace qtrain::mk

#endif // QTRAIN_RUNTIME_KERNELS_CPU_MICROKERNELS_H
