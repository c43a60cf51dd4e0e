//===- QTrainAttrs.h - qtrain attributes and enums --------------*- C++ -*-===//
//
// Declares the qtrain attributes: number formats, roles, rounding,
// granularity and precision schedules.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_DIALECT_QTRAINATTRS_H
#define QTRAIN_DIALECT_QTRAINATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include <optional>

#include "QTrain/QTrainEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "QTrain/QTrainAttrs.h.inc"

namespace mlir::qtrain {

/// Name of the discardable attribute that carries a precision schedule (on a
/// module or a function).
inline constexpr llvm::StringLiteral kScheduleAttrName = "qtrain.schedule";
/// Name of the discardable attribute that carries the backward (error)
/// precision schedule.
inline constexpr llvm::StringLiteral kGradScheduleAttrName =
    "qtrain.grad_schedule";
/// On a module whose errors are not on CPT's integer grid: "e5m2" (fp8,
/// qtrain-insert-quant grad-format=e5m2). Absent: the integer grid.
inline constexpr llvm::StringLiteral kGradFormatAttrName = "qtrain.grad_format";
/// The largest finite value of the hardware's fp8 e5m2 (FP(5, 2, 0) below
/// its top binade, which e5m2 reserves for inf and NaN).
inline constexpr float kE5m2Max = 57344.0f;
/// Name of the argument attribute that marks a control input of the step:
/// "bits", "grad_bits", "seed" or "step".
inline constexpr llvm::StringLiteral kControlAttrName = "qtrain.control";
/// On an elementwise copy in a forward graph: train-time dropout with this
/// probability (qtrain-insert-dropout makes it a qtrain.dropout).
inline constexpr llvm::StringLiteral kDropoutAttrName = "qtrain.dropout";
/// The Philox stream of dropout site k is kDropoutStreamBase + k ("DP").
inline constexpr int64_t kDropoutStreamBase = 0x44500000;
/// Name of the argument and result attribute that marks state the step
/// carries from one call to the next (other than parameters and optimizer
/// state): "ema" for the running range of a quantized activation,
/// "loss_scale" for the dynamic loss scale (a tensor<1xf32> the step reads
/// and returns unchanged; the runtime updates it between steps).
inline constexpr llvm::StringLiteral kStateAttrName = "qtrain.state";
/// Name of the discardable attribute that numbers a quantized layer (on its
/// forward op and on its backward products).
inline constexpr llvm::StringLiteral kLayerAttrName = "qtrain.layer";
/// Name of the discardable attribute that says which product of a layer an
/// op computes: "forward", "input_grad" or "weight_grad".
inline constexpr llvm::StringLiteral kProductAttrName = "qtrain.product";
// qtrain.variant and qtrain.code_bits, the contracts between the kernel
// passes and the lowering, are the dialect's typed discardable attributes
// (QTrainDialect.td): QTrainDialect::getVariantAttrHelper() and
// getCodeBitsAttrHelper() name, get and set them.
/// Name of the module attribute that lists the kernel sites and their
/// variants, for the bundle manifest.
inline constexpr llvm::StringLiteral kSitesAttrName = "qtrain.sites";
/// Name of the argument attribute that marks a trainable parameter.
inline constexpr llvm::StringLiteral kParamAttrName = "qtrain.param";
/// Name of the argument attribute that names a parameter (PyTorch's
/// `named_parameters()` name, from qtrain-import-torch): the bundle's name
/// for it, and its file params/<name>.bin. Letters, digits, '_', '.', '-'.
inline constexpr llvm::StringLiteral kNameAttrName = "qtrain.name";
/// Name of the argument attribute that carries a parameter's initial value
/// (an elements attribute of the argument's type).
inline constexpr llvm::StringLiteral kInitAttrName = "qtrain.init";
/// Name of the argument attribute of a parameter without an initial value
/// that says how the runtime initializes it (qtrain/Analysis/FreshInit.h):
/// {kind = "kaiming_uniform" | "bias_uniform" | "ones" | "zeros",
///  fan_in = N : i64}, N > 0 for the two uniform kinds.
inline constexpr llvm::StringLiteral kFreshInitAttrName = "qtrain.fresh_init";
/// Name of the argument or result attribute that gives a tensor's role.
inline constexpr llvm::StringLiteral kRoleAttrName = "qtrain.role";

/// Name of the attribute (on a forward op, or a function argument) that
/// gives the float formats qtrain-assign-precision chose for the tensors of
/// PAPERS.md section 4 it produces: a dictionary with keys among "y", "gy"
/// (an op's output and its gradient, or an input argument) and "p", "gp" (a
/// parameter and its gradient), each a #qtrain.float.
inline constexpr llvm::StringLiteral kFormatsAttrName = "qtrain.formats";
/// Name of the attribute (next to qtrain.formats) that gives the group of
/// PAPERS.md section 4 the tensors belong to: a non-negative i64.
inline constexpr llvm::StringLiteral kGroupAttrName = "qtrain.group";

/// Name of the argument attribute of a learnable precision (LDP, PAPERS.md
/// section 3): the 0-d parameter p of the quantized layer (kernel site) it
/// gives the bitwidth of, a non-negative i64. Such parameters take no
/// weight decay.
inline constexpr llvm::StringLiteral kPrecisionAttrName = "qtrain.precision";
/// Name of the result attribute of @forward that marks a scalar
/// (tensor<f32>) added to the training loss: LDP's cost term.
inline constexpr llvm::StringLiteral kLossTermAttrName = "qtrain.loss_term";

/// Name of the argument and result attribute of a state tensor with one
/// element per tensor of the step (the promotion flags and overflow ratios
/// of qtrain-insert-rounding): an array of strings naming them.
inline constexpr llvm::StringLiteral kTensorsAttrName = "qtrain.tensors";

/// Name of the unit attribute that marks the linalg.generic a
/// qtrain.decode_float was lowered to (for qtrain-fuse-decodes).
inline constexpr llvm::StringLiteral kDecodeAttrName = "qtrain.decode";
/// On a GPU kernel of the CUDA target (qtrain-cuda-gemm-kernels): what it
/// computes and how it is launched, a dictionary of kind, a, b, c (strings),
/// batch, m, n, k (positive i64) and grid, block (three positive i64 each).
inline constexpr llvm::StringLiteral kGemmAttrName = "qtrain.gemm";
/// On an argument of an entry point of the CUDA step
/// (qtrain-map-step-to-gpu): the host code reads or writes the buffer, so
/// the runtime places it in memory both the host and the device access.
inline constexpr llvm::StringLiteral kHostVisibleAttrName =
    "qtrain.host_visible";

/// Checks a qtrain.formats dictionary; returns an error text or "".
std::string verifyFormatsAttr(Attribute attr);

/// Whether `attr` is one of the precision schedule attributes.
bool isScheduleAttr(Attribute attr);

} // namespace mlir::qtrain

#endif // QTRAIN_DIALECT_QTRAINATTRS_H
