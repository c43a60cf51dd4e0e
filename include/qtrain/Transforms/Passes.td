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

#endif // QTRAIN_TRANSFORMS_PASSES_TD
