//===- ReassociateSums.cpp - Let float sums of reductions vectorize -------===//
//
// qtrain-reassociate-sums: marks the float addition that folds each element
// into the accumulator of a linalg reduction (`acc + x` on the output's
// block argument) `reassoc`, so that LLVM may keep vector partial sums when
// the reduction loop is innermost (a bias gradient summing 576 contiguous
// elements per row) instead of a chain of dependent scalar additions. The
// sums stay deterministic (the same code gives the same order every run)
// but no longer follow the loop order; qtrain runs this only on the f32
// code of a training step, whose contract is fp32 within tolerance, never
// on integer sums (exact) or the f64 epilogues.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_REASSOCIATESUMSPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {
struct ReassociateSumsPass
    : mlir::qtrain::impl::ReassociateSumsPassBase<ReassociateSumsPass> {
  void runOnOperation() override;
};
} // namespace

/// The f32 addition of `generic` that folds into output `init`'s block
/// argument and is yielded, if any.
static arith::AddFOp accumulation(linalg::GenericOp generic, unsigned init) {
  Block &body = generic.getRegion().front();
  BlockArgument acc = body.getArgument(generic.getNumDpsInputs() + init);
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(init).getDefiningOp<arith::AddFOp>();
  if (!add || !add.getType().isF32() ||
      (add.getLhs() != acc && add.getRhs() != acc))
    return {};
  // The accumulator feeds only this addition (a running max or a
  // compensated sum would depend on the order in another way).
  if (!acc.hasOneUse())
    return {};
  return add;
}

void ReassociateSumsPass::runOnOperation() {
  getOperation()->walk([&](linalg::GenericOp generic) {
    if (generic.getNumReductionLoops() == 0)
      return;
    for (unsigned i = 0, e = generic.getNumDpsInits(); i < e; ++i)
      if (arith::AddFOp add = accumulation(generic, i)) {
        add.setFastmath(add.getFastmath() | arith::FastMathFlags::reassoc);
        ++numReassociated;
      }
  });
}
