//===- MergeScalarLaunches.cpp - Runs of one-thread launches as one -------===//
//
// qtrain-merge-scalar-launches: after qtrain-map-step-to-gpu, consecutive
// gpu.launch ops of one block of one thread each (the reductions of a
// quantizer's range to a scalar, its scale, an EMA update), with only
// device allocations, deallocations, views and constants on the host
// between them, become one launch running their bodies in order. One
// thread ran them one after the other before; it still does, so the
// result is the same, with fewer launches.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_MERGESCALARLAUNCHESPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;

namespace {

struct MergeScalarLaunchesPass
    : mlir::qtrain::impl::MergeScalarLaunchesPassBase<MergeScalarLaunchesPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

/// Whether `launch` runs its body once, on one thread of one block, as a
/// plain synchronous launch (no cluster, shared memory, attributions or
/// tokens) with one block in its body.
static bool isScalarLaunch(gpu::LaunchOp launch) {
  auto isOne = [](Value v) { return matchPattern(v, m_One()); };
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  return isOne(grid.x) && isOne(grid.y) && isOne(grid.z) && isOne(block.x) &&
         isOne(block.y) && isOne(block.z) && !launch.hasClusterSize() &&
         !launch.getDynamicSharedMemorySize() &&
         launch.getAsyncDependencies().empty() && !launch.getAsyncToken() &&
         launch.getWorkgroupAttributions().empty() &&
         launch.getPrivateAttributions().empty() &&
         launch.getBody().hasOneBlock();
}

/// Whether the host op `op` may lie between two launches that merge: it
/// neither reads nor writes memory (device allocations and deallocations,
/// views, constants and other pure ops).
static bool isBetweenLaunches(Operation *op) {
  return isa<gpu::AllocOp, gpu::DeallocOp, ViewLikeOpInterface>(op) ||
         isPure(op);
}

/// Moves `first`'s body to the start of `second`'s, and the deallocations
/// between them after `second` (the merged kernel runs at `second`).
static void merge(IRRewriter &rewriter, gpu::LaunchOp first,
                  gpu::LaunchOp second) {
  SmallVector<Operation *> deallocs;
  for (Operation *op = first->getNextNode(); op != second;
       op = op->getNextNode())
    if (isa<gpu::DeallocOp>(op))
      deallocs.push_back(op);
  Block &from = first.getBody().front();
  Block &into = second.getBody().front();
  rewriter.eraseOp(from.getTerminator());
  rewriter.inlineBlockBefore(&from, &into.front(), into.getArguments());
  rewriter.eraseOp(first);
  Operation *after = second->getNextNode();
  for (Operation *dealloc : deallocs)
    dealloc->moveBefore(after);
}

void MergeScalarLaunchesPass::runOnOperation() {
  IRRewriter rewriter(&getContext());
  SmallVector<Block *> blocks;
  getOperation().walk([&](Block *block) {
    if (!block->getParentOp()->getParentOfType<gpu::LaunchOp>() &&
        !isa<gpu::LaunchOp>(block->getParentOp()))
      blocks.push_back(block);
  });
  for (Block *block : blocks) {
    gpu::LaunchOp open;
    for (Operation &op : llvm::make_early_inc_range(*block)) {
      auto launch = dyn_cast<gpu::LaunchOp>(&op);
      if (launch && isScalarLaunch(launch)) {
        if (open) {
          merge(rewriter, open, launch);
          ++numMerged;
        }
        open = launch;
        continue;
      }
      if (!isBetweenLaunches(&op))
        open = {};
    }
  }
}
