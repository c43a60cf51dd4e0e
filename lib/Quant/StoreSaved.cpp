//===- StoreSaved.cpp - Saved activations at their real width ---*- C++ -*-===//
//
// qtrain-store-saved: in the training step, an activation rounded to a
// reduced float format that the backward pass reads is kept for it as the
// format's codes (1 byte for 8-bit formats, 2 for 16-bit ones) instead of
// f32, and decoded where the backward pass reads it.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Quant/Passes.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_STORESAVEDPASS
#include "qtrain/Quant/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {
struct StoreSavedPass : mlir::qtrain::impl::StoreSavedPassBase<StoreSavedPass> {
  using StoreSavedPassBase::StoreSavedPassBase;
  void runOnOperation() override;
};
} // namespace

/// Whether `op` belongs to the backward pass: qtrain-autodiff gives every
/// op it builds there the role error or weight_grad.
static bool isBackward(Operation *op) {
  auto role = op->getAttrOfType<RoleAttr>(kRoleAttrName);
  return role && (role.getValue() == Role::Error ||
                  role.getValue() == Role::WeightGrad);
}

/// Whether values of `format` have codes (qtrain.encode_float).
static bool encodable(FloatFormatAttr format) {
  return !format || (format.getExponent() < 8 && format.getSaturate() &&
                     format.getMinNormalExponent() >= -126);
}

void StoreSavedPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto fn = module.lookupSymbol<func::FuncOp>(train);
  if (!fn || fn.isExternal()) {
    module.emitError("qtrain-store-saved: no function @") << train;
    return signalPassFailure();
  }
  Block &body = fn.getBody().front();
  SmallVector<RoundFloatOp> roundings;
  for (auto round : body.getOps<RoundFloatOp>())
    // A scaled rounding's values are the format's times a run-time 2^k:
    // they have no codes of their own.
    if (round.getRole() == Role::Activation && !round.getScaledMaxAttr() &&
        encodable(round.getFormat()) &&
        encodable(round.getPromotedFormatAttr()))
      roundings.push_back(round);
  OpBuilder b(&getContext());
  for (RoundFloatOp round : roundings) {
    // The backward ops (outermost in the block) that read the rounded value.
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : round.getResult().getUses()) {
      Operation *owner = body.findAncestorOpInBlock(*use.getOwner());
      if (owner && isBackward(owner))
        uses.push_back(&use);
    }
    if (uses.empty())
      continue;
    unsigned width = round.getFormat().getWidth();
    if (FloatFormatAttr promoted = round.getPromotedFormatAttr())
      width = std::max(width, promoted.getWidth());
    if (width > 16)
      continue;
    auto type = cast<RankedTensorType>(round.getType());
    auto codesType = RankedTensorType::get(
        type.getShape(), b.getIntegerType(width <= 8 ? 8 : 16));
    b.setInsertionPointAfter(round);
    Value codes = EncodeFloatOp::create(
        b, round.getLoc(), codesType, round.getResult(), round.getFormat(),
        round.getPromoted(), round.getPromotedFormatAttr());
    for (OpOperand *use : uses) {
      Operation *owner = body.findAncestorOpInBlock(*use->getOwner());
      b.setInsertionPoint(owner);
      auto decoded = DecodeFloatOp::create(
          b, round.getLoc(), type, codes, round.getFormat(),
          round.getPromoted(), round.getPromotedFormatAttr());
      decoded->setAttr(kRoleAttrName,
                       RoleAttr::get(&getContext(), Role::Error));
      use->set(decoded);
    }
    ++numStored;
    bytesSaved += (int64_t(4) - codesType.getElementTypeBitWidth() / 8) *
                  type.getNumElements();
  }
}
