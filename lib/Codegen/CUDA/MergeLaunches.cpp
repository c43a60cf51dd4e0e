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
//    another's part;
//  - both run one block (a block's reduction of partial values, the
//    one-thread arithmetic around it): the first's body, a barrier (which
//    orders the block's memory accesses, global ones included), then the
//    second's; a body of one thread runs on thread 0 only, with its thread
//    ids 0 and its block size 1, and the workgroup buffers of both are the
//    merged launch's.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Analysis/BufferAliasing.h"
#include "qtrain/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/CallInterfaces.h"
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

/// The threads of `launch` if it runs one block of them along x, with no
/// cluster, dynamic shared memory, private buffers or tokens and one block
/// in its body (workgroup buffers and barriers allowed).
static std::optional<int64_t> singleBlockThreads(gpu::LaunchOp launch) {
  if (launch.hasClusterSize() || launch.getDynamicSharedMemorySize() ||
      !launch.getAsyncDependencies().empty() || launch.getAsyncToken() ||
      !launch.getPrivateAttributions().empty() ||
      !launch.getBody().hasOneBlock())
    return std::nullopt;
  std::optional<SmallVector<int64_t, 6>> shape = launchShape(launch);
  if (!shape || (*shape)[0] != 1 || (*shape)[1] != 1 || (*shape)[2] != 1 ||
      (*shape)[4] != 1 || (*shape)[5] != 1)
    return std::nullopt;
  return (*shape)[3];
}

/// Whether `second`, right after `first`, may run in the same block after
/// a barrier: one block each, of the same threads or one of them one
/// thread.
static bool canMergeBlocks(gpu::LaunchOp first, gpu::LaunchOp second) {
  std::optional<int64_t> threads1 = singleBlockThreads(first);
  std::optional<int64_t> threads2 = singleBlockThreads(second);
  // A call could be anything (a barrier where only some threads reach it):
  // its launch stays apart.
  auto calls = [](gpu::LaunchOp launch) {
    return launch.getBody()
        .walk([](CallOpInterface) { return WalkResult::interrupt(); })
        .wasInterrupted();
  };
  return threads1 && threads2 &&
         (*threads1 == *threads2 || *threads1 == 1 || *threads2 == 1) &&
         !calls(first) && !calls(second);
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

/// Merges two one-block launches (canMergeBlocks) at `second`: `first`'s
/// body, a barrier, `second`'s body; a one-thread body under thread 0 when
/// the other has more threads.
static void mergeBlocks(IRRewriter &rewriter, gpu::LaunchOp first,
                        gpu::LaunchOp second) {
  int64_t threads1 = *singleBlockThreads(first);
  int64_t threads2 = *singleBlockThreads(second);
  Location loc = second.getLoc();
  Block &into = second.getBody().front();
  // The merged block's size; the second's buffers and ops stay as they
  // are, and a one-thread second body goes under thread 0.
  if (threads2 < threads1) {
    second.getBlockSizeXMutable().assign(first.getBlockSizeX());
    rewriter.setInsertionPointToStart(&into);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    SmallVector<Operation *> body;
    for (Operation &op : into.without_terminator())
      if (&op != zero.getDefiningOp() && &op != one.getDefiningOp())
        body.push_back(&op);
    Value leader = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, second.getThreadIds().x, zero);
    auto guard = scf::IfOp::create(rewriter, loc, leader,
                                   /*withElseRegion=*/false);
    Operation *yield = guard.getThenRegion().front().getTerminator();
    for (Operation *op : body)
      op->moveBefore(yield);
    auto inGuard = [&](OpOperand &use) {
      return guard->isAncestor(use.getOwner());
    };
    gpu::KernelDim3 ids = second.getThreadIds();
    gpu::KernelDim3 sizes = second.getBlockSize();
    for (Value id : {ids.x, ids.y, ids.z})
      rewriter.replaceUsesWithIf(id, zero, inGuard);
    for (Value size : {sizes.x, sizes.y, sizes.z})
      rewriter.replaceUsesWithIf(size, one, inGuard);
  }
  // The first's body before it, then a barrier.
  Block &from = first.getBody().front();
  SmallVector<Value> arguments(into.getArguments().take_front(12));
  for (BlockArgument buffer : first.getWorkgroupAttributions())
    arguments.push_back(
        second.addWorkgroupAttribution(buffer.getType(), buffer.getLoc()));
  rewriter.setInsertionPointToStart(&into);
  gpu::BarrierOp barrier = gpu::BarrierOp::create(rewriter, loc);
  if (threads1 < threads2) {
    // A one-thread first body runs on thread 0, as the one thread it was.
    rewriter.setInsertionPoint(barrier);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    for (unsigned i = 3; i < 6; ++i)
      arguments[i] = zero;
    for (unsigned i = 9; i < 12; ++i)
      arguments[i] = one;
    Value leader = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, second.getThreadIds().x, zero);
    auto guard = scf::IfOp::create(rewriter, loc, leader,
                                   /*withElseRegion=*/false);
    rewriter.eraseOp(from.getTerminator());
    rewriter.inlineBlockBefore(
        &from, guard.getThenRegion().front().getTerminator(), arguments);
  } else {
    rewriter.eraseOp(from.getTerminator());
    rewriter.inlineBlockBefore(&from, barrier, arguments);
  }
  SmallVector<Operation *> deallocs;
  for (Operation *op = first->getNextNode(); op != second;
       op = op->getNextNode())
    if (isa<gpu::DeallocOp>(op))
      deallocs.push_back(op);
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
      if (launch && (isPlainLaunch(launch) || singleBlockThreads(launch))) {
        if (open && isPlainLaunch(open) && isPlainLaunch(launch) &&
            canMerge(open, launch)) {
          merge(rewriter, open, launch);
          ++numMerged;
        } else if (open && canMergeBlocks(open, launch)) {
          mergeBlocks(rewriter, open, launch);
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
