//===- QTrainOps.td - qtrain operations --------------------*- tablegen -*-===//
//
// Quantizers of the training step. Kernel-level ops (GEMM/conv sites and
// their dispatch) are added with the compile capability.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_OPS_TD
#define QTRAIN_OPS_TD

include "QTrain/QTrainAttrs.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// A per-tensor range is an f32 scalar, a per-channel range a 1-D f32 tensor.
def QTrain_RangeType : AnyTypeOf<[F32, 1DTensorOf<[F32]>]>;

//===----------------------------------------------------------------------===//
// FakeQuantOp
//===----------------------------------------------------------------------===//

def QTrain_FakeQuantOp : QTrain_Op<"fake_quant", [
    Pure, AllTypesMatch<["input", "result"]>, AttrSizedOperandSegments]> {
  let summary = "Quantize-dequantize a tensor on an asymmetric integer grid";
  let description = [{
    Rounds `input` to the `#qtrain.int<bits>` grid spanned by its range and
    returns the dequantized values (PAPERS.md section 1):

    ```
    s = max((mx - mn) / (2^b - 1), 1e-8)
    q = round(clamp((x - mn) / s [+ u], 0, 2^b - 1))
    y = q * s + mn
    ```

    `bits` is an i32 value so one op serves every precision of a schedule:
    it may come from the step's precision argument or be a constant. Bits 0
    means full precision: the op returns its input (the CPT convention). A
    constant outside [0, 16] is rejected.

    The range [mn, mx] is the min/max of the finite elements of the tensor
    (`granularity<per_tensor>`) or of each slice along `axis`
    (`granularity<per_channel, axis = a>`), unless `range(%mn, %mx)` gives it
    explicitly (an f32 each per tensor, or 1-D tensors with one entry per
    channel). With `width` the second operand is the range's width instead
    of its top, and the step is computed from it directly,

    ```
    s = max(w / (2^b - 1), 1e-8)        (FLT_MAX for w = +inf)
    ```

    as evaluation does with the EMA statistics of activations, which keep
    [min, range] (`qtrain.range_ema`): recomputing the width as
    `(mn + w) - mn` in f32 would not give `w` back. This is the reference's
    `RangeEma::fakeQuant` (`makeQuantGridFromRange`).

    `rounding nearest_even` rounds half to even. `rounding stochastic` adds
    noise u in [-0.5, 0.5) from the counter-based Philox4x32-10 stream with
    key `seed` (i64, the run's seed) and counter (element index / 4,
    `stream`, `step`), using word (element index mod 4) of each block, so a
    step replays exactly; `stream` tells apart the quantizers of one step.

    `role` records which tensor class is quantized. In reverse mode the op is
    straight-through: the gradient of the result passes to `input` unchanged.

    The numerics, including NaN/Inf handling, are those of the reference in
    `runtime/include/qtrain/runtime/Quantize.h`.

    Folds: with a constant `bits` of 0 the op folds to its input, which is
    exactly what it computes. Quantizing twice is not folded: re-deriving the
    scale from an already quantized tensor in f32 is not bit-identical.

    Example:

    ```mlir
    %w_q = qtrain.fake_quant %w, %bits role weight rounding nearest_even
        granularity<per_channel, axis = 0> : tensor<16x8xf32>
    %e_q = qtrain.fake_quant %e, %grad_bits role error rounding stochastic
        granularity<per_tensor> seed(%seed, %step) {stream = 3 : i64}
        : tensor<128x16xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[F32]>:$input,
    I32:$bits,
    Optional<QTrain_RangeType>:$min,
    Optional<QTrain_RangeType>:$max,
    Optional<I64>:$seed,
    Optional<I32>:$step,
    QTrain_RoleAttr:$role,
    QTrain_RoundingAttr:$rounding,
    QTrain_GranularityAttr:$granularity,
    DefaultValuedAttr<I64Attr, "0">:$stream,
    UnitAttr:$width
  );
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `,` $bits `role` `` $role `rounding` `` $rounding `granularity` `` $granularity
    (`range` `(` $min^ `,` $max `:` type($min) `,` type($max) `)`)?
    (`width` $width^)?
    (`seed` `(` $seed^ `,` $step `)`)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// The bitwidth when `bits` is a constant.
    std::optional<int64_t> getConstantBits();
  }];
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

def QTrain_QuantizeOp : QTrain_Op<"quantize", [
    Pure, AttrSizedOperandSegments, AllTypesMatch<["scale", "low"]>]> {
  let summary = "Integer codes of a tensor on the grid of qtrain.fake_quant";
  let description = [{
    Computes what `qtrain.fake_quant` computes at a constant `bits` (1 to
    16), the same operands (and `width`) meaning the same thing, but returns
    the grid
    instead of the dequantized values: the codes, the scale `s` and the
    range's low end `mn`, with

    ```
    q     = the grid index fake_quant computes, in [0, 2^b - 1]
    codes = q - 2^(b-1)            (i8 for b <= 8, i16 for 9 <= b <= 16)
    fake_quant(x) = q * s + mn = (codes + 2^(b-1)) * s + mn
    ```

    so that a product of two quantized tensors is an integer product of
    codes plus corrections (see `qtrain-integer-kernels`). `scale` and `low`
    are `tensor<f32>` per tensor, or one entry per channel along the
    granularity's axis. Codes are signed and centred so that 8-bit grids fit
    i8 and products of two codes fit 15 bits.

    NaN has no code: a NaN element gets code 0 and makes `low` NaN (every
    entry), so every value computed from the codes is NaN, never a silently
    finite result. Infinities are clamped to the ends of the grid, as
    fake_quant does.

    ```mlir
    %codes, %scale, %low = qtrain.quantize %w, 4 role weight
        rounding nearest_even granularity<per_channel, axis = 0>
        : tensor<6x25xf32> -> tensor<6x25xi8>, tensor<6xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[F32]>:$input,
    ConfinedAttr<I32Attr, [IntMinValue<1>, IntMaxValue<16>]>:$bits,
    Optional<QTrain_RangeType>:$min,
    Optional<QTrain_RangeType>:$max,
    Optional<I64>:$seed,
    Optional<I32>:$step,
    QTrain_RoleAttr:$role,
    QTrain_RoundingAttr:$rounding,
    QTrain_GranularityAttr:$granularity,
    DefaultValuedAttr<I64Attr, "0">:$stream,
    UnitAttr:$width
  );
  let results = (outs
    RankedTensorOf<[I8, I16]>:$codes,
    RankedTensorOf<[F32]>:$scale,
    RankedTensorOf<[F32]>:$low
  );
  let assemblyFormat = [{
    $input `,` $bits `role` `` $role `rounding` `` $rounding `granularity` `` $granularity
    (`range` `(` $min^ `,` $max `:` type($min) `,` type($max) `)`)?
    (`width` $width^)?
    (`seed` `(` $seed^ `,` $step `)`)? attr-dict `:` type($input) `->`
    type($codes) `,` type($scale)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The code storage type of a `bits`-wide grid: i8 up to 8 bits, else i16.
    static IntegerType getCodeType(MLIRContext *ctx, int64_t bits) {
      return IntegerType::get(ctx, bits <= 8 ? 8 : 16);
    }
  }];
}

//===----------------------------------------------------------------------===//
// GradQuantOp
//===----------------------------------------------------------------------===//

def QTrain_GradQuantOp : QTrain_Op<"grad_quant", [
    Pure, AllTypesMatch<["input", "result"]>, AttrSizedOperandSegments]> {
  let summary = "Identity forward; quantize the gradient that flows back";
  let description = [{
    Returns `input` unchanged. In reverse mode the gradient of the result is
    fake-quantized before it flows to `input`: per tensor, at `bits` bits,
    with `rounding` (stochastic with `seed(%seed, %step)` and `stream`, as
    `qtrain.fake_quant`), role `error`. This is CPT's quantization of the
    error entering a layer's backward pass: placed on a layer's output, both
    backward products of the layer (and its bias gradient) read the
    quantized error.

    `qtrain-autodiff` turns it into a `qtrain.fake_quant` of the adjoint and
    removes it; no other pass may fold it away, since its effect is only in
    the backward pass.

    ```mlir
    %y_e = qtrain.grad_quant %y, %grad_bits rounding stochastic
        seed(%seed, %step) {stream = 2 : i64} : tensor<128x120xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[F32]>:$input,
    I32:$bits,
    Optional<I64>:$seed,
    Optional<I32>:$step,
    QTrain_RoundingAttr:$rounding,
    DefaultValuedAttr<I64Attr, "0">:$stream
  );
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `,` $bits `rounding` `` $rounding
    (`seed` `(` $seed^ `,` $step `)`)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// RangeEmaOp
//===----------------------------------------------------------------------===//

def QTrain_RangeEmaOp : QTrain_Op<"range_ema", [
    Pure, AllTypesMatch<["state", "result"]>]> {
  let summary = "Update the running min/max of an activation";
  let description = [{
    Folds the range of `input` (min and max over its finite elements, 0 and
    0 when none is finite) into `state`, a `tensor<2xf32>` holding the
    running [min, range] (range = max - min), as CPT keeps statistics of
    each quantized activation for evaluation (PAPERS.md section 1; the
    reference is `RangeEma` in `runtime/include/qtrain/runtime/Quantize.h`):

    ```
    r      = max(input) - min(input)
    new[0] = state[0] * m + min(input) * (1 - m)
    new[1] = state[1] * m + r * (1 - m)
    ```

    in f32, multiply then add (no contraction), with m = `momentum` (0.9)
    and 1 - m computed in double and rounded to f32, as PyTorch does.
    States start at zero. Evaluation quantizes the activation with
    `range(%new[0], %new[1]) width`. Tracking [min, max] instead is equal
    in exact arithmetic only: in f32 it gives other scales. The result is
    not differentiated.

    ```mlir
    %ema2 = qtrain.range_ema %a, %ema : tensor<128x400xf32>, tensor<2xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[F32]>:$input,
    1DTensorOf<[F32]>:$state,
    DefaultValuedAttr<F64Attr, "0.9">:$momentum
  );
  let results = (outs 1DTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `,` $state attr-dict `:` type($input) `,` type($state)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The type of an EMA state: tensor<2xf32>, [min, range].
    static RankedTensorType getStateType(MLIRContext *ctx) {
      return RankedTensorType::get({2}, Float32Type::get(ctx));
    }
  }];
}

//===----------------------------------------------------------------------===//
// RunningStatOp
//===----------------------------------------------------------------------===//

def QTrain_RunningStatOp : QTrain_Op<"running_stat", [
    Pure, AllTypesMatch<["batch", "running", "stat", "updated"]>]> {
  let summary = "A batch statistic of training, its running average for eval";
  let description = [{
    Training-mode batch norm (PyTorch's `BatchNorm2d.train()`): the step
    normalizes with the batch's statistic and keeps a running average of it
    for evaluation.

    ```
    stat    = batch                                    (training step)
    updated = running * (1 - m) + (batch * c) * m      (as written)
    ```

    in the element type (f32; f64 for gradient checks), with m =
    `momentum` (PyTorch's 0.1; 1 - m computed in double and rounded to the
    element type) and c = `correction`: 1 for the mean, n / (n - 1) for
    the variance (the step normalizes with the biased variance of n
    elements per channel, the running average keeps the unbiased one, as
    PyTorch). `running` is a `{qtrain.state}` argument and `updated` the
    state result that replaces it. In reverse mode `stat` is the identity
    of `batch`; `updated` is not differentiated. qtrain-autodiff turns
    the evaluation step's op into `stat = running` (`updated` is not
    returned there).

    ```mlir
    %mean, %rm2 = qtrain.running_stat %batch_mean, %rm : tensor<16xf32>
    %var, %rv2 = qtrain.running_stat %batch_var, %rv {correction = 1.0001}
        : tensor<16xf32>
    ```
  }];
  let arguments = (ins
    1DTensorOf<[F32, F64]>:$batch,
    1DTensorOf<[F32, F64]>:$running,
    DefaultValuedAttr<F64Attr, "0.1">:$momentum,
    DefaultValuedAttr<F64Attr, "1.0">:$correction
  );
  let results = (outs 1DTensorOf<[F32, F64]>:$stat,
                     1DTensorOf<[F32, F64]>:$updated);
  let assemblyFormat = [{
    $batch `,` $running attr-dict `:` type($batch)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// DropoutOp
//===----------------------------------------------------------------------===//

def QTrain_DropoutOp : QTrain_Op<"dropout", [
    Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Train-time dropout with a replayable Philox mask";
  let description = [{
    PyTorch's `nn.Dropout(p)` in training mode: each element is kept with
    probability 1 - p and scaled by 1 / (1 - p), or zeroed:

    ```
    u      = noise(seed, stream, step, i) + 0.5      in [0, 1), 2^-24 steps
    result = u >= p ? input * s : 0,    s = 1 / (1 - p) rounded to f32
    ```

    with `noise` the Philox4x32-10 stream of stochastic rounding
    (docs/numerics.md section 2: key `seed`, counter (element index / 4,
    `stream`, `step`), word (element index mod 4)), the element index
    row-major. The mask is a pure function of (seed, stream, step, i), so a
    step and its backward pass draw the same mask and any other
    implementation can replay it (qtrain-import-torch --check does, in
    PyTorch). In reverse mode the gradient is the same op on the adjoint
    (the same mask); qtrain-autodiff makes the evaluation step's op the
    identity. `qtrain-insert-dropout` creates it from the dropout marks of
    a forward graph, one `stream` per site (0x44500000 + site).

    ```mlir
    %y = qtrain.dropout %x seed(%seed, %step) {p = 2.5e-01 : f64,
        stream = 1146093568 : i64} : tensor<128x120xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[F32, F64]>:$input,
    I64:$seed,
    I32:$step,
    F64Attr:$p,
    I64Attr:$stream
  );
  let results = (outs RankedTensorOf<[F32, F64]>:$result);
  let assemblyFormat = [{
    $input `seed` `(` $seed `,` $step `)` attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// LearnedBitsOp
//===----------------------------------------------------------------------===//

def QTrain_LearnedBitsOp : QTrain_Op<"learned_bits", [
    Pure, SameOperandsAndResultType]> {
  let summary = "The bitwidth of a layer from its learnable precision (LDP)";
  let description = [{
    PAPERS.md section 3: a quantized layer's bitwidth from its learnable
    scalar p (a 0-d parameter),

    ```
    b = clamp(rint(p * float(max - min) + float(min)), min, max)
    ```

    in f32, multiply then add (no contraction), rint half to even; NaN gives
    `min`. The result is an integer-valued f32, the same value the runtime's
    `ldpBits` computes to select the layer's kernel variant. Round and clamp
    are straight-through: in reverse mode d p = (max - min) * d b.

    ```mlir
    %b = qtrain.learned_bits %p range 3 to 8 : tensor<f32>
    ```
  }];
  let arguments = (ins
    0DTensorOf<[F32]>:$precision,
    I32Attr:$min_bits,
    I32Attr:$max_bits
  );
  let results = (outs 0DTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $precision `range` $min_bits `to` $max_bits attr-dict `:` type($precision)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// RoundFloatOp
//===----------------------------------------------------------------------===//

def QTrain_RoundFloatOp : QTrain_Op<"round_float", [
    Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Round a tensor to a reduced floating-point format";
  let description = [{
    Rounds every element of `input` to the nearest value of `format`
    (`#qtrain.float<e, m, bias>`), ties to even, subnormals included, and
    returns it in f32. Overflow gives the largest finite value when the format
    saturates (forward tensors P and Y in PAPERS.md section 4) and +-inf
    otherwise (backward tensors). NaN stays NaN. The numerics are those of
    `runtime/include/qtrain/runtime/FloatFormat.h`.

    With `or <high> if %promoted` it rounds to `high` instead when the i1
    `%promoted` is true: the run-time promotion of PAPERS.md section 4, where
    a tensor whose low format overflows too often is switched to the high
    format without recompiling. Both roundings are compiled into the same
    loop; the flag picks one at run time.

    With `scaled(M)` the tensor is first scaled per tensor by a power of
    two: 2^-k with k the smallest integer such that max|x| <= M * 2^k
    (k clamped to [-100, 100]; k = 0 for an all-zero tensor), rounded, and
    scaled back by 2^k, both exact. M must be a positive value of the
    format. It is how an fp8 tensor of the hardware's e5m2 (FP(5, 2, 0) up
    to 57344, its largest value below the top binade) stores a tensor of
    any range: the option `grad-format=e5m2` of `qtrain-insert-quant`
    rounds CPT's errors so. NaN or inf in the tensor makes every result
    NaN or inf (their scale is not finite).

    Folds, each exact: rounding an already rounded tensor to the same format
    (and the same scaling) returns it (rounding is idempotent, saturated or
    not), and
    `#qtrain.float<8, 23, 0>` without saturation is f32 itself (neither
    applies to a promotable rounding).

    Example:

    ```mlir
    %y_low = qtrain.round_float %y to <4, 3, 4, saturate> role activation
        : tensor<128x84xf32>
    %y_p = qtrain.round_float %y to <4, 3, 4, saturate>
        or <6, 9, 0, saturate> if %promoted : tensor<128x84xf32>
    %e8 = qtrain.round_float %dy to <5, 2, 0> scaled(57344.0) role error
        : tensor<128x84xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[F32]>:$input,
    QTrain_FloatFormatAttr:$format,
    Optional<I1>:$promoted,
    OptionalAttr<QTrain_FloatFormatAttr>:$promotedFormat,
    OptionalAttr<F32Attr>:$scaledMax,
    OptionalAttr<QTrain_RoleAttr>:$role
  );
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `to` $format (`or` $promotedFormat^ `if` $promoted)?
    (`scaled` `(` $scaledMax^ `)`)? (`role` `` $role^)? attr-dict
    `:` type($input)
  }];
  let builders = [
    OpBuilder<(ins "Value":$input, "FloatFormatAttr":$format,
                   "RoleAttr":$role), [{
      build($_builder, $_state, input.getType(), input, format, Value(),
            FloatFormatAttr(), FloatAttr(), role);
    }]>,
    OpBuilder<(ins "Value":$input, "FloatFormatAttr":$format,
                   "FloatAttr":$scaledMax, "RoleAttr":$role), [{
      build($_builder, $_state, input.getType(), input, format, Value(),
            FloatFormatAttr(), scaledMax, role);
    }]>
  ];
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// EncodeFloatOp, DecodeFloatOp
//===----------------------------------------------------------------------===//

def QTrain_EncodeFloatOp : QTrain_Op<"encode_float", [Pure]> {
  let summary = "Store values of a reduced float format in their bits";
  let description = [{
    The codes of `input`, whose elements must be values of `format` (the
    result of `qtrain.round_float` to it), in integers of the result's width
    (i8 or i16, at least the format's 1 + e + m bits): sign, exponent field
    and mantissa, as the format defines them. With `or <high> if %promoted`
    the flag picks the format, as for `round_float`, and the codes must fit
    both. Formats with 8 exponent bits (which reserve inf/NaN codes) are not
    encoded. NaN has no code in these formats: it is stored as the largest
    finite magnitude of its sign (the step's loss is NaN in that case
    anyway, since the forward pass reads the rounded values themselves).

    `qtrain-store-saved` uses it to keep the activations the backward pass
    reads at their real width.

    ```mlir
    %codes = qtrain.encode_float %y_low to <4, 3, 4, saturate>
        : tensor<128x84xf32> -> tensor<128x84xi8>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[F32]>:$input,
    QTrain_FloatFormatAttr:$format,
    Optional<I1>:$promoted,
    OptionalAttr<QTrain_FloatFormatAttr>:$promotedFormat
  );
  let results = (outs RankedTensorOf<[I8, I16]>:$result);
  let assemblyFormat = [{
    $input `to` $format (`or` $promotedFormat^ `if` $promoted)? attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def QTrain_DecodeFloatOp : QTrain_Op<"decode_float", [Pure]> {
  let summary = "The f32 values of codes of a reduced float format";
  let description = [{
    The inverse of `qtrain.encode_float` with the same formats and flag:
    every code becomes the f32 value it stands for (exactly: every value of
    a lowerable format is an f32).

    ```mlir
    %y = qtrain.decode_float %codes from <4, 3, 4, saturate>
        : tensor<128x84xi8> -> tensor<128x84xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[I8, I16]>:$input,
    QTrain_FloatFormatAttr:$format,
    Optional<I1>:$promoted,
    OptionalAttr<QTrain_FloatFormatAttr>:$promotedFormat
  );
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `from` $format (`or` $promotedFormat^ `if` $promoted)? attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// CountOverflowOp
//===----------------------------------------------------------------------===//

def QTrain_CountOverflowOp : QTrain_Op<"count_overflow", [Pure]> {
  let summary = "Count the elements that overflow a float format";
  let description = [{
    The number of elements of `input` whose magnitude is at least the
    overflow threshold of `format` (the smallest magnitude that rounds past
    its largest finite value), infinities included, NaN not. The run-time
    promotion of PAPERS.md section 4 compares the ratio of this count to the
    element count with a threshold (0.01).

    ```mlir
    %n = qtrain.count_overflow %y for <4, 3, 4, saturate> : tensor<128x84xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[F32]>:$input,
    QTrain_FloatFormatAttr:$format
  );
  let results = (outs I64:$count);
  let assemblyFormat = [{
    $input `for` $format attr-dict `:` type($input)
  }];
}

//===----------------------------------------------------------------------===//
// GradRoundFloatOp
//===----------------------------------------------------------------------===//

def QTrain_GradRoundFloatOp : QTrain_Op<"grad_round_float", [
    Pure, SameOperandsAndResultType]> {
  let summary = "Identity forward; round the gradient that flows back";
  let description = [{
    Returns `input` unchanged. In reverse mode the gradient of the result is
    rounded to `format` (as `qtrain.round_float`) before it flows to
    `input`. This is how PAPERS.md section 4 stores a gradient in a reduced
    format: placed on a module's output it rounds GY, the gradient of that
    output (and so GX of the modules reading it); placed on a parameter it
    rounds GP. Backward formats do not saturate: an overflow gives +-inf,
    which dynamic loss scaling detects.

    `qtrain-autodiff` turns it into a `qtrain.round_float` of the adjoint
    and removes it; no other pass may fold it away, since its effect is only
    in the backward pass.

    With `scaled(M)` the gradient is rounded as `qtrain.round_float` with
    `scaled(M)` does: per tensor, by a power of two, so that it fits the
    format up to M. CPT's fp8 backward (`grad-format=e5m2`) places it where
    `qtrain.grad_quant` would be.

    ```mlir
    %y_gy = qtrain.grad_round_float %y to <5, 2, 0> role error
        : tensor<128x84xf32>
    %y_e = qtrain.grad_round_float %y to <5, 2, 0> scaled(57344.0) role error
        : tensor<128x84xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[F32]>:$input,
    QTrain_FloatFormatAttr:$format,
    OptionalAttr<F32Attr>:$scaledMax,
    OptionalAttr<QTrain_RoleAttr>:$role
  );
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `to` $format (`scaled` `(` $scaledMax^ `)`)? (`role` `` $role^)?
    attr-dict `:` type($input)
  }];
  let builders = [
    OpBuilder<(ins "Value":$input, "FloatFormatAttr":$format,
                   "RoleAttr":$role), [{
      build($_builder, $_state, input.getType(), input, format, FloatAttr(),
            role);
    }]>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

def QTrain_KernelOp : QTrain_Op<"kernel", [
    RecursiveMemoryEffects, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "One product of a kernel site, with its operands' quantizers";
  let description = [{
    A kernel site is a quantized GEMM or convolution; each of its products
    (the forward product and the two backward ones) is one `qtrain.kernel`:
    the linalg op that computes it together with the quantizers of its
    operands and the data movement between them (transposes, zero padding,
    the flipped kernel of a convolution's input gradient). The kernel owns
    the precisions of its operands: each quantizer in its body reads the
    step's forward bits, or its backward bits for the error, and nothing
    else reads them. `qtrain-form-kernels` builds kernels from the tags
    `qtrain-insert-quant` and `qtrain-autodiff` leave (`qtrain.layer`,
    `qtrain.product`); `qtrain-materialize-variants` turns each into one
    function per precision and a dispatch on the site's slot.

    The region is not isolated from above: it reads the step's values
    (operands, precisions, seeds) directly. It yields the product.

    ```mlir
    %y = qtrain.kernel site 0 "forward" -> tensor<128x120xf32> {
      %xq = qtrain.fake_quant %x, %bits role activation rounding nearest_even
          granularity<per_tensor> : tensor<128x400xf32>
      %wq = qtrain.fake_quant %w, %bits role weight rounding nearest_even
          granularity<per_channel, axis = 0> : tensor<120x400xf32>
      %wt = linalg.transpose ins(%wq : tensor<120x400xf32>)
          outs(%e : tensor<400x120xf32>) permutation = [1, 0]
      %p = linalg.matmul ins(%xq, %wt : ...) outs(%init : ...) -> ...
      qtrain.yield %p : tensor<128x120xf32>
    }
    ```
  }];
  let arguments = (ins I64Attr:$site, StrAttr:$product);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `site` $site $product attr-dict-with-keyword `->` type($results) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The linalg op whose result the kernel yields.
    Operation *getProductOp();
  }];
}

def QTrain_YieldOp : QTrain_Op<"yield", [
    Pure, Terminator, ReturnLike, HasParent<"KernelOp">]> {
  let summary = "The result of a qtrain.kernel";
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let builders = [OpBuilder<(ins), [{ /* nothing */ }]>];
}

#endif // QTRAIN_OPS_TD
