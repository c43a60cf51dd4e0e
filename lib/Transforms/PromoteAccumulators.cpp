//===- PromoteAccumulators.cpp - Reductions into registers ------*- C++ -*-===//
//
// qtrain-promote-accumulators: in an scf.for that loads and stores the same
// loop-invariant memref element (a reduction lowered from linalg
// accumulating into its output), the element is carried as an iter_arg:
// loaded once before the loop, stored once after it.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Transforms/Passes.h"

#include "BufferAliasing.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_PROMOTEACCUMULATORSPASS
#include "qtrain/Transforms/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using mlir::qtrain::mayAlias;
using mlir::qtrain::rootOf;

namespace {

/// A load/store pair of one loop-invariant element, directly in the loop's
/// body, that nothing else in the loop touches.
struct Accumulator {
  memref::LoadOp load;
  memref::StoreOp store;
};

std::optional<Accumulator> findAccumulator(scf::ForOp loop) {
  Block *body = loop.getBody();
  for (auto load : body->getOps<memref::LoadOp>()) {
    Value buffer = load.getMemRef();
    if (!loop.isDefinedOutsideOfLoop(buffer) ||
        !llvm::all_of(load.getIndices(), [&](Value index) {
          return loop.isDefinedOutsideOfLoop(index);
        }))
      continue;
    memref::StoreOp store;
    for (auto candidate : body->getOps<memref::StoreOp>())
      if (candidate.getMemRef() == buffer &&
          candidate.getIndices() == load.getIndices() &&
          load->isBeforeInBlock(candidate))
        store = candidate;
    if (!store)
      continue;
    // Nothing else in the loop may read or write memory the element could
    // be part of.
    Value root = rootOf(buffer);
    bool alone = true;
    loop.getBody()->walk([&](Operation *op) {
      if (!alone || op == load || op == store)
        return;
      if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return; // its nested ops are walked
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      if (!effects) {
        alone = isMemoryEffectFree(op);
        return;
      }
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &effect : instances) {
        if (isa<MemoryEffects::Allocate>(effect.getEffect()))
          continue;
        Value touched = effect.getValue();
        if (!touched || mayAlias(rootOf(touched), root))
          alone = false;
      }
    });
    if (alone)
      return Accumulator{load, store};
  }
  return std::nullopt;
}

struct PromoteAccumulatorsPass
    : mlir::qtrain::impl::PromoteAccumulatorsPassBase<PromoteAccumulatorsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Innermost loops first; a promoted loop is a new op, so collect again
    // until nothing changes.
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<scf::ForOp> loops;
      getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
      for (scf::ForOp loop : loops) {
        std::optional<Accumulator> acc = findAccumulator(loop);
        if (!acc)
          continue;
        rewriter.setInsertionPoint(loop);
        Value init = memref::LoadOp::create(rewriter, acc->load.getLoc(),
                                            acc->load.getMemRef(),
                                            acc->load.getIndices());
        Value stored = acc->store.getValueToStore();
        FailureOr<LoopLikeOpInterface> promoted =
            cast<LoopLikeOpInterface>(loop.getOperation())
                .replaceWithAdditionalYields(
                    rewriter, ValueRange{init},
                    /*replaceInitOperandUsesInLoop=*/false,
                    [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
                      return SmallVector<Value>{stored};
                    });
        if (failed(promoted))
          continue;
        auto newLoop = cast<scf::ForOp>(promoted->getOperation());
        rewriter.replaceAllUsesWith(acc->load.getResult(),
                                    newLoop.getRegionIterArgs().back());
        rewriter.setInsertionPointAfter(newLoop);
        memref::StoreOp::create(
            rewriter, acc->store.getLoc(), newLoop.getResults().back(),
            acc->store.getMemRef(), acc->store.getIndices());
        rewriter.eraseOp(acc->store);
        rewriter.eraseOp(acc->load);
        ++numPromoted;
        changed = true;
        break;
      }
    }
  }
};

} // namespace
