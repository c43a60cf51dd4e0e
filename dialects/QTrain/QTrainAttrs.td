//===- QTrainAttrs.td - qtrain attributes and enums --------*- tablegen -*-===//
//
// Number formats, tensor roles, rounding, granularity and precision schedules.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_ATTRS_TD
#define QTRAIN_ATTRS_TD

include "QTrain/QTrainDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class QTrain_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<QTrain_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def QTrain_Role : I32EnumAttr<"Role", "role of a tensor in the training step", [
    I32EnumAttrCase<"Weight", 0, "weight">,
    I32EnumAttrCase<"Activation", 1, "activation">,
    I32EnumAttrCase<"Error", 2, "error">,
    I32EnumAttrCase<"WeightGrad", 3, "weight_grad">,
  ]> {
  let cppNamespace = "::mlir::qtrain";
  let genSpecializedAttr = 0;
}

def QTrain_RoleAttr : EnumAttr<QTrain_Dialect, QTrain_Role, "role"> {
  let summary = "Role of a tensor in the training step";
  let description = [{
    The papers' tensor classes: `weight` (P, W), `activation` (Y, A: the
    output of a layer and input of the next), `error` (GY, E: the gradient of
    a layer's output) and `weight_grad` (GP: the gradient of a parameter).
    Passes that place quantizers or assign formats read the role.

    ```mlir
    #qtrain<role error>
    ```
  }];
}

def QTrain_Rounding : I32EnumAttr<"Rounding", "rounding mode", [
    I32EnumAttrCase<"NearestEven", 0, "nearest_even">,
    I32EnumAttrCase<"Stochastic", 1, "stochastic">,
  ]> {
  let cppNamespace = "::mlir::qtrain";
  let genSpecializedAttr = 0;
}

def QTrain_RoundingAttr : EnumAttr<QTrain_Dialect, QTrain_Rounding, "rounding"> {
  let summary = "Rounding mode of a quantizer";
  let description = [{
    `nearest_even` rounds half to even. `stochastic` adds uniform noise in
    [-0.5, 0.5) drawn from a seeded counter-based Philox4x32-10 stream before
    rounding, so it is unbiased and replays exactly for the same seed.
  }];
}

def QTrain_GranularityKind : I32EnumAttr<"GranularityKind",
    "granularity of a quantizer's range", [
    I32EnumAttrCase<"PerTensor", 0, "per_tensor">,
    I32EnumAttrCase<"PerChannel", 1, "per_channel">,
  ]> {
  let cppNamespace = "::mlir::qtrain";
  let genSpecializedAttr = 0;
}

def QTrain_ShapeKind : I32EnumAttr<"ShapeKind", "shape of a cyclic schedule", [
    I32EnumAttrCase<"Cosine", 0, "cosine">,
    I32EnumAttrCase<"Linear", 1, "linear">,
    I32EnumAttrCase<"Exponential", 2, "exponential">,
    I32EnumAttrCase<"Rex", 3, "rex">,
  ]> {
  let cppNamespace = "::mlir::qtrain";
  let genSpecializedAttr = 0;
}

def QTrain_CycleMode : I32EnumAttr<"CycleMode", "how periods repeat", [
    I32EnumAttrCase<"Repeated", 0, "repeated">,
    I32EnumAttrCase<"Triangular", 1, "triangular">,
  ]> {
  let cppNamespace = "::mlir::qtrain";
  let genSpecializedAttr = 0;
}

def QTrain_Flip : I32EnumAttr<"Flip", "how a decay curve mirrors its growth", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Vertical", 1, "vertical">,
    I32EnumAttrCase<"Horizontal", 2, "horizontal">,
  ]> {
  let cppNamespace = "::mlir::qtrain";
  let genSpecializedAttr = 0;
}

def QTrain_PeriodConvention : I32EnumAttr<"PeriodConvention",
    "how the period length follows from total steps and cycles", [
    I32EnumAttrCase<"Floor", 0, "floor">,
    I32EnumAttrCase<"FloorPlusOne", 1, "floor_plus_one">,
  ]> {
  let cppNamespace = "::mlir::qtrain";
  let genSpecializedAttr = 0;
}

def QTrain_ProductKind : I32EnumAttr<"ProductKind",
    "which product of a kernel site an op or a variant computes", [
    I32EnumAttrCase<"Forward", 0, "forward">,
    I32EnumAttrCase<"InputGrad", 1, "input_grad">,
    I32EnumAttrCase<"WeightGrad", 2, "weight_grad">,
  ]> {
  let cppNamespace = "::mlir::qtrain";
  let genSpecializedAttr = 0;
}

def QTrain_KernelKind : I32EnumAttr<"KernelKind",
    "the arithmetic a kernel variant's products run in", [
    I32EnumAttrCase<"F32", 0, "f32">,
    I32EnumAttrCase<"I8", 1, "i8">,
    I32EnumAttrCase<"I16", 2, "i16">,
    I32EnumAttrCase<"F64", 3, "f64">,
    I32EnumAttrCase<"BF16", 4, "bf16">,
  ]> {
  let cppNamespace = "::mlir::qtrain";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// GranularityAttr
//===----------------------------------------------------------------------===//

def QTrain_GranularityAttr : QTrain_Attr<"Granularity", "granularity"> {
  let summary = "Per-tensor or per-channel quantization range";
  let description = [{
    `per_tensor` takes one min/max over the whole tensor. `per_channel` takes
    one min/max per slice along `axis` (for weights, the output-channel axis).

    ```mlir
    #qtrain.granularity<per_tensor>
    #qtrain.granularity<per_channel, axis = 0>
    ```
  }];
  let parameters = (ins
    EnumParameter<QTrain_GranularityKind>:$kind,
    OptionalParameter<"std::optional<int64_t>">:$axis
  );
  let assemblyFormat = "`<` $kind (`,` `axis` `=` $axis^)? `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isPerChannel() const {
      return getKind() == GranularityKind::PerChannel;
    }
  }];
}

//===----------------------------------------------------------------------===//
// IntGridAttr
//===----------------------------------------------------------------------===//

def QTrain_IntGridAttr : QTrain_Attr<"IntGrid", "int"> {
  let summary = "A b-bit asymmetric min/max integer grid";
  let description = [{
    The CPT quantization grid of `bits` bits (1 to 16): with the range
    [mn, mx] of the tensor (or channel), scale s = max((mx - mn) / (2^b - 1),
    1e-8), levels q * s + mn for integer q in [0, 2^b - 1].

    ```mlir
    #qtrain.int<8>
    ```
  }];
  let parameters = (ins "unsigned":$bits);
  let assemblyFormat = "`<` $bits `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of levels minus one, 2^b - 1.
    uint64_t getMaxLevel() const { return (uint64_t(1) << getBits()) - 1; }
  }];
}

//===----------------------------------------------------------------------===//
// FloatFormatAttr
//===----------------------------------------------------------------------===//

def QTrain_FloatFormatAttr : QTrain_Attr<"FloatFormat", "float"> {
  let summary = "A reduced floating-point format FP(e, m, bias)";
  let description = [{
    One sign bit, `exponent` exponent bits (1 to 8), `mantissa` stored
    mantissa bits (0 to 23), and an extra exponent `bias` added to the
    standard bias 2^(e-1) - 1. For e < 8 the top exponent encodes finite
    values (no inf/NaN codes); for e = 8 it is reserved as in IEEE, so
    `#qtrain.float<8, 23, 0>` is f32 and `#qtrain.float<8, 7, 0>` is bf16.
    Subnormals exist; rounding is to nearest even. With `saturate`, values
    that overflow become the largest finite value of their sign, otherwise
    +-inf. Every value of the format must be representable in f32.

    ```mlir
    #qtrain.float<6, 9, 0>            // the high format of the paper
    #qtrain.float<4, 3, 4, saturate>  // P and Y low: max 30, overflow at 31
    #qtrain.float<5, 2, 0>            // GY low: max 114688, overflow at 122880
    ```
  }];
  let parameters = (ins
    "unsigned":$exponent,
    "unsigned":$mantissa,
    "int":$bias,
    DefaultValuedParameter<"bool", "false">:$saturate
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Storage bits: 1 + exponent + mantissa.
    unsigned getWidth() const { return 1 + getExponent() + getMantissa(); }
    /// The exponent bias, 2^(e-1) - 1 + bias.
    int getFullBias() const { return (1 << (getExponent() - 1)) - 1 + getBias(); }
    /// Largest unbiased exponent of a finite value.
    int getMaxExponent() const;
    /// Smallest unbiased exponent of a normal value, 1 - full bias.
    int getMinNormalExponent() const { return 1 - getFullBias(); }
  }];
}

//===----------------------------------------------------------------------===//
// VariantAttr
//===----------------------------------------------------------------------===//

def QTrain_VariantAttr : QTrain_Attr<"Variant", "variant"> {
  let summary = "What a kernel variant function computes";
  let description = [{
    `qtrain-materialize-variants` outlines each product of a kernel site
    into one function per precision and tags it `qtrain.variant` with this
    attribute: the `site` (a non-negative index), the `product` (`forward`,
    `input_grad` or `weight_grad`) and the forward and backward bitwidths
    `bits` and `grad_bits` (0 to 16, 0 = fp32; a forward product does not
    depend on the backward bits, so its `grad_bits` is 0).
    `qtrain-integer-kernels` adds `kernel`: the arithmetic of the variant's
    products, `i8` or `i16` integer codes, `f32` (a product that stays on
    fake-quantized values) or `f64` (the reference of `f64-reference`). The
    bundle manifest reads it for each site's kernel kinds.

    ```mlir
    #qtrain.variant<site = 0, product = forward, bits = 4, grad_bits = 0>
    #qtrain.variant<site = 1, product = weight_grad, bits = 4, grad_bits = 8,
                    kernel = i8>
    ```
  }];
  let parameters = (ins
    "int64_t":$site,
    EnumParameter<QTrain_ProductKind>:$product,
    "unsigned":$bits,
    "unsigned":$grad_bits,
    OptionalParameter<"std::optional<::mlir::qtrain::KernelKind>">:$kernel
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The same variant with `kernel` set.
    VariantAttr withKernel(KernelKind kernel) const {
      return get(getContext(), getSite(), getProduct(), getBits(),
                 getGradBits(), kernel);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

def QTrain_CyclicScheduleAttr : QTrain_Attr<"CyclicSchedule", "cyclic"> {
  let summary = "A cyclic precision schedule (CPT and the Better Schedules family)";
  let description = [{
    Precision cycles between `min` and `max` bits `cycles` times over
    training. The period length is floor(total / cycles) (`period = floor`,
    CPT) or floor(total / cycles) + 1 (`period = floor_plus_one`, Better
    Schedules). With z the position in the period in [0, 1), the growth
    curves are cosine, linear, exponential (k = 4) and REX; `repeated` uses the
    growth curve in every period, `triangular` alternates a decay curve (even
    periods) with the growth curve (odd periods). For exponential and REX the
    decay is the growth curve mirrored vertically or horizontally (`flip`);
    cosine and linear have one decay and take no flip. Values are rounded half
    to even. The formulas are in `runtime/include/qtrain/runtime/Schedule.h`.

    ```mlir
    // CPT 3-8 bits, 32 cycles.
    #qtrain.cyclic<shape = cosine, min = 3, max = 8, cycles = 32, period = floor>
    // REX triangular with horizontal flip, 8 cycles.
    #qtrain.cyclic<shape = rex, mode = triangular, flip = horizontal, min = 3,
                   max = 8, cycles = 8, period = floor_plus_one>
    ```
  }];
  let parameters = (ins
    EnumParameter<QTrain_ShapeKind>:$shape,
    DefaultValuedParameter<"::mlir::qtrain::CycleMode",
                           "::mlir::qtrain::CycleMode::Repeated">:$mode,
    DefaultValuedParameter<"::mlir::qtrain::Flip",
                           "::mlir::qtrain::Flip::None">:$flip,
    "unsigned":$min,
    "unsigned":$max,
    "unsigned":$cycles,
    "::mlir::qtrain::PeriodConvention":$period
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def QTrain_StaticScheduleAttr : QTrain_Attr<"StaticSchedule", "static"> {
  let summary = "A constant precision";
  let description = [{
    The same bitwidth (1 to 16) at every step, or `fp32` for full precision
    (stored as 0 bits, the convention of the CPT code).

    ```mlir
    #qtrain.static<8>
    #qtrain.static<fp32>
    ```
  }];
  let parameters = (ins "unsigned":$bits);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isFullPrecision() const { return getBits() == 0; }
  }];
}

def QTrain_LearnedScheduleAttr : QTrain_Attr<"LearnedSchedule", "learned"> {
  let summary = "Learned per-layer precision (LDP)";
  let description = [{
    Each quantized layer owns a learnable scalar p initialized to 0; its
    bitwidth is clamp(round(p * (max - min) + min), min, max), rounded half to
    even, with straight-through gradients.

    ```mlir
    #qtrain.learned<min = 3, max = 8>
    ```
  }];
  let parameters = (ins "unsigned":$min, "unsigned":$max);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // QTRAIN_ATTRS_TD
