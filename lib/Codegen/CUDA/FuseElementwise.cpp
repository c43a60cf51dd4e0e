//===- FuseElementwise.cpp - Fewer launches for the CUDA step -------------===//
//
// qtrain-fuse-elementwise: an elementwise linalg op on tensors whose only
// user is an elementwise op is fused into it, so that the CUDA step launches
// one kernel where it would launch a chain. Products are left alone, so
// qtrain-gpu-gemms still sees their bodies.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;

namespace {

struct FuseElementwisePass
    : mlir::qtrain::impl::FuseElementwisePassBase<FuseElementwisePass> {
  using Base::Base;
  void runOnOperation() override;
};

/// Whether every loop of `op` is parallel.
bool isElementwise(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.getNumLoops() == linalgOp.getNumParallelLoops();
}

} // namespace

void FuseElementwisePass::runOnOperation() {
  RewritePatternSet patterns(&getContext());
  linalg::populateElementwiseOpsFusionPatterns(patterns, [](OpOperand *fused) {
    Operation *producer = fused->get().getDefiningOp();
    Operation *consumer = fused->getOwner();
    // One user: the producer's values are computed once, as before,
    // and no buffer of them is needed any more.
    return producer && isElementwise(producer) && isElementwise(consumer) &&
           fused->get().hasOneUse();
  });
  if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
    signalPassFailure();
}
