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
//    one-thread arithmetic around it, a correction's column sums): the
//    first's body, a barrier (which orders the block's memory accesses,
//    global ones included), then the second's, in a block of the larger
//    size; a body of fewer threads runs on its first threads only, with
//    its own block size (one thread: thread 0, its ids 0 and block size 1),
//    and may hold no barrier; the workgroup buffers of both are the merged
//    launch's;
//  - both have the same block and one-dimensional grids of different
//    sizes, and neither touches what the other writes: the larger grid
//    runs both, the smaller body on its first blocks only (a block-uniform
//    guard, so it may hold no barrier), with its own grid size.
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

/// Whether `launch`'s body holds an op of `Ops`.
template <typename... Ops>
static bool holds(gpu::LaunchOp launch) {
  return launch.getBody()
      .walk([](Operation *op) {
        return isa<Ops...>(op) ? WalkResult::interrupt()
                               : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether `launch`'s body may run under a guard of some of its threads or
/// blocks, its ids and sizes replaced: no call (which could hide anything),
/// no id or size read other than through the launch's arguments, and no
/// warp- or block-collective op.
static bool guardable(gpu::LaunchOp launch) {
  return !holds<CallOpInterface, gpu::GridDimOp, gpu::BlockIdOp,
                gpu::BlockDimOp, gpu::ThreadIdOp, gpu::ShuffleOp,
                gpu::AllReduceOp, gpu::SubgroupReduceOp>(launch);
}

/// The bytes of `launch`'s workgroup buffers, if all are static.
static std::optional<int64_t> workgroupBytes(gpu::LaunchOp launch) {
  int64_t bytes = 0;
  for (BlockArgument buffer : launch.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(buffer.getType());
    if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
      return std::nullopt;
    bytes += type.getNumElements() *
             llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  }
  return bytes;
}

/// Whether the workgroup buffers of both launches fit one block's static
/// shared memory (48 KiB).
static bool sharedMemoryFits(gpu::LaunchOp first, gpu::LaunchOp second) {
  std::optional<int64_t> bytes1 = workgroupBytes(first);
  std::optional<int64_t> bytes2 = workgroupBytes(second);
  return bytes1 && bytes2 && *bytes1 + *bytes2 <= 48 * 1024;
}

/// Whether `second`, right after `first`, may run in the same block after
/// a barrier: one block each; the one of fewer threads runs on the first
/// of them, so it may hold no barrier (not every thread would reach it).
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
  if (!threads1 || !threads2 || calls(first) || calls(second) ||
      !sharedMemoryFits(first, second))
    return false;
  if (*threads1 == *threads2)
    return true;
  gpu::LaunchOp smaller = *threads1 < *threads2 ? first : second;
  return guardable(smaller) && !holds<gpu::BarrierOp>(smaller);
}

/// The guard of a body of `threads` threads in a merged block of more: its
/// first `threads` threads (thread 0 for one). Where the body's thread ids
/// and block sizes were `ids` and `sizes` (the launch's arguments), the
/// caller gives it those of `replacements`: for one thread, ids 0 and sizes
/// 1; else its block size `threads` along x.
static scf::IfOp guardThreads(IRRewriter &rewriter, Location loc, Value tidX,
                              int64_t threads,
                              SmallVectorImpl<Value> &replacements) {
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value inside;
  if (threads == 1) {
    inside = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                   tidX, zero);
    replacements.assign({zero, zero, zero, one, one, one});
  } else {
    Value size = arith::ConstantIndexOp::create(rewriter, loc, threads);
    inside = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                   tidX, size);
    replacements.assign({Value(), Value(), Value(), size, Value(), Value()});
  }
  return scf::IfOp::create(rewriter, loc, inside, /*withElseRegion=*/false);
}

/// Erases `first`, whose body now runs in `second`, and moves the
/// deallocations between them after `second` (the merged kernel runs at
/// `second`, so the runtime's pool must not hand their memory to an
/// allocation it also uses).
static void eraseMerged(IRRewriter &rewriter, gpu::LaunchOp first,
                        gpu::LaunchOp second) {
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

/// Moves `body` (a launch body's ops but its terminator) into `guard`'s
/// then-block.
static void moveBodyInto(scf::IfOp guard, ArrayRef<Operation *> body) {
  Operation *yield = guard.getThenRegion().front().getTerminator();
  for (Operation *op : body)
    op->moveBefore(yield);
}

/// The values `first`'s body takes inside `second`: `second`'s ids and
/// sizes, then `first`'s workgroup buffers, added to `second`.
static SmallVector<Value> argumentsInside(gpu::LaunchOp first,
                                          gpu::LaunchOp second) {
  SmallVector<Value> arguments(
      second.getBody().front().getArguments().take_front(12));
  for (BlockArgument buffer : first.getWorkgroupAttributions())
    arguments.push_back(
        second.addWorkgroupAttribution(buffer.getType(), buffer.getLoc()));
  return arguments;
}

/// Whether `second`, right after `first`, may run in the same launch of
/// the larger one-dimensional grid: the same block, different grid sizes,
/// independent bodies, the smaller one without barriers, and both reading
/// their ids and sizes only through the launch's arguments (which the
/// smaller body's guard replaces).
static bool canMergeGrids(gpu::LaunchOp first, gpu::LaunchOp second) {
  for (gpu::LaunchOp launch : {first, second})
    if (launch.hasClusterSize() || launch.getDynamicSharedMemorySize() ||
        !launch.getAsyncDependencies().empty() || launch.getAsyncToken() ||
        !launch.getPrivateAttributions().empty() ||
        !launch.getBody().hasOneBlock() || !guardable(launch))
      return false;
  if (!sharedMemoryFits(first, second))
    return false;
  std::optional<SmallVector<int64_t, 6>> shape1 = launchShape(first);
  std::optional<SmallVector<int64_t, 6>> shape2 = launchShape(second);
  if (!shape1 || !shape2 || (*shape1)[0] == (*shape2)[0])
    return false;
  for (int64_t i : {1, 2})
    if ((*shape1)[i] != 1 || (*shape2)[i] != 1)
      return false;
  for (int64_t i : {3, 4, 5})
    if ((*shape1)[i] != (*shape2)[i])
      return false;
  gpu::LaunchOp smaller = (*shape1)[0] < (*shape2)[0] ? first : second;
  return !holds<gpu::BarrierOp>(smaller) && independent(first, second);
}

/// Merges `first` into `second` (canMergeGrids): the larger grid, the
/// smaller body under `blockIdx.x < its grid`, with its grid size; the
/// workgroup buffers of both. No barrier: the bodies are independent.
static void mergeGrids(IRRewriter &rewriter, gpu::LaunchOp first,
                       gpu::LaunchOp second) {
  int64_t grid1 = (*launchShape(first))[0];
  int64_t grid2 = (*launchShape(second))[0];
  Location loc = second.getLoc();
  Block &into = second.getBody().front();
  auto guard = [&](int64_t blocks) {
    Value size = arith::ConstantIndexOp::create(rewriter, loc, blocks);
    Value inside = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult, second.getBlockIds().x, size);
    return std::make_pair(
        scf::IfOp::create(rewriter, loc, inside, /*withElseRegion=*/false),
        size);
  };
  if (grid2 < grid1) {
    second.getGridSizeXMutable().assign(first.getGridSizeX());
    SmallVector<Operation *> body;
    for (Operation &op : into.without_terminator())
      body.push_back(&op);
    rewriter.setInsertionPointToStart(&into);
    auto [ifOp, size] = guard(grid2);
    moveBodyInto(ifOp, body);
    scf::IfOp inner = ifOp;
    rewriter.replaceUsesWithIf(
        second.getGridSize().x, size,
        [&](OpOperand &use) { return inner->isAncestor(use.getOwner()); });
  }
  Block &from = first.getBody().front();
  SmallVector<Value> arguments = argumentsInside(first, second);
  rewriter.setInsertionPointToStart(&into);
  Operation *at = &into.front();
  if (grid1 < grid2) {
    auto [ifOp, size] = guard(grid1);
    arguments[6] = size; // the grid size along x
    at = ifOp.getThenRegion().front().getTerminator();
  }
  rewriter.eraseOp(from.getTerminator());
  rewriter.inlineBlockBefore(&from, at, arguments);
  eraseMerged(rewriter, first, second);
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
  Block &from = first.getBody().front();
  Block &into = second.getBody().front();
  rewriter.eraseOp(from.getTerminator());
  rewriter.inlineBlockBefore(&from, &into.front(), into.getArguments());
  eraseMerged(rewriter, first, second);
}

/// Merges two one-block launches (canMergeBlocks) at `second`: `first`'s
/// body, a barrier, `second`'s body, in a block of the larger size; a body
/// of fewer threads under guardThreads.
static void mergeBlocks(IRRewriter &rewriter, gpu::LaunchOp first,
                        gpu::LaunchOp second) {
  int64_t threads1 = *singleBlockThreads(first);
  int64_t threads2 = *singleBlockThreads(second);
  Location loc = second.getLoc();
  Block &into = second.getBody().front();
  // The merged block's size; the second's buffers and ops stay as they
  // are, and a smaller second body goes under its guard.
  if (threads2 < threads1) {
    second.getBlockSizeXMutable().assign(first.getBlockSizeX());
    SmallVector<Operation *> body;
    for (Operation &op : into.without_terminator())
      body.push_back(&op);
    rewriter.setInsertionPointToStart(&into);
    SmallVector<Value> replacements;
    scf::IfOp guard = guardThreads(rewriter, loc, second.getThreadIds().x,
                                   threads2, replacements);
    moveBodyInto(guard, body);
    auto inGuard = [&](OpOperand &use) {
      return guard->isAncestor(use.getOwner());
    };
    gpu::KernelDim3 ids = second.getThreadIds();
    gpu::KernelDim3 sizes = second.getBlockSize();
    for (auto [arg, replacement] : llvm::zip_equal(
             SmallVector<Value>{ids.x, ids.y, ids.z, sizes.x, sizes.y, sizes.z},
             replacements))
      if (replacement)
        rewriter.replaceUsesWithIf(arg, replacement, inGuard);
  }
  // The first's body before it, then a barrier.
  Block &from = first.getBody().front();
  SmallVector<Value> arguments = argumentsInside(first, second);
  rewriter.setInsertionPointToStart(&into);
  gpu::BarrierOp barrier = gpu::BarrierOp::create(rewriter, loc);
  if (threads1 < threads2) {
    // A smaller first body runs on its first threads, with its own block
    // size (one thread: thread 0, as the one thread it was).
    rewriter.setInsertionPoint(barrier);
    SmallVector<Value> replacements;
    scf::IfOp guard = guardThreads(rewriter, loc, second.getThreadIds().x,
                                   threads1, replacements);
    // Block arguments 3-5 are the thread ids, 9-11 the block sizes.
    for (auto [i, replacement] : llvm::enumerate(replacements))
      if (replacement)
        arguments[i < 3 ? 3 + i : 6 + i] = replacement;
    rewriter.eraseOp(from.getTerminator());
    rewriter.inlineBlockBefore(
        &from, guard.getThenRegion().front().getTerminator(), arguments);
  } else {
    rewriter.eraseOp(from.getTerminator());
    rewriter.inlineBlockBefore(&from, barrier, arguments);
  }
  eraseMerged(rewriter, first, second);
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
      if (launch && launch.getBody().hasOneBlock()) {
        if (open && isPlainLaunch(open) && isPlainLaunch(launch) &&
            canMerge(open, launch)) {
          merge(rewriter, open, launch);
          ++numMerged;
        } else if (open && canMergeBlocks(open, launch)) {
          mergeBlocks(rewriter, open, launch);
          ++numMerged;
        } else if (open && canMergeGrids(open, launch)) {
          mergeGrids(rewriter, open, launch);
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
