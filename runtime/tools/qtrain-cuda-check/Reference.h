//===- Reference.h - CPU references of the GPU GEMM kernels -----*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// qtrain-cuda-check's side of a kernel check (docs/cuda.md): seeded random
/// operands in the kernel's encodings, the element values the kernel is
/// meant to see, and the comparison of a downloaded C with the exact sums
///   C[b, i, j] = sum_k A[b, i, k] * B[b, j, k]
/// computed here in double (exact products for every encoding; i8 in
/// int64). Each kind is held to a bound on |C - exact| per element, with
/// S = sum_k |A * B| (u = 2^-23):
///   i8    bit for bit
///   f32   k u S + k 2^-126      (an fp32 FMA chain)
///   tf32  the same, against inputs rounded to tf32 as cvt.rna does
///   bf16  k u S
///   fp8   2^-10 S + k u S       (Hopper's fp8 MMA accumulates with fewer
///                                bits than fp32)
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_CUDA_CHECK_REFERENCE_H
#define QTRAIN_CUDA_CHECK_REFERENCE_H

#include "qtrain/runtime/Manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qtrain::cudacheck {

/// Bytes per element of an encoding ("f32" 4, "bf16" 2, fp8 and "s8" 1).
size_t encodingBytes(const std::string &encoding);

/// The value of one element stored in `encoding` at `bytes`.
double decodeElement(const std::string &encoding, const uint8_t *bytes);

/// An f32 rounded to tf32 as PTX's cvt.rna.tf32.f32 does: to nearest, ties
/// away from zero, 10 mantissa bits kept (the low 13 bits cleared).
float roundToTf32(float value);

/// An f32 rounded to the nearest bfloat16 (ties to even), as its bits.
uint16_t toBf16Bits(float value);

/// The operands of one check, in the encodings the kernel reads.
struct Operands {
  /// The bytes uploaded: A [batch, m, k] and B [batch, n, k].
  std::vector<uint8_t> a, b;
  /// The values the kernel multiplies (for tf32 after the rounding).
  std::vector<double> aValues, bValues;
};

/// Seeded random operands for `kernel`: f32 and tf32 uniform in [-1, 1);
/// bf16 such floats rounded to bf16; fp8 uniformly drawn finite codes; s8
/// A codes in [-128, 127] and B codes in [-127, 127] (so |a b| <= 127 *
/// 128, the bound the compiler keeps k * |a b| under 2^31 with).
Operands makeOperands(const qtrain::rt::CudaKernelSpec &kernel, uint64_t seed);

/// How a C compared with the exact sums.
struct Comparison {
  bool passed = true;
  /// Exact integers (i8): every element equal.
  bool exact = false;
  /// The largest |C - exact| / bound over the checked elements.
  double worstRatio = 0;
  /// Elements over the bound (or unequal, or not finite).
  int64_t failures = 0;
  /// The first failure, for the message: "C[0, 3, 7] = ... (exact ..., bound
  /// ...)".
  std::string firstFailure;
  /// Rows (b, i) checked and in all: a large GEMM is checked on a seeded
  /// sample of its rows, so the CPU's share stays within seconds.
  int64_t rowsChecked = 0, rows = 0;
};

/// The bound's extra term for operands that another implementation may
/// round differently (cuBLASLt's tf32: 2^-8 S, since it does not document
/// how it rounds f32 to tf32); 0 for the generated kernels.
struct Tolerance {
  double extraRelative = 0;
};

/// Compares `c` (the downloaded C bytes, batch * m * n elements of
/// kernel.c) with the exact sums of `operands`, on at most `maxMacs`
/// multiply-accumulates' worth of rows, on `threads` threads.
Comparison compareWithReference(const qtrain::rt::CudaKernelSpec &kernel,
                                const Operands &operands,
                                const std::vector<uint8_t> &c,
                                const Tolerance &tolerance, int64_t maxMacs,
                                unsigned threads);

} // namespace qtrain::cudacheck

#endif // QTRAIN_CUDA_CHECK_REFERENCE_H
