//===- PromoteAccumulators.cpp - Reductions into registers ------*- C++ -*-===//
//
// qtrain-promote-accumulators: in an scf.for that loads and stores the same
// loop-invariant memref element (a reduction lowered from linalg
// accumulating into its output), the element is carried as an iter_arg:
// loaded once before the loop, stored once after it.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/Passes.h"

#include "qtrain/Analysis/BufferAliasing.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_PROMOTEACCUMULATORSPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
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

/// `visited` counts the operations looked at.
std::optional<Accumulator> findAccumulator(scf::ForOp loop, uint64_t &visited) {
  Block *body = loop.getBody();
  for (auto load : body->getOps<memref::LoadOp>()) {
    ++visited;
    Value buffer = load.getMemRef();
    if (!loop.isDefinedOutsideOfLoop(buffer) ||
        !llvm::all_of(load.getIndices(), [&](Value index) {
          return loop.isDefinedOutsideOfLoop(index);
        }))
      continue;
    memref::StoreOp store;
    for (auto candidate : body->getOps<memref::StoreOp>())
      if (++visited, candidate.getMemRef() == buffer &&
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
      ++visited;
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
  PromoteAccumulatorsPass() = default;
  PromoteAccumulatorsPass(const PromoteAccumulatorsPass &other)
      : PromoteAccumulatorsPassBase(other) {}

  /// The work done, for tests of its growth with the program's size (pass
  /// statistics are compiled out of release builds of LLVM, so a remark
  /// reports it).
  Option<bool> reportWork{
      *this, "report-work",
      llvm::cl::desc("Emit a remark with the number of accumulators promoted "
                     "and of operations looked at"),
      llvm::cl::init(false)};

  void runOnOperation() override {
    uint64_t numVisited = 0, promotedHere = 0;
    IRRewriter rewriter(&getContext());
    // One walk, innermost loops first (post-order). Promoting replaces only
    // the loop itself (its body moves to the new loop): the loops nested in
    // it and the loops around it, still to come, stay valid, and a loop
    // around sees the load and store just placed around the inner loop.
    // Each loop is promoted until no accumulator is left in it.
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](Operation *op) {
      ++numVisited;
      if (auto loop = dyn_cast<scf::ForOp>(op))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops) {
      while (true) {
        std::optional<Accumulator> acc = findAccumulator(loop, numVisited);
        if (!acc)
          break;
        FailureOr<scf::ForOp> promoted = promote(rewriter, loop, *acc);
        if (failed(promoted))
          break;
        loop = *promoted;
        ++numPromoted;
        ++promotedHere;
      }
    }
    if (reportWork)
      getOperation()->emitRemark()
          << "qtrain-promote-accumulators: promoted " << promotedHere
          << " accumulators, looked at " << numVisited << " operations";
  }

  /// Carries `acc` through `loop` as an iter_arg; returns the new loop.
  static FailureOr<scf::ForOp> promote(IRRewriter &rewriter, scf::ForOp loop,
                                       Accumulator acc) {
    rewriter.setInsertionPoint(loop);
    auto init =
        memref::LoadOp::create(rewriter, acc.load.getLoc(),
                               acc.load.getMemRef(), acc.load.getIndices());
    Value stored = acc.store.getValueToStore();
    FailureOr<LoopLikeOpInterface> promoted =
        cast<LoopLikeOpInterface>(loop.getOperation())
            .replaceWithAdditionalYields(
                rewriter, ValueRange{init.getResult()},
                /*replaceInitOperandUsesInLoop=*/false,
                [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
                  return SmallVector<Value>{stored};
                });
    if (failed(promoted)) {
      rewriter.eraseOp(init);
      return failure();
    }
    auto newLoop = cast<scf::ForOp>(promoted->getOperation());
    rewriter.replaceAllUsesWith(acc.load.getResult(),
                                newLoop.getRegionIterArgs().back());
    rewriter.setInsertionPointAfter(newLoop);
    memref::StoreOp::create(rewriter, acc.store.getLoc(),
                            newLoop.getResults().back(), acc.store.getMemRef(),
                            acc.store.getIndices());
    rewriter.eraseOp(acc.store);
    rewriter.eraseOp(acc.load);
    return newLoop;
  }
};

} // namespace
