//===- MergeLaunches.cpp - Consecutive launches as one --------------------===//
//
// qtrain-merge-launches: after qtrain-map-step-to-gpu, consecutive
// gpu.launch ops with only device allocations, deallocations, views and
// constants on the host between them become one launch running their bodies
// in order, when that cannot change what they compute:
//  - both run one thread of one block (the reductions of a quantizer's
//    range to scalars, its scale, an EMA update): one thread ran them one
//    after the other before, and still does;
//  - both have the same grid and block and neither touches what the other
//    writes: every thread runs its part of each, and no thread can see
//    another's part.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Analysis/BufferAliasing.h"
#include "qtrain/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_MERGELAUNCHESPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct MergeLaunchesPass
    : mlir::qtrain::impl::MergeLaunchesPassBase<MergeLaunchesPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

/// Whether `launch` is a plain synchronous launch (no cluster, dynamic
/// shared memory, attributions or tokens) with one block in its body.
static bool isPlainLaunch(gpu::LaunchOp launch) {
  return !launch.hasClusterSize() && !launch.getDynamicSharedMemorySize() &&
         launch.getAsyncDependencies().empty() && !launch.getAsyncToken() &&
         launch.getWorkgroupAttributions().empty() &&
         launch.getPrivateAttributions().empty() &&
         launch.getBody().hasOneBlock();
}

/// The grid and block sizes of `launch`, if all six are constants.
static std::optional<SmallVector<int64_t, 6>>
launchShape(gpu::LaunchOp launch) {
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  SmallVector<int64_t, 6> shape;
  for (Value size : {grid.x, grid.y, grid.z, block.x, block.y, block.z}) {
    std::optional<int64_t> value = getConstantIntValue(size);
    if (!value)
      return std::nullopt;
    shape.push_back(*value);
  }
  return shape;
}

/// The buffers (roots) `launch`'s body reads and writes (frees and
/// allocations count as writes); false where an op's effects are unknown.
static bool collectAccesses(gpu::LaunchOp launch, SmallVectorImpl<Value> &reads,
                            SmallVectorImpl<Value> &writes) {
  WalkResult walk = launch.getBody().walk([&](Operation *op) {
    if (isPure(op) || op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (MemoryEffects::EffectInstance &effect : instances) {
      Value value = effect.getValue();
      if (!value || !isa<BaseMemRefType>(value.getType()))
        return WalkResult::interrupt();
      (isa<MemoryEffects::Read>(effect.getEffect()) ? reads : writes)
          .push_back(rootOf(value));
    }
    return WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

/// Whether two buffer roots may be the same memory: as mayAlias, with the
/// step's device allocations (gpu.alloc) as distinct as memref.alloc's.
static bool mayOverlap(Value a, Value b) {
  auto device = [](Value v) {
    return isa_and_nonnull<gpu::AllocOp>(v.getDefiningOp());
  };
  if (a != b && device(a) && (device(b) || isFunctionArgument(b)))
    return false;
  if (a != b && device(b) && isFunctionArgument(a))
    return false;
  return mayAlias(a, b);
}

/// Whether neither launch reads or writes what the other writes.
static bool independent(gpu::LaunchOp first, gpu::LaunchOp second) {
  SmallVector<Value> reads1, writes1, reads2, writes2;
  if (!collectAccesses(first, reads1, writes1) ||
      !collectAccesses(second, reads2, writes2))
    return false;
  auto overlap = [](ArrayRef<Value> as, ArrayRef<Value> bs) {
    return llvm::any_of(as, [&](Value a) {
      return llvm::any_of(bs, [&](Value b) { return mayOverlap(a, b); });
    });
  };
  return !overlap(writes1, reads2) && !overlap(writes1, writes2) &&
         !overlap(writes2, reads1);
}

/// Whether `second`, right after `first`, may run in the same launch.
static bool canMerge(gpu::LaunchOp first, gpu::LaunchOp second) {
  std::optional<SmallVector<int64_t, 6>> shape1 = launchShape(first);
  std::optional<SmallVector<int64_t, 6>> shape2 = launchShape(second);
  if (!shape1 || !shape2 || *shape1 != *shape2)
    return false;
  // One thread runs both bodies in order; else every thread does, which
  // is the same only for launches that do not depend on each other.
  return llvm::all_of(*shape1, [](int64_t size) { return size == 1; }) ||
         independent(first, second);
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

void MergeLaunchesPass::runOnOperation() {
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
      if (launch && isPlainLaunch(launch)) {
        if (open && canMerge(open, launch)) {
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
