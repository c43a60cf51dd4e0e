//===- CodeBits.h - Which GEMM kernel a code width selects ------*- C++ -*-===//
//
// The one place that says which `qtrain.code_bits` widths qtrain-microkernels
// serves with the bit-serial GEMM, so that qtrain-share-functions knows which
// width hints it may merge.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_CODEGEN_CPU_CODEBITS_H
#define QTRAIN_CODEGEN_CPU_CODEBITS_H

#include <cstdint>

namespace mlir::qtrain {

/// Narrow codes of `aBits` x `bBits` bits: the bit-serial GEMM (at most 4
/// bit-plane pairs), where it is faster than VNNI. Only that kernel reads
/// the widths; every other product ignores them.
inline bool usesBitSerialGemm(int32_t aBits, int32_t bBits) {
  return aBits * bBits <= 4;
}

} // namespace mlir::qtrain

#endif // QTRAIN_CODEGEN_CPU_CODEBITS_H
