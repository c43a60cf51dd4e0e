//===- TrainingStep.h - Loss and optimizer of the training step -*- C++ -*-===//
//
// Builders for the parts of a training step that are not differentiated
// generically: the loss with its closed-form gradient, and the SGD update.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_AUTODIFF_TRAININGSTEP_H
#define QTRAIN_AUTODIFF_TRAININGSTEP_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::qtrain {

enum class LossKind {
  /// Mean over the batch of softmax cross-entropy; labels are class indices
  /// (tensor<B x i64>), as torch.nn.CrossEntropyLoss.
  SoftmaxCrossEntropy,
  /// Mean over all elements of (logits - target)^2; targets have the logits'
  /// type, as torch.nn.MSELoss.
  MeanSquaredError,
};

/// The type labels must have for `kind` and logits of `logitsType`.
Type getLabelType(LossKind kind, RankedTensorType logitsType);

struct LossValues {
  /// The loss, an f32 scalar.
  Value loss;
  /// d loss / d logits.
  Value dLogits;
};

/// Emits the loss of `logits` (B x C, f32) against `labels` and its gradient.
LossValues buildLoss(OpBuilder &b, Location loc, LossKind kind, Value logits,
                     Value labels);

struct SgdValues {
  Value param;
  Value momentum;
};

/// PyTorch's SGD with momentum and weight decay (no dampening, no Nesterov):
///   g = grad + weightDecay * param
///   buf = momentum * buf + g
///   param = param - lr * buf
/// `lr`, `momentum`, `weightDecay` are f32 scalars.
SgdValues buildSgdUpdate(OpBuilder &b, Location loc, Value param, Value grad,
                         Value buffer, Value lr, Value momentum,
                         Value weightDecay);

} // namespace mlir::qtrain

#endif // QTRAIN_AUTODIFF_TRAININGSTEP_H
