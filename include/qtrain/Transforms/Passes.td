//===- Passes.td - qtrain transforms -----------------------*- tablegen -*-===//
//
// Passes that stay on tensors: building the training step and placing
// quantizers.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_TRANSFORMS_PASSES_TD
#define QTRAIN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AutodiffPass : Pass<"qtrain-autodiff", "::mlir::ModuleOp"> {
  let summary = "Build the training step and the eval step from a forward graph";
  let description = [{
    Takes `func.func @forward(%p0 {qtrain.param}, ..., %x) -> logits` in
    upstream dialects and adds

    ```
    @train_step(params..., momentum buffers..., inputs..., labels,
                lr: f32, momentum: f32, weight_decay: f32)
        -> (new params..., new momentum buffers..., loss: f32)
    @eval_step(params..., inputs...) -> logits
    ```

    replacing `@forward`. The backward pass is derived by reverse-mode
    differentiation (`include/qtrain/Autodiff/ReverseMode.h`): every linalg
    structured op whose differentiated operand is read through a projected
    permutation (elementwise, broadcast, transpose, reduction, matmul in all
    forms) by differentiating its scalar body; convolutions (nchw_fchw,
    nhwc_hwcf, depthwise nchw_chw and nhwc_hwc) with a flipped-kernel
    convolution for the input gradient;
    max/sum pooling; tensor.pad, expand/collapse_shape, extract/insert_slice;
    quantizers straight-through. Gradients are only computed for values that
    depend on a parameter, so there is none for the input batch.

    The loss is softmax cross-entropy against i64 class labels or mean squared
    error, each the mean over the batch as in PyTorch; the optimizer is
    PyTorch's SGD with momentum and weight decay (no dampening), its
    hyperparameters operands of the step so they can change per run.

    Ops of the step carry `qtrain.role`: forward results `activation`,
    backward results `error`, parameter gradients `weight_grad`. A forward
    op without a reverse-mode rule is a located error naming the op and the
    function.

    Example: `qtrain-opt lenet.mlir --qtrain-autodiff="loss=cross-entropy"`.
  }];
  let options = [
    Option<"forward", "forward", "std::string", /*default=*/"\"forward\"",
           "Name of the forward function">,
    Option<"trainEntry", "train-entry", "std::string",
           /*default=*/"\"train_step\"", "Name of the training step">,
    Option<"evalEntry", "eval-entry", "std::string",
           /*default=*/"\"eval_step\"", "Name of the evaluation step">,
    Option<"loss", "loss", "std::string", /*default=*/"\"cross-entropy\"",
           "Loss: cross-entropy (i64 class labels) or mse">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::mlir::qtrain::QTrainDialect"
  ];
  let statistics = [
    Statistic<"numDifferentiated", "differentiated-ops",
              "Forward ops differentiated">,
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

def LiftParamsPass : Pass<"qtrain-lift-params", "::mlir::ModuleOp"> {
  let summary = "Turn the weights an exporter inlined as constants into parameters";
  let description = [{
    torch-mlir inlines a model's weights into the exported function as
    `arith.constant`s (`dense` or `dense_resource` blobs). This pass turns
    every float tensor constant of `@forward` with at least `min-elements`
    elements that is not a splat into a new argument marked
    `{qtrain.param}`; splats (fills, padding values) and small constants stay
    constants. The parameters are inserted after the leading
    `{qtrain.param}` arguments (first, for an export), in the order the graph
    first uses them; the other arguments keep their order. Each parameter
    keeps its exported value as `qtrain.init` (the constant's own
    `DenseElementsAttr` or `DenseResourceElementsAttr`), the initial value of
    the bundle, unless `reinit` is set.

    ```mlir
    func.func @forward(%x: tensor<1x784xf32>) -> tensor<1x10xf32> {
      %w = arith.constant dense_resource<fc_w> : tensor<784x10xf32>
      ... linalg.matmul ins(%x, %w : ...) ...
    // becomes
    func.func @forward(%arg0: tensor<784x10xf32>
                           {qtrain.init = dense_resource<fc_w> : tensor<784x10xf32>,
                            qtrain.param},
                       %x: tensor<1x784xf32>) -> tensor<1x10xf32> {
      ... linalg.matmul ins(%x, %arg0 : ...) ...
    ```

    Each lifted constant is reported with a remark. Errors: no `@forward`, a
    constant that would need lifting in a function `@forward` calls (inline
    first), a non-float tensor constant that is not a splat, and nothing to
    lift in a `@forward` without parameters.
  }];
  let options = [
    Option<"forward", "forward", "std::string", /*default=*/"\"forward\"",
           "Name of the forward function">,
    Option<"minElements", "min-elements", "unsigned", /*default=*/"2",
           "Constants with fewer elements stay constants">,
    Option<"reinit", "reinit", "bool", /*default=*/"false",
           "Record no initial values (the runtime initializes the "
           "parameters)">,
  ];
  let statistics = [
    Statistic<"numLifted", "lifted-params", "Constants lifted into parameters">,
  ];
}

def RebatchPass : Pass<"qtrain-rebatch", "::mlir::ModuleOp"> {
  let summary = "Re-infer the shapes of a forward graph exported at another batch size";
  let description = [{
    Exporters trace a model at a fixed batch (torch-mlir: usually 1). This
    pass rewrites `@forward` from batch `from` to batch `batch`: the leading
    dimension of every input that is not a `{qtrain.param}` and of the
    result, and every tensor type derived from them. It is a shape
    re-inference, not a substitution: the batch dimension is followed
    through the data flow (linalg indexing maps, tensor.pad, collapse/
    expand_shape, extract/insert_slice, tensor.cast), backwards into the
    `tensor.empty`/`linalg.fill`/broadcast inits of the ops that carry it,
    and only those dimensions change. A linalg input that indexes the unit
    batch with a constant 0 (torch-mlir's broadcast of size-1 dimensions)
    is given the batch loop instead.

    ```mlir
    %0 = tensor.empty() : tensor<1x10xf32>
    %1 = linalg.matmul ins(%x, %w : tensor<1x784xf32>, tensor<784x10xf32>)
           outs(%0 : tensor<1x10xf32>) -> tensor<1x10xf32>
    // with batch=4
    %0 = tensor.empty() : tensor<4x10xf32>
    %1 = linalg.matmul ins(%x, %w : tensor<4x784xf32>, tensor<784x10xf32>)
           outs(%0 : tensor<4x10xf32>) -> tensor<4x10xf32>
    ```

    Whatever cannot be rebatched soundly is a located error naming the op:
    a reshape that mixes the batch with other dimensions, a reduction over
    the batch, padding or slicing of the batch, a parameter or constant that
    would need the batch dimension, an op without a rule.

    Example: `--qtrain-rebatch="batch=128"`.
  }];
  let options = [
    Option<"forward", "forward", "std::string", /*default=*/"\"forward\"",
           "Name of the forward function">,
    Option<"batch", "batch", "int64_t", /*default=*/"0",
           "The new batch size (required)">,
    Option<"from", "from", "int64_t", /*default=*/"0",
           "The batch size of the export (default: the leading dimension of "
           "the first input that is not a parameter)">,
  ];
  let statistics = [
    Statistic<"numRewritten", "rewritten-ops", "Ops whose types changed">,
  ];
}

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

def InferRolesPass : Pass<"qtrain-infer-roles", "::mlir::ModuleOp"> {
  let summary = "Assign tensor roles in a training step that has its backward";
  let description = [{
    For a training step written or exported with its backward pass already
    in it (a joint forward/backward graph, as aot_autograd produces), tags
    every tensor-valued op with `qtrain.role`, with the meaning
    `qtrain-autodiff` gives the roles of the steps it builds, so the passes
    that read roles work on either.

    Contract: parameters carry `{qtrain.param}`; the gradient that starts the
    backward pass (aot_autograd's tangents) is an argument marked
    `{qtrain.role = #qtrain<role error>}`. Then, in program order, an op
    computed from an error is an `error`; an op that only reshapes or
    transposes weights is a `weight`; everything else is an `activation`.
    A backward value is a `weight_grad` when the step returns it with the
    result attribute `{qtrain.role = #qtrain<role weight_grad>}`, or when an
    op that also reads a parameter of the same type consumes it (the
    optimizer update). A remark gives the counts.

    ```sh
    qtrain-opt joint.mlir --qtrain-infer-roles="entry=train_step"
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"train_step\"",
           "Name of the training step">,
  ];
}

def CollapseDimsPass : Pass<"qtrain-collapse-dims"> {
  let summary = "Merge the contiguous loops of linalg.generic into one";
  let description = [{
    Merges each run of two or more adjacent loops of a `linalg.generic` on
    statically shaped tensors into one loop, when the loops have the same
    iterator type and every indexing map keeps the run adjacent and in
    order (so every operand is contiguous along it). The operands are
    reshaped with `tensor.collapse_shape`, the results back with
    `tensor.expand_shape`. Generics using `linalg.index` are left alone.

    Elementwise code then runs as one long loop (a ReLU over
    [128, 32, 26, 26] as 2768896 elements) and reductions over several
    dimensions read long rows, which LLVM vectorizes at full width with no
    short remainder loops. The merged loops keep their row-major order, so
    reductions keep theirs and the results are the same bit for bit.
    `qtrain-lower-cpu` runs it before `qtrain-loop-order`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ReuseDyingInputsPass : Pass<"qtrain-reuse-dying-inputs"> {
  let summary = "Write elementwise results into the buffer of a dying input";
  let description = [{
    For each all-parallel `linalg.generic` on tensors whose init is a
    `tensor.empty` (possibly reshaped) that the body does not read: if an
    input has the result's type, is read through the identity map and is an
    op's result that only this generic reads (looking through reshapes), it
    becomes the init too. One-shot bufferization then writes the result
    into the input's buffer instead of allocating a second one while the
    input is still alive. The computation does not change.
    `qtrain-lower-cpu` runs it right before bufferization.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def UnrollShortLoopsPass : Pass<"qtrain-unroll-short-loops"> {
  let summary = "Fully unroll innermost scf.for loops of at most 4 iterations";
  let description = [{
    Fully unrolls every innermost `scf.for` whose trip count is a constant
    between 1 and `max-trip-count`. The copies of the body then share what
    they compute from the outer loops only, which canonicalization and LLVM
    merge. `convert-qtrain-to-linalg` lays stochastic rounding out as
    [N / 4, 4] with the Philox block a function of the outer loop, so after
    this pass one Philox4x32-10 serves four elements instead of being
    recomputed for each. `qtrain-lower-cpu` runs it after
    `convert-linalg-to-loops`.
  }];
  let options = [
    Option<"maxTripCount", "max-trip-count", "int64_t", /*default=*/"4",
           "Largest trip count unrolled">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numUnrolled", "unrolled", "Loops fully unrolled">,
  ];
}

def ReassociateSumsPass : Pass<"qtrain-reassociate-sums"> {
  let summary = "Let the f32 sums of linalg reductions vectorize";
  let description = [{
    Marks `reassoc` the f32 `arith.addf` that folds each element into the
    accumulator of a `linalg.generic` reduction (`acc + x`, the output's
    block argument used only there, the sum yielded), so that LLVM may keep
    vector partial sums where the reduction loop is innermost: a bias
    gradient summing 576 contiguous elements per row becomes 16-wide adds
    instead of a chain of dependent scalar additions. The results stay
    deterministic but are no longer summed in loop order (ulp-level
    differences). Integer sums (exact) and f64 epilogues are not touched.
    `qtrain-lower-cpu` runs it after `qtrain-loop-order`; f32 GEMMs and
    convolutions, which the microkernels run, are not affected.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numReassociated", "reassociated", "Sums marked reassoc">,
  ];
}

def LoopOrderPass : Pass<"qtrain-loop-order"> {
  let summary = "Put the output's last dimension innermost in reductions";
  let description = [{
    Lowered linalg ops run their loops in the order of their dimensions. In
    a GEMM written (m, n, k) or a convolution (n, f, oh, ow, c, kh, kw) the
    innermost loop is a reduction: it strides one operand and accumulates
    into a scalar, which LLVM cannot vectorize for floats (that would
    reassociate the sum). This pass reorders the loops of every linalg op
    with reductions to: the other parallel loops, the reduction loops (in
    their order), then the loop of the output's last dimension, provided
    every input is invariant in that loop or walks it in its own last
    dimension. Named ops that it reorders become linalg.generic.

    Each output element's sum keeps its order (the reduction loops keep
    theirs), so the results are the same bit for bit; only the traversal
    changes, to unit-stride loads and stores that vectorize.
    `qtrain-lower-cpu` runs it before bufferization.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numReordered", "reordered", "Linalg ops whose loops moved">,
  ];
}

def MaterializeVariantsPass : Pass<"qtrain-materialize-variants",
                                   "::mlir::ModuleOp"> {
  let summary = "One specialized kernel per site and precision, selected by slot";
  let description = [{
    Runs on the output of `qtrain-autodiff`. Every quantized layer is a
    kernel site (`qtrain.layer = k`) with three products: the forward op
    (`qtrain.product = "forward"`) and the two backward products
    (`"input_grad"`, `"weight_grad"`). Each product is outlined, together
    with the quantizers (and transposes and paddings of quantized values)
    that feed it, into functions, one per precision the site can run at,
    with the bitwidths as constants:

    ```
    @train_step_site1_forward_b4(...)          forward at 4 bits
    @train_step_site1_input_grad_b4_g8(...)    input gradient at 4/8 bits
    @eval_step_site1_forward_b4(...)           forward with running ranges
    ```

    The site's variant list is (0, 0) when `fp32` is set, then every
    (bits, grad_bits) of `bits` x `grad-bits`. The step gains the argument
    `%slots: tensor<N x i32> {qtrain.control = "slots"}` (one entry per
    site, before the labels of `@train_step`, last in `@eval_step`), and
    each product becomes an `scf.index_switch` on its site's slot that calls
    the variant; the runtime writes the variant index to the slot before
    each step. The variant functions carry `qtrain.variant = {site, product,
    bits, grad_bits}`; the module gets `qtrain.sites` (the variant list of
    every site, with the site's op and MACs) for the bundle manifest.

    A request for more variant functions than `max-variants` is refused with
    the numbers. One remark per site gives its op, MACs and variant count.
  }];
  let options = [
    Option<"bits", "bits", "std::string", /*default=*/"\"3:8\"",
           "Forward precisions: a range MIN:MAX or a list B,B,...">,
    Option<"gradBits", "grad-bits", "std::string", /*default=*/"\"8\"",
           "Backward (error) precisions: a range MIN:MAX or a list">,
    Option<"fp32", "fp32", "bool", /*default=*/"true",
           "Also materialize the full-precision variant (0/0)">,
    Option<"maxVariants", "max-variants", "unsigned", /*default=*/"1000",
           "Refuse requests that would create more variant functions">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let statistics = [
    Statistic<"numVariants", "variants", "Variant functions created">,
  ];
}

def FormKernelsPass : Pass<"qtrain-form-kernels", "ModuleOp"> {
  let summary = "Wrap every product of a kernel site in a qtrain.kernel";
  let description = [{
    Each product of a kernel site (the op `qtrain-insert-quant` tags with
    `qtrain.layer`, and the two gradient products `qtrain-autodiff` tags
    with the same site and `qtrain.product = "input_grad" | "weight_grad"`)
    becomes a `qtrain.kernel` holding the product and, for each operand, the
    quantizer it reads through transposes, zero padding and other data
    movement (the flipped kernel of a convolution's input gradient). A
    quantizer shared by two products (a weight's, read by the forward
    product and the input gradient) is cloned into both; the original goes
    once unused. The kernel owns its operands' precisions: nothing outside
    it reads its quantizers.

    A module without tagged products or kernels is an error, as is a tagged
    op that is not a linalg op with one result. Running the pass again
    changes nothing.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::qtrain::QTrainDialect"
  ];
  let statistics = [
    Statistic<"numKernels", "kernels", "qtrain.kernel ops formed">,
  ];
}

def IntegerKernelsPass : Pass<"qtrain-integer-kernels", "ModuleOp"> {
  let summary = "Integer kernels for the products of quantized operands";
  let description = [{
    In every kernel variant (a function with `qtrain.variant`, made by
    `qtrain-materialize-variants`), a product whose two factors are
    quantized on integer grids of constant bitwidth (through zero padding
    and transposes) becomes an integer contraction of their codes
    (`qtrain.quantize`) plus zero-point corrections:

    ```
    a = (ca + ha) * sa + la   (ha = 2^(ba-1), the codes ca are centred)
    y = init + sa*sw*T1 + sa*lw'*T2 + la'*sw*T3 + la'*lw'*T4
    T1 = sum ca*cw   T2 = sum ca*mw   T3 = sum ma*cw   T4 = sum ma*mw
    ```

    with l' = l + h*s, m the 0/1 mask of an operand (0 in its zero padding,
    where its value is 0, not a grid point), every T an exact integer
    contraction over the same loops as the product, and the epilogue in
    f64 in exactly that order, rounded once to f32. A correction term runs
    the contraction with the loops private to the masked operand collapsed
    to one iteration, so it costs 1/F of the main term (F: that operand's
    private extent, e.g. the output channels). Codes are i8 up to 8 bits and
    i16 up to 16; each term accumulates in i32 when its reduction length
    times the largest product of codes cannot overflow it, else in i64.

    A product stays in f32 on the fake-quantized values, with one remark
    per site and product, when its factors are not both quantized or when a
    per-channel scale runs along a reduction dimension (the input gradient
    of a layer with per-output-channel weights): such a sum cannot be
    factored into one integer product. The variant's `qtrain.variant`
    dictionary gets `kernel = "i8"`, `"i16"` or `"f32"`.

    With `reference-sums`, the terms are computed plainly: i64 accumulators
    and full-size masks, nothing collapsed; the optimized form must equal
    it bit for bit. With `f64-reference`, every product instead accumulates its
    fake-quantized operands in f64 and rounds once to f32
    (`kernel = "f64"`): what the reference quantizer plus an fp64 product
    predicts, which the integer kernels are checked against.
  }];
  let options = [
    Option<"f64Reference", "f64-reference", "bool", /*default=*/"false",
           "Accumulate every product in f64 instead (the reference)">,
    Option<"referenceSums", "reference-sums", "bool", /*default=*/"false",
           "The plain integer form: i64 accumulators, full-size masks, no "
           "collapsed correction loops (a reference for the optimized one)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect", "::mlir::qtrain::QTrainDialect"
  ];
  let statistics = [
    Statistic<"numInteger", "integer-products", "Products made integer">,
    Statistic<"numFloat", "float-products", "Products left in f32">,
  ];
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

def FuseDecodesPass : Pass<"qtrain-fuse-decodes"> {
  let summary = "Decode saved float codes inside the elementwise loops that read them";
  let description = [{
    `convert-qtrain-to-linalg` lowers `qtrain.decode_float` to an
    elementwise `linalg.generic` marked `qtrain.decode`, which materializes
    a whole f32 tensor for its reader. This pass fuses each such loop into
    every elementwise `linalg.generic` that reads it
    (`linalg::fuseElementwiseOps`), so the values are decoded as they are
    read and the f32 tensor is never stored (the backward pass of a ReLU
    reads its saved input's codes directly). Readers with reductions (the
    weight-gradient contractions, which `qtrain-conv-to-gemm` turns into
    GEMMs) keep the decoded tensor. A strided slice of a decoded tensor
    (the windows a pooling gradient reads) becomes the decode of the slice
    of the codes, so only the slice is decoded. A decode left without
    readers is erased. Part of `qtrain-lower-cpu`, right after the
    conversion.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def FreeEarlyPass : Pass<"qtrain-free-early"> {
  let summary = "Free each buffer right after its last use, allocate it "
                "right before its first";
  let description = [{
    MLIR's ownership-based buffer deallocation frees the buffers allocated
    in a block at the end of that block: a training step, one block, holds
    every buffer it allocates until it returns, so its peak memory is the
    sum of all of them. This pass moves each `memref.dealloc` to right
    after the last op of its block that uses the buffer or any alias of it
    (views, and values it flows to through region branches, by
    `BufferViewFlowAnalysis`); an op with regions that uses it inside counts
    as a use. A buffer used outside the block, or reached through one of the
    block's arguments, keeps its dealloc where it is; so do deallocs inside
    ownership guards (`scf.if`) for buffers defined outside them.

    ```mlir
    %a = memref.alloc() : memref<4xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
    linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
    %b = memref.alloc() : memref<4xf32>
    ...
    memref.dealloc %a : memref<4xf32>   // moves to right after linalg.copy
    ```

    Each `memref.alloc` moves the other way, to right before the first op
    of its block that uses it (bufferization allocates a `tensor.empty`'s
    buffer where the empty tensor is defined, which can be long before the
    op that fills it). Every view of the buffer is made by such a user, and
    its size operands are defined before it, so the move is safe.
  }];
  let statistics = [
    Statistic<"numMoved", "moved-deallocs", "Deallocations moved earlier">,
    Statistic<"numSunk", "moved-allocs", "Allocations moved later">,
  ];
}

def CopiesToLinalgPass : Pass<"qtrain-copies-to-linalg"> {
  let summary = "Rewrite memref.copy as linalg.copy";
  let description = [{
    After bufferization, strided copies (the dilated adjoint of a strided
    convolution, the window offsets of pooling gradients) are `memref.copy`
    ops, which the LLVM lowering turns into calls to `memrefCopy` from MLIR's
    C runner utilities. As `linalg.copy` they become loops like every other
    kernel, so a bundle's shared object needs no MLIR library at run time.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ConvToGemmPass : Pass<"qtrain-conv-to-gemm"> {
  let summary = "Run f32 windowed contractions (weight gradients) as GEMMs, "
                "large padded convolutions in batch chunks";
  let description = [{
    Rewrites each f32 multiply-accumulate `linalg.generic` on static tensors
    that reads windows of an operand (a convolution's weight gradient,
    x[n, c, oh + kh, ow + kw] * e[n, f, oh, ow]) and whose loops are each an
    M, N or K loop: both operands gathered into (rows, K) order by one copy
    each, one GEMM C[m, n] += A[m, k] B[n, k], the result put back in the
    output's order. The GEMM is what qtrain-microkernels serves; the direct
    loops run over rows as short as OW. Results differ from the direct form
    only by summation order. Part of `qtrain-lower-cpu`, before
    `qtrain-loop-order`.

    When a K loop is a batch (the first dimension of both operands) and the
    two gathered operands would exceed `max-gathered` elements, the batch
    is split into chunks (halving it until they fit): an `scf.for` over the
    chunks gathers each chunk's patches and accumulates its GEMM into C.
    The patch buffer then holds one chunk instead of the whole batch:
    convnet's conv2 weight gradient gathered 26 M floats (104 MB) at once.

    f32 convolutions (`linalg.conv_2d_nchw_fchw`) are left as they are:
    qtrain-microkernels runs them as implicit GEMMs after bufferization,
    which needs no patch buffer (an explicit im2col of convnet's conv2
    input gradient is 50 M floats). But a convolution of a zero-padded
    input (an input gradient: the output gradient padded by the kernel
    extent) whose padded input exceeds `max-gathered` elements runs in
    batch chunks the same way: each chunk pads its own slice and
    convolves it into its slice of the result, so the padded copy of the
    whole batch (convnet's conv2: 25.7 MB) never exists. Images are
    independent, so the results are the same bit for bit.
  }];
  let options = [
    Option<"maxGathered", "max-gathered", "int64_t", /*default=*/"1048576",
           "Most elements the two gathered operands of one GEMM may hold "
           "before the batch is split into chunks (0: never split)">,
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FoldTransposesPass : Pass<"qtrain-fold-transposes"> {
  let summary = "Read transposed tensors in place through permuted maps";
  let description = [{
    A `linalg.generic` input that is the result of a `linalg.transpose` (on
    tensors) is replaced by the transpose's input, read through the
    permuted indexing map; the transpose is removed once nothing else reads
    it. The integer products' GEMMs read their weights' codes this way (the
    codes of W for y = x W^T): the microkernels take any strides. A sum of
    a single input is folded only when the original is still read
    contiguously in the innermost loop (a strided reduction would gather
    every element); elementwise ops always fold. Part
    of `qtrain-lower-cpu`, before `qtrain-loop-order`. The values read are
    the same, so results are bit for bit unchanged.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def PromoteAccumulatorsPass : Pass<"qtrain-promote-accumulators"> {
  let summary = "Carry loop-invariant accumulators in registers";
  let description = [{
    After `convert-linalg-to-loops` a reduction loads and stores its output
    element on every iteration; LLVM does not move such an accumulator into
    a register for these loops (its loop vectorizer reports "write to a loop
    invariant address"), so integer sums and min/max stay scalar and every
    sum pays a store-to-load round trip. In an `scf.for` that loads and
    stores the same element of a loop-invariant memref at loop-invariant
    indices, directly in its body, when nothing else in the loop touches
    memory that element could be part of (distinct allocations and function
    arguments do not alias; anything unknown counts as touching it), the
    element becomes an iter_arg: loaded before the loop, stored after it.
    Innermost loops first, then outward while the pair stays invariant.
    The same values are added in the same order: results are bit for bit
    unchanged. Part of `qtrain-lower-cpu`, after the loops are made.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numPromoted", "promoted-accumulators", "Accumulators carried in registers">,
  ];
}

def MicrokernelsPass : Pass<"qtrain-microkernels", "::mlir::ModuleOp"> {
  let summary = "Run bufferized GEMMs on qtrain's CPU microkernels";
  let description = [{
    Rewrites each bufferized linalg contraction that is one GEMM (exactly one
    M, N and K loop, no batch loop, a multiply-accumulate body) and whose
    element types a microkernel of `runtime/include/qtrain/ukernels.h`
    serves into a call to it:

    | operands | accumulator | body | call |
    |---|---|---|---|
    | f32, f32 | f32 | mulf, addf | `qtrain_uk_gemm_f32` |
    | i8, i8 (sign-extended) | i32 | extsi, muli, addi | `qtrain_uk_gemm_s8s8s32` |
    | same, `qtrain.code_bits = [a, b]` with a * b <= 4 | i32 | same | `qtrain_uk_gemm_bitserial` |
    | i16, i16 (sign-extended) | i32 | extsi, muli, addi | `qtrain_uk_gemm_s16s16s32` |
    | f32 convolution (NCHW, FCHW) | f32 | named op | `qtrain_uk_conv2d_nchw_f32` |

    `qtrain.code_bits` is the hint qtrain-integer-kernels leaves on an
    integer product's main contraction: its codes are centred a-bit and
    b-bit integers. With at most 4 bit-plane pairs (1x1 ... 2x2, 1x4) the
    bit-serial kernel (AND + popcount) is faster than 8-bit VNNI, so 1- and
    2-bit products get cheaper as bits fall. The pass removes the hint from
    every op.

    Operands keep their layout: each is passed as its base pointer, offset
    and the strides of its M/K, K/N or M/N dimensions (taken with
    `memref.extract_strided_metadata`), so transposed views and subviews are
    served without a copy. An input that is a fresh buffer filled by a 2-D
    `linalg.transpose` only for this GEMM (the `W^T` of a linear layer, the
    transposed filter of an im2col convolution) is read from the
    transpose's source with its strides permuted, and the transpose and
    its buffer are removed, when nothing writes the source in between. The kernels accumulate into the output buffer,
    as the contraction does into its init. Integer results are bit-identical
    to the loop form (both wrap in 32 bits and are exact whenever the sum
    fits, which qtrain-integer-kernels guarantees when it picks i32); f32
    results differ by summation order (FMA, K-blocked).

    A bufferized f32 `linalg.conv_2d_nchw_fchw` (static shapes) becomes
    `qtrain_uk_conv2d_nchw_f32`: an implicit GEMM per image, the patches
    packed from the input straight into the kernel's panels, with no im2col
    buffer (each operand passed as base, offset and its four strides).

    Products below `min-flops` multiply-adds stay loops (the call and the
    packing cost more than they save). The bundle's model.so links the
    kernels' static library.
  }];
  let options = [
    Option<"minFlops", "min-flops", "int64_t", /*default=*/"4096",
           "Smallest M*N*K rewritten into a call">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect"
  ];
  let statistics = [
    Statistic<"numCalls", "microkernel-calls", "GEMMs rewritten into calls">,
    Statistic<"numFoldedTransposes", "folded-transposes",
              "Transposed copies of inputs read in place instead">,
  ];
}

def DropAnnotationsPass : Pass<"qtrain-drop-annotations", "::mlir::ModuleOp"> {
  let summary = "Remove qtrain's discardable attributes before lowering";
  let description = [{
    Removes every `qtrain.*` discardable attribute from ops, function
    arguments and results, except `qtrain.code_bits` (a lowering hint that
    qtrain-microkernels consumes). Once the manifest has been read and the variants
    materialized, the annotations have done their job; some are tied to
    tensor types (`qtrain.init`) that bufferization changes, and LLVM IR has
    no place for any of them. First pass of `qtrain-lower-cpu`.
  }];
}

#endif // QTRAIN_TRANSFORMS_PASSES_TD
