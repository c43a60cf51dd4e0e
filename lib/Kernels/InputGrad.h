//===- InputGrad.h - Low-precision input gradients --------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The two low-precision forms qtrain-integer-kernels gives an input
/// gradient dX = Q(E) * Q(W) whose weights are quantized per output channel
/// (`input-grad=bf16|int`, docs/passes/integer-kernels.md). Both rewrite the
/// product on tensors; `int` leaves a product of two per-tensor quantizers
/// that the pass then makes integer like any other.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_KERNELS_INPUTGRAD_H
#define QTRAIN_KERNELS_INPUTGRAD_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::qtrain::intkernels {

/// `input-grad=bf16`: rounds both operands of the product `op` to bf16
/// (nearest even, kept in f32 tensors: a product of two bf16 values is exact
/// in f32, so the product is bf16 products with f32 sums) and tags it
/// `qtrain.bf16_operands`, which lets qtrain-microkernels run it on the
/// bf16 kernels. Returns the new product.
linalg::LinalgOp roundOperandsToBF16(linalg::LinalgOp op);

/// The grid of the errors foldWeightScales folds the weight's scales into.
enum class ErrorGrid {
  /// CPT's per-tensor integer grid (qtrain.fake_quant): `input-grad=int`.
  Integer,
  /// A scaled float rounding (qtrain.round_float ... scaled, the e5m2
  /// errors of grad-format=e5m2): `input-grad=fp8`.
  ScaledFloat,
};

/// `input-grad=int`: when one factor of `op` is an error quantized per
/// tensor (through zero padding and transposes) and the other a weight
/// quantized per channel along a reduction loop (through transposes and
/// copies), folds the weight's per-channel scale s_W into the error before
/// its quantization:
///
///   dX = sum_f Q(E s_W)[.., f] * (Q(W)[f, ..] / s_W[f])
///      = sum_f Q(E s_W) * q_W  +  sum_f Q(E s_W) * (mn_W / s_W)[f]
///
/// with q_W the weight's grid indices (integers in [0, 2^b - 1]). The first
/// sum is the returned product, of Q(E s_W) (the error's quantizer, same
/// bits, noise stream and rounding, on E s_W) and a per-tensor quantizer of
/// q_W with the explicit range [0, 2^b - 1], which returns q_W exactly: an
/// integer product for qtrain-integer-kernels. The second (the weight's
/// zero points) is an f32 contraction with the loops private to the weight
/// (dX's channels) collapsed, added to the product's result.
///
/// `input-grad=fp8` (`grid` ScaledFloat): the same fold for an error
/// rounded to a float format with a per-tensor power of two (R, in the
/// product's block: qtrain-form-kernels input-grad-roundings):
///
///   dX = sum_f R(E s_W) * c_W  +  sum_f R(E s_W) * (mn_W / s_W + 2^(b-1))
///
/// with c_W the weight's centred codes, behind a per-tensor quantizer on
/// [-2^(b-1), 2^(b-1) - 1] (the identity). Both factors of the first sum
/// are exact in fp8 or bf16 (qtrain-fp8-error-products).
///
/// Returns null when `op` is not such a product (it is left as it is).
linalg::LinalgOp foldWeightScales(linalg::LinalgOp op,
                                  ErrorGrid grid = ErrorGrid::Integer);

} // namespace mlir::qtrain::intkernels

#endif // QTRAIN_KERNELS_INPUTGRAD_H
