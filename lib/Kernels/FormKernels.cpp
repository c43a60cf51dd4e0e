//===- FormKernels.cpp - One qtrain.kernel per product of a site ----------===//
//
// qtrain-form-kernels: every product of a kernel site (the ops tagged with
// qtrain.layer and qtrain.product by qtrain-insert-quant and qtrain-autodiff)
// becomes a qtrain.kernel holding the product and the quantizers of its
// operands, with the data movement between them.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Kernels/Passes.h"

#include "qtrain/Analysis/QuantizedOperand.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_FORMKERNELSPASS
#include "qtrain/Kernels/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {
struct FormKernelsPass
    : mlir::qtrain::impl::FormKernelsPassBase<FormKernelsPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// Pulls the quantizer feeding `v` (through transposes, paddings and
/// copies of its result) into `pulled`; with `roundings`, an error's float
/// rounding too. Only from the product's own block: a chain that crosses
/// regions stays.
static void pullQuantized(Value v, Block *block, bool roundings,
                          llvm::SetVector<Operation *> &pulled) {
  DataMovementOptions options;
  options.copies = true;
  options.block = block;
  QuantizedOperand traced = traceQuantizedOperand(v, options);
  Operation *quantizer = traced.quant;
  if (!quantizer && roundings)
    if (auto round = traced.source.getDefiningOp<RoundFloatOp>();
        round && round->getBlock() == block && round.getRole() == Role::Error)
      quantizer = round;
  if (!quantizer)
    return;
  pulled.insert(quantizer);
  pulled.insert(traced.chain.begin(), traced.chain.end());
}

void FormKernelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<Operation *> products;
  WalkResult walk = module.walk([&](Operation *op) {
    if (!op->hasAttr(kLayerAttrName) || op->getParentOfType<KernelOp>())
      return WalkResult::advance();
    auto site = op->getAttrOfType<IntegerAttr>(kLayerAttrName);
    auto kind = op->getAttrOfType<StringAttr>(kProductAttrName);
    if (!kind)
      return WalkResult::advance();
    if (!isa<linalg::LinalgOp>(op) || op->getNumResults() != 1 || !site) {
      op->emitError("qtrain-form-kernels: a product of site tags must be a "
                    "linalg op with one result and an integer qtrain.layer");
      return WalkResult::interrupt();
    }
    products.push_back(op);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return signalPassFailure();
  bool formed = false;
  module.walk([&](KernelOp) {
    formed = true;
    return WalkResult::interrupt();
  });
  if (products.empty() && !formed) {
    module.emitError("qtrain-form-kernels: no kernel sites (ops with "
                     "qtrain.layer and qtrain.product); run "
                     "qtrain-insert-quant and qtrain-autodiff first");
    return signalPassFailure();
  }

  llvm::SetVector<Operation *> originals;
  for (Operation *product : products) {
    llvm::SetVector<Operation *> pulled;
    bool roundings =
        inputGradRoundings &&
        product->getAttrOfType<StringAttr>(kProductAttrName).getValue() ==
            "input_grad";
    for (Value operand : product->getOperands())
      pullQuantized(operand, product->getBlock(), roundings, pulled);
    SmallVector<Operation *> ops(pulled.begin(), pulled.end());
    llvm::sort(
        ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    originals.insert(ops.begin(), ops.end());

    OpBuilder b(product);
    auto kernel = KernelOp::create(
        b, product->getLoc(), product->getResultTypes(),
        product->getAttrOfType<IntegerAttr>(kLayerAttrName).getInt(),
        product->getAttrOfType<StringAttr>(kProductAttrName).getValue());
    Block *body = b.createBlock(&kernel.getBody());
    b.setInsertionPointToStart(body);
    // Quantizers shared between products (a weight's, by the forward
    // product and the input gradient) are cloned into each kernel.
    IRMapping map;
    for (Operation *op : ops)
      b.clone(*op, map);
    Operation *inner = b.clone(*product, map);
    YieldOp::create(b, product->getLoc(), inner->getResults());
    product->replaceAllUsesWith(kernel->getResults());
    product->erase();
    ++numKernels;
  }
  for (Operation *op : llvm::reverse(originals))
    if (op->use_empty())
      op->erase();
}
