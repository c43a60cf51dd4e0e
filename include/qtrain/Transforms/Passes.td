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
    nhwc_hwcf) with a flipped-kernel convolution for the input gradient;
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

    Example: `--qtrain-insert-quant="policy=cpt schedule=cpt:3:8 grad-bits=8"`.
  }];
  let options = [
    Option<"forward", "forward", "std::string", /*default=*/"\"forward\"",
           "Name of the forward function">,
    Option<"policy", "policy", "std::string", /*default=*/"\"cpt\"",
           "Quantization policy: cpt (one forward precision per step from a "
           "schedule) or static (one precision throughout)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"\"",
           "Default schedule of the bundle (default cpt:3:8 for policy=cpt, "
           "static:8 for policy=static)">,
    Option<"gradBits", "grad-bits", "unsigned", /*default=*/"8",
           "Backward (error) precision, 0 for fp32">,
    ListOption<"fullPrecisionLayers", "full-precision-layers", "int64_t",
               "Layers kept in full precision, by index in program order; "
               "negative indices count from the end (-1 is the last)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::qtrain::QTrainDialect"
  ];
  let statistics = [
    Statistic<"numLayers", "quantized-layers", "Layers quantized">,
  ];
}

#endif // QTRAIN_TRANSFORMS_PASSES_TD
