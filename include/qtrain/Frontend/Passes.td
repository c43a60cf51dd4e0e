//===- Passes.td - qtrain front end ------------------------*- tablegen -*-===//
//
// The front end: a forward graph in upstream dialects (linalg on tensors) made
// trainable: weights lifted to parameters, the batch set, and the training
// and eval steps built by reverse-mode differentiation (lib/Autodiff).
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_FRONTEND_PASSES_TD
#define QTRAIN_FRONTEND_PASSES_TD

include "mlir/Pass/PassBase.td"

def StripExportPass : Pass<"qtrain-strip-export", "::mlir::ModuleOp"> {
  let summary = "Remove what an exporter adds around the forward graph";
  let description = [{
    torch-mlir's exports carry `ml_program.global @global_seed`, which
    nothing reads, and eval-mode exports `cf.assert`s on the model's mode;
    TOSA and torch-mlir name the entry point `@main`. This pass, the first of
    the front end, leaves the forward graph:

    - an `ml_program.global` nothing uses is dropped; an immutable one with
      a value that `ml_program.global_load` or `global_load_const` reads is
      folded into an `arith.constant`; a mutable one that is read, or any
      other use of a global, is an error (a step keeps no global state);
    - a `cf.assert` whose condition folds to true is erased, one that folds
      to false is an error quoting its message, and one whose condition is
      not a constant is erased with a remark (a step cannot raise);
    - without a function `@forward`, the module's one public function with
      a body is renamed to it.

    Each change is reported with a remark (docs/passes/strip-export.md).
  }];
  let options = [
    Option<"forward", "forward", "std::string", /*default=*/"\"forward\"",
           "Name the entry point gets">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def LiftParamsPass : Pass<"qtrain-lift-params", "::mlir::ModuleOp"> {
  let summary = "Turn the weights an exporter inlined as constants into parameters";
  let description = [{
    torch-mlir inlines a model's weights into the exported function as
    `arith.constant`s (`dense` or `dense_resource` blobs). This pass turns
    every float tensor constant of `@forward` with at least `min-elements`
    elements that is not a fill or padding splat into a new argument marked
    `{qtrain.param}`; such splats, small constants and integer, index and
    i1 tensors stay constants. The parameters are inserted after the leading
    `{qtrain.param}` arguments (first, for an export), in the order the graph
    first uses them; the other arguments keep their order. Each parameter
    keeps its exported value as `qtrain.init` (the constant's own
    `DenseElementsAttr` or `DenseResourceElementsAttr`), the initial value of
    the bundle, unless `reinit` is set. A weight without values (an elided
    `dense_resource<__elided__>` blob, a splat in a weight position), and
    every parameter with `reinit`, gets PyTorch's default initialization
    for its layer as `qtrain.fresh_init` (qtrain/Analysis/FreshInit.h).

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
    first), and nothing to lift in a `@forward` without parameters.
  }];
  let options = [
    Option<"forward", "forward", "std::string", /*default=*/"\"forward\"",
           "Name of the forward function">,
    Option<"minElements", "min-elements", "unsigned", /*default=*/"2",
           "Constants with fewer elements stay constants">,
    Option<"reinit", "reinit", "bool", /*default=*/"false",
           "Record no initial values: every parameter starts from "
           "PyTorch's default initialization">,
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

def InsertDropoutPass : Pass<"qtrain-insert-dropout", "::mlir::ModuleOp"> {
  let summary = "Dropout marks of a forward graph become qtrain.dropout";
  let description = [{
    A forward graph in upstream dialects marks train-time dropout on an
    elementwise copy: a `linalg.generic` with identity maps whose body
    yields its one input, carrying `{qtrain.dropout = p : f64}`
    (qtrain-import-torch writes one per `nn.Dropout`/`F.dropout`). This pass
    replaces each with `qtrain.dropout` on the `{qtrain.control = "seed"}`
    and `"step"` arguments, site k (program order) on Philox stream
    0x44500000 + k, with a remark per site. `qtrain-autodiff` gives it the
    same mask in the backward pass and drops it from the evaluation step.
    Run it after `qtrain-insert-quant` (which adds the controls) and before
    `qtrain-autodiff`; qtrain-compile does. A mark on anything else, or a p
    outside [0, 1), is an error.
  }];
  let options = [
    Option<"forward", "forward", "std::string", /*default=*/"\"forward\"",
           "Name of the forward function">,
  ];
  let dependentDialects = ["::mlir::qtrain::QTrainDialect"];
}

def TrainBatchNormPass : Pass<"qtrain-train-batchnorm", "::mlir::ModuleOp"> {
  let summary = "Train the batch norms of an eval-mode export with batch statistics";
  let description = [{
    Exporters trace models in eval mode: a batch norm normalizes with its
    running mean and variance, which the graph carries as constants (or, after
    `qtrain-lift-params`, as parameters):
    `(x - mean[c]) * rsqrt(var[c] + eps) * gamma[c] + beta[c]`, fused into
    one `linalg.generic` or spread over several, with the per-channel
    tensors read directly or through `tensor.expand_shape` to `[C, 1, 1]`.
    This pass finds each such pair (`x - mean[c]` and `var[c] + eps` whose
    results meet a few ops later) and rewrites it to PyTorch's training
    mode: the step normalizes with the batch's mean and biased variance
    (per channel, over every other dimension of `x`), and the running
    statistics become `{qtrain.state = "bn_mean"}` / `"bn_var"` arguments
    and results updated by `qtrain.running_stat` (momentum 0.1, the
    variance unbiased), starting at the exported values (`qtrain.init`; 0
    and 1 when the export has none). `qtrain-autodiff` makes the evaluation
    step use them. Each layer is reported with a remark. Run it after
    `qtrain-rebatch` (the batch statistics depend on the batch) and before
    `qtrain-autodiff`; qtrain-compile runs it before autodiff.
  }];
  let options = [
    Option<"forward", "forward", "std::string", /*default=*/"\"forward\"",
           "Name of the forward function">,
    Option<"momentum", "momentum", "double", /*default=*/"0.1",
           "Weight of the batch's statistic in the running average">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect", "::mlir::qtrain::QTrainDialect"
  ];
  let statistics = [
    Statistic<"numRewritten", "batch-norms", "Batch norms rewritten">,
  ];
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

#endif // QTRAIN_FRONTEND_PASSES_TD
