//===- Passes.td - qtrain quantization ---------------------*- tablegen -*-===//
//
// Quantization: the precision search's float formats, the quantizers of the
// precision schedule, the roundings, and how saved activations are stored;
// on tensors, before and after the training step is built.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_QUANT_PASSES_TD
#define QTRAIN_QUANT_PASSES_TD

include "mlir/Pass/PassBase.td"

def AssignPrecisionPass : Pass<"qtrain-assign-precision", "::mlir::ModuleOp"> {
  let summary = "Assign float formats per tensor under a memory budget (PAPERS.md section 4)";
  let description = [{
    Runs on the forward graph, before `qtrain-insert-rounding` and
    `qtrain-autodiff`. It builds the memory model of the training step:
    every module (an input argument, or an op of the forward function that
    computes a tensor from data: convolutions, GEMMs, elementwise ops,
    pooling, ...; reshapes alias their operand, and ops that only touch
    parameters, such as weight transposes and bias broadcasts, belong to
    the module that reads them) with its output Y and gradient GY, and every
    parameter P with its gradient GP, sized at the function's (training)
    batch. Groups are formed as the paper does: a new group at every input,
    convolution and GEMM; a group holds Y and GY of its modules and P and GP
    of the modules whose predecessor is in it.

    The search (`lib/Search`, `include/qtrain/Search/Assignment.h`) then
    picks the groups to store in low precision: with `ratio=r`, groups in
    `order` until they cover r of all elements (`largest` is the paper's
    greedy; `smallest` and `random` are its ablations; `scored` takes
    `scores`, one per group, descending; `profiled` is ours: the scores come
    from `profile`, a profiling run with every group low (qtrain-run
    --overflow-profile), as the bytes a group saves / (1 + its largest mean
    P/Y overflow ratio / `tolerance`), so groups whose low formats overflow
    go last); with `budget=BYTES`, the smallest
    r whose footprint fits, or an error that states the smallest footprint
    the search reaches.

    The pass writes `qtrain.formats` (and `qtrain.group`) on every module
    op and on every argument: `{y, gy}` for outputs and inputs, `{p, gp}` for
    parameters, each a `#qtrain.float` (P and Y saturate). Chosen groups get
    FP(4,3,4) for P and Y, FP(5,2,0) for GY and keep FP(6,9,0) for GP; all
    other tensors FP(6,9,0). It emits a remark per group (its modules,
    elements, bytes before and after, formats) and one summary remark, and
    writes the JSON report `report` (groups, tensors, formats, bytes,
    master weights and optimizer state) if given.

    Example: `--qtrain-assign-precision="ratio=0.6"`,
    `--qtrain-assign-precision="budget=4MiB order=largest report=a.json"`.
  }];
  let options = [
    Option<"forward", "forward", "std::string", /*default=*/"\"forward\"",
           "Name of the forward function">,
    Option<"ratio", "ratio", "double", /*default=*/"-1.0",
           "Fraction r in [0, 1] of all tensor elements to store in low "
           "precision (exclusive with budget)">,
    Option<"budget", "budget", "std::string", /*default=*/"\"\"",
           "Memory budget for the assigned tensors: bytes, or a number with "
           "KiB, MiB or GiB (exclusive with ratio)">,
    Option<"order", "order", "std::string", /*default=*/"\"largest\"",
           "Group order: largest (the paper), smallest, random, scored, "
           "profiled (ours)">,
    Option<"seed", "seed", "uint64_t", /*default=*/"0",
           "Seed of order=random">,
    ListOption<"scores", "scores", "double",
               "order=scored: one score per group, in group order">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write the assignment as JSON to this file">,
    Option<"profile", "profile", "std::string", /*default=*/"\"\"",
           "order=profiled: the overflow profile of qtrain-run "
           "--overflow-profile (a run with every group low)">,
    Option<"tolerance", "tolerance", "double", /*default=*/"0.001",
           "order=profiled: the overflow ratio that halves a group's score">,
  ];
  let dependentDialects = ["::mlir::qtrain::QTrainDialect"];
  let statistics = [
    Statistic<"numLowGroups", "low-groups", "Groups stored in low precision">,
  ];
}

def InsertQuantPass : Pass<"qtrain-insert-quant", "::mlir::ModuleOp"> {
  let summary = "Place the quantizers of a low-precision training method";
  let description = [{
    Runs on the forward graph, before `qtrain-autodiff`, so that the backward
    pass derived from it reads the quantized tensors. For every GEMM or
    convolution ("layer": linalg.matmul, batch_matmul, conv_2d_nchw_fchw,
    conv_2d_nhwc_hwcf) in program order, unless kept in full precision:

    - its weight (the operand computed from a `{qtrain.param}` argument,
      through transposes) is fake-quantized at the forward precision per
      output channel with nearest rounding, where the parameter enters;
    - its other input is fake-quantized at the forward precision per tensor
      (batch min/max) with nearest rounding, before any padding, as
      PyTorch pads inside the convolution;
    - its output passes through `qtrain.grad_quant`: the error entering the
      layer's backward pass is fake-quantized at the backward precision, per
      tensor, with stochastic rounding (Philox stream = the layer's index).

    With `grad-format=e5m2` (an option of issue #24, not in the paper) the
    error is instead rounded to fp8 e5m2, the GPU's backward fp8 format:
    `qtrain.grad_round_float %y to <5, 2, 0> scaled(57344.0) role error`,
    per tensor scaled by a power of two so that its largest magnitude is at
    most 57344 (e5m2's largest finite value), rounded to nearest even. It
    takes the place of the 8-bit error grid, so grad-bits must be 8; the
    module records `qtrain.grad_format = "e5m2"`.

    Both backward products (dX = E W, dW = E A) and the bias gradient then
    read the quantized error and the fake-quantized W and A, and dX and dW
    are not re-quantized: CPT exactly (PAPERS.md section 1). Batch norm,
    residual adds and the loss stay in full precision.

    Precisions are never baked in: `@forward` gains the arguments
    `%bits: i32 {qtrain.control = "bits"}`, `%grad_bits: i32
    {qtrain.control = "grad_bits"}`, `%seed: i64 {qtrain.control = "seed"}`
    and `%step: i32 {qtrain.control = "step"}`, which the training step
    inherits, so one compiled step serves every step of a schedule. The
    schedule (`schedule`, in the command-line syntax of
    `docs/schedules.md`) and the backward precision are recorded on the
    module as `qtrain.schedule` and `qtrain.grad_schedule` for the runtime.

    `policy=none` places no quantizers and adds no arguments; it records
    the fp32 schedule, for full-precision baselines built by the same
    pipeline.

    `policy=ldp` (LDP, PAPERS.md section 3; schedule `ldp:MIN:MAX`, default
    `ldp:3:8`) gives every quantized layer l a learnable 0-d parameter p_l
    (`{qtrain.param, qtrain.precision = l}`, initial value `ldp-init`) and
    quantizes its weight and input at `qtrain.learned_bits p_l`; the
    gradient reaches p_l through the quantizer scale. `@forward` gains a
    `{qtrain.state = "ldp_lambda"}` input (initial value `lambda`) and a
    `{qtrain.loss_term}` result, lambda * sum_l MACs_l b_l^2 / (sum_l MACs_l
    32^2), that `qtrain-autodiff` adds to the loss.

    Example: `--qtrain-insert-quant="policy=cpt schedule=cpt:3:8 grad-bits=8"`.
  }];
  let options = [
    Option<"forward", "forward", "std::string", /*default=*/"\"forward\"",
           "Name of the forward function">,
    Option<"policy", "policy", "std::string", /*default=*/"\"cpt\"",
           "Quantization policy: cpt (one forward precision per step from a "
           "schedule), static (one precision throughout) or none (fp32: no "
           "quantizers)">,
    Option<"bits", "bits", "unsigned", /*default=*/"8",
           "Forward precision of policy=static when no schedule is given">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"\"",
           "Default schedule of the bundle (default cpt:3:8 for policy=cpt, "
           "static:8 for policy=static)">,
    Option<"gradBits", "grad-bits", "unsigned", /*default=*/"8",
           "Backward (error) precision, 0 for fp32">,
    Option<"gradFormat", "grad-format", "std::string", /*default=*/"\"int\"",
           "How errors are quantized: int (PAPERS.md section 1: an integer "
           "grid of grad-bits bits, stochastic rounding) or e5m2 (fp8, "
           "scaled per tensor by a power of two, nearest rounding; needs "
           "grad-bits=8)">,
    ListOption<"fullPrecisionLayers", "full-precision-layers", "int64_t",
               "Layers kept in full precision, by index in program order; "
               "negative indices count from the end (-1 is the last)">,
    Option<"lambda", "lambda", "double", /*default=*/"1.0",
           "policy=ldp: the default weight of the cost term (the initial "
           "value of the ldp_lambda state; the runtime may override it)">,
    Option<"ldpInit", "ldp-init", "double", /*default=*/"0.0",
           "policy=ldp: the initial value of every learnable precision p "
           "(PAPERS.md section 3: 0.0, i.e. the minimum bits)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::mlir::qtrain::QTrainDialect"
  ];
  let statistics = [
    Statistic<"numLayers", "quantized-layers", "Layers quantized">,
  ];
}

def InsertRoundingPass : Pass<"qtrain-insert-rounding", "::mlir::ModuleOp"> {
  let summary = "Round every tensor to the float format qtrain-assign-precision chose";
  let description = [{
    Materializes the `qtrain.formats` of `qtrain-assign-precision` on the
    forward graph, before `qtrain-autodiff`:

    - a parameter with `{p, gp}` becomes `round_float(grad_round_float(p,
      gp), p)` where it enters: the forward pass reads P in its format and
      the gradient reaching the parameter (GP) is rounded to its format;
    - an op or input argument with `{y, gy}` has its uses read
      `grad_round_float(round_float(y, y), gy)`: Y in its format, and the
      gradient of Y (GY, which is GX of the modules reading it) rounded.

    Forward roundings saturate, backward ones overflow to +-inf (PAPERS.md
    section 4). The attributes are removed. A `qtrain.formats` that is not a
    dictionary of `#qtrain.float` with the keys the value needs is an error.

    With `loss-scale` (the default), the function also gains the dynamic
    loss scale of the paper as a state tensor, `tensor<1xf32>
    {qtrain.state = "loss_scale"}`, appended to its arguments and returned
    unchanged after its other results: `qtrain-autodiff` scales the loss
    gradient by it and divides the parameter gradients by it before the
    update, and the runtime sets it (65536 at the start, x2 every epoch,
    x0.5 with the step skipped when a gradient overflows). Run it after
    `qtrain-insert-quant`, whose controls come first in the step's ABI.

    With `promotion` (the default), every forward rounding of P or Y to a
    format other than the high FP(6,9,0) becomes promotable: two more state
    tensors of K elements (one per such tensor, `qtrain.tensors` names
    them) are appended. `{qtrain.state = "promotion"}` is read and returned
    unchanged: a non-zero element makes that tensor's rounding use
    FP(6,9,0) (`round_float ... or <6, 9, 0, saturate> if %flag`).
    `{qtrain.state = "overflow"}` is returned with, per tensor, the ratio of
    its elements that overflow the low format (`qtrain.count_overflow`).
    The runtime promotes a tensor for the rest of training when its ratio
    reaches a threshold (PAPERS.md section 4: 0.01).
  }];
  let options = [
    Option<"forward", "forward", "std::string", /*default=*/"\"forward\"",
           "Name of the forward function">,
    Option<"lossScale", "loss-scale", "bool", /*default=*/"true",
           "Add the dynamic loss scale state">,
    Option<"promotion", "promotion", "bool", /*default=*/"true",
           "Make low P and Y roundings promotable at run time">,
  ];
  let dependentDialects = ["::mlir::qtrain::QTrainDialect"];
}

def StoreSavedPass : Pass<"qtrain-store-saved", "::mlir::ModuleOp"> {
  let summary = "Keep the activations the backward pass reads at their format's width";
  let description = [{
    Runs on the training step, after `qtrain-autodiff`. Every activation
    rounded to a reduced float format (`qtrain.round_float`, role
    activation, a saturating format with fewer than 8 exponent bits) that
    the backward pass reads is encoded right after the rounding
    (`qtrain.encode_float`: i8 for formats of up to 8 bits, i16 up to 16; a
    promotable rounding takes the width of its wider format), and each
    backward op that read it reads `qtrain.decode_float` of the codes,
    decoded right before it. The forward pass still reads the f32 rounded
    values, so its results do not change; decoding gives back the rounded
    values bit for bit, so the backward pass does not change either. What
    changes is memory: with `qtrain-free-early` the f32 values die after
    the forward pass, and only the codes live until the backward pass: 1 or
    2 bytes per element instead of 4 (PAPERS.md section 4's "real storage").

    Backward ops are those `qtrain-autodiff` gave the role error or
    weight_grad. Parameters (P) stay f32: they are the master weights.
  }];
  let options = [
    Option<"train", "train", "std::string", /*default=*/"\"train_step\"",
           "Name of the training step">,
  ];
  let dependentDialects = ["::mlir::qtrain::QTrainDialect"];
  let statistics = [
    Statistic<"numStored", "stored-tensors", "Activations kept as codes">,
    Statistic<"bytesSaved", "bytes-saved", "Bytes saved per step against f32">,
  ];
}

#endif // QTRAIN_QUANT_PASSES_TD
