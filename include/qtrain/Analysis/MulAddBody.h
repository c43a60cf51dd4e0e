//===- MulAddBody.h - The arithmetic of a GEMM's body -----------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Whether a linalg contraction's body is one a GEMM kernel computes
/// exactly: `c + a * b` of f32 operands with no other arithmetic (a cast
/// would change the product's rounding), or `c + sext(a) * sext(b)` in i32
/// of two 8- or 16-bit codes (a zero extension, or a product wrapped before
/// widening, is another product). qtrain-microkernels (CPU) and
/// qtrain-gpu-gemms (CUDA) run only these on their kernels.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_ANALYSIS_MULADDBODY_H
#define QTRAIN_ANALYSIS_MULADDBODY_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::qtrain {

/// The arithmetic of a multiply-accumulate body.
struct MulAddBody {
  /// f32 products and sums, or sign-extended integer codes summed in i32.
  bool isFloat = true;
  /// The operands' width: 32 for f32, 8 or 16 for codes.
  unsigned width = 32;
};

/// The multiply-accumulate `op` computes (two inputs, one init), if its
/// element types and body are one of the above.
std::optional<MulAddBody> getMulAddBody(linalg::LinalgOp op);

} // namespace mlir::qtrain

#endif // QTRAIN_ANALYSIS_MULADDBODY_H
