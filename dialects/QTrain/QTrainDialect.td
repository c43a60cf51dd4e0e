//===- QTrainDialect.td - The qtrain dialect ---------------*- tablegen -*-===//
//
// The qtrain dialect: number formats, precision schedules and quantization ops
// for low-precision training with precision that changes while training runs.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_DIALECT_TD
#define QTRAIN_DIALECT_TD

include "mlir/IR/DialectBase.td"
include "mlir/IR/OpBase.td"

def QTrain_Dialect : Dialect {
  let name = "qtrain";
  let cppNamespace = "::mlir::qtrain";
  let summary = "Low-precision training: formats, schedules and quantizers";
  let description = [{
    The qtrain dialect describes the numerics of dynamic-precision training:
    integer grids (`#qtrain.int`) and reduced floating-point formats
    (`#qtrain.float`), the roles tensors play in a training step, the
    precision schedules that decide the bitwidth at each step (cyclic, static,
    learned), and the ops that quantize tensors (`qtrain.fake_quant`,
    `qtrain.round_float`).

    The numerics of every attribute and op are specified once, by the plain C++
    reference in `runtime/` (`qtrain/runtime/Quantize.h`, `FloatFormat.h`,
    `Schedule.h`); lowered code is tested against it bit for bit.
  }];
  // The contracts between passes that ride on ops as discardable
  // attributes, with typed helpers (QTrainDialect::getVariantAttrHelper()):
  // - qtrain.variant, on a kernel variant function (a #qtrain.variant):
  //   set by qtrain-materialize-variants, completed by
  //   qtrain-integer-kernels, read for the bundle manifest.
  // - qtrain.code_bits, on the main integer contraction of a product: the
  //   bit widths [a, b] of its two operands' codes (qtrain-integer-kernels).
  //   A lowering hint that qtrain-drop-annotations keeps and
  //   qtrain-microkernels consumes (it picks the bit-serial kernel for
  //   narrow codes).
  // - qtrain.bf16_operands, on a product whose operands hold bf16 values
  //   (qtrain-integer-kernels input-grad=bf16): a bf16 kernel computes it
  //   with the same products. Kept by qtrain-drop-annotations for
  //   qtrain-microkernels.
  // - qtrain.float_operands, on a product of the CUDA step whose two
  //   operands hold values of the reduced float formats it lists (two
  //   #qtrain.float, qtrain-float-operands): qtrain-gpu-gemms runs it on an
  //   fp8 kernel where both formats map onto fp8. Kept by
  //   qtrain-drop-annotations.
  let discardableAttrs = (ins
    "::mlir::qtrain::VariantAttr":$variant,
    "::mlir::DenseI32ArrayAttr":$code_bits,
    "::mlir::UnitAttr":$bf16_operands,
    "::mlir::ArrayAttr":$float_operands
  );
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
  private:
    void registerAttributes();
  }];
}

class QTrain_Op<string mnemonic, list<Trait> traits = []>
    : Op<QTrain_Dialect, mnemonic, traits>;

#endif // QTRAIN_DIALECT_TD
