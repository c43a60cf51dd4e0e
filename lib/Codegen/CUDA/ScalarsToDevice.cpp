//===- ScalarsToDevice.cpp - Host scalar updates of buffers on the device -===//
//
// qtrain-scalars-to-device: in the bufferized CUDA step, before
// qtrain-map-step-to-gpu, host code that reads scalars kernels computed and
// stores what it makes of them into buffers (a quantizer's EMA of its range,
// from the batch's min and max that a reduction left in step buffers) moves
// to the device: each run of such stores, with the loads and the arithmetic
// they need, becomes one scf.parallel of one iteration, which
// qtrain-map-step-to-gpu launches on one thread. The host no longer reads
// those buffers, so it no longer waits for the device in the middle of the
// step (qtrain-cuda-host-calls puts a wait before every host access).
//
//===----------------------------------------------------------------------===//

#include "qtrain/Analysis/BufferAliasing.h"
#include "qtrain/Codegen/CUDA/HostCode.h"
#include "qtrain/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_SCALARSTODEVICEPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct ScalarsToDevicePass
    : mlir::qtrain::impl::ScalarsToDevicePassBase<ScalarsToDevicePass> {
  using Base::Base;
  void runOnOperation() override;
};

/// A run of host stores that move to the device together, with what they
/// need from their block.
struct ScalarUpdate {
  SmallVector<memref::StoreOp> stores;
  /// The loads and arithmetic the stores' values and indices are made of,
  /// in the block (in no particular order).
  llvm::SetVector<Operation *> slice;
  /// The loads of `slice` that read step buffers (device memory).
  SmallVector<memref::LoadOp> deviceLoads;
};

} // namespace

/// Whether a store may move to the device: a scalar into a step buffer or
/// an argument (the Trainer's buffers are device-accessible; the slots,
/// which are not, are only ever read).
static bool isCandidate(memref::StoreOp store) {
  Value root = rootOf(store.getMemRef());
  return isStepBuffer(root) || isFunctionArgument(root);
}

/// Adds to `update` the ops of `store`'s block that make its value and
/// indices: scalar arithmetic and loads of step buffers. Anything else (a
/// read of an argument, a call's result, a value from outside the block)
/// stays on the host and is captured by the kernel.
static void collectSlice(memref::StoreOp store, ScalarUpdate &update) {
  Block *block = store->getBlock();
  SmallVector<Value> worklist(store.getIndices());
  worklist.push_back(store.getValueToStore());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op || op->getBlock() != block || update.slice.contains(op))
      continue;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (!isStepBuffer(rootOf(load.getMemRef())))
        continue;
      update.deviceLoads.push_back(load);
      update.slice.insert(op);
      llvm::append_range(worklist, load.getIndices());
      continue;
    }
    if (!isScalarArithmetic(op))
      continue;
    update.slice.insert(op);
    llvm::append_range(worklist, op->getOperands());
  }
}

/// Moves `update` into one single-iteration scf.parallel at its last
/// store, if nothing between its ops and there changes what they read or
/// write (a dealloc of a buffer it reads moves after it). Returns whether
/// it moved.
static bool moveToDevice(ScalarUpdate &update) {
  Operation *last = update.stores.back();
  DenseSet<Operation *> moving(update.slice.begin(), update.slice.end());
  for (memref::StoreOp store : update.stores)
    moving.insert(store);
  SmallVector<Operation *> deallocs;
  // The device reads each step buffer at the last store instead of at its
  // load: nothing in between may write it (deallocs move after it).
  auto isMoving = [&](Operation *op) { return moving.contains(op); };
  for (memref::LoadOp load : update.deviceLoads)
    if (firstWriterAfter(load, last, isMoving, deallocs) != last)
      return false;
  // The buffers it writes are written at the last store instead: nothing
  // in between may read or write them.
  for (memref::StoreOp store : ArrayRef(update.stores).drop_back()) {
    Value root = rootOf(store.getMemRef());
    for (Operation *op = store->getNextNode(); op && op != last;
         op = op->getNextNode())
      if (!moving.contains(op) && mayTouch(op, root, /*reads=*/true))
        return false;
  }

  OpBuilder b(last);
  Location loc = last->getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ParallelOp::create(b, loc, ValueRange{zero}, ValueRange{one},
                                      ValueRange{one});
  b.setInsertionPoint(loop.getBody()->getTerminator());
  IRMapping mapping;
  // Block order: every op after the ops it uses, loads and stores in their
  // order.
  for (Operation &op : *last->getBlock())
    if (moving.contains(&op))
      b.clone(op, mapping);
  // After the loop (which is just before `last`), in their order.
  for (Operation *dealloc : deallocs)
    dealloc->moveBefore(last);
  for (memref::StoreOp store : update.stores)
    store.erase();
  // What the host no longer needs, users first (a value with other host
  // users stays).
  SmallVector<Operation *> dead;
  for (Operation &op : *loop->getBlock())
    if (update.slice.contains(&op))
      dead.push_back(&op);
  for (Operation *op : llvm::reverse(dead))
    if (op->use_empty())
      op->erase();
  return true;
}

/// Whether a kernel may run before `op` in its function: an op before it
/// (in its block or an enclosing one) is or holds a loop nest, a call or a
/// launch.
static bool mayFollowKernels(Operation *op) {
  auto runsKernels = [](Operation *candidate) {
    WalkResult walk = candidate->walk([](Operation *nested) {
      return isa<linalg::LinalgOp, func::CallOp, gpu::LaunchFuncOp,
                 gpu::LaunchOp>(nested)
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    return walk.wasInterrupted();
  };
  for (; op && !isa<func::FuncOp>(op); op = op->getParentOp())
    for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode())
      if (runsKernels(prev))
        return true;
  return false;
}

/// The candidate stores of `block`, in runs: two stores are in one run when
/// only arithmetic, loads and deallocs lie between them.
static SmallVector<SmallVector<memref::StoreOp>> storeRuns(Block &block) {
  SmallVector<SmallVector<memref::StoreOp>> runs;
  bool open = false;
  for (Operation &op : block) {
    auto store = dyn_cast<memref::StoreOp>(&op);
    if (store && isCandidate(store)) {
      if (!open)
        runs.emplace_back();
      runs.back().push_back(store);
      open = true;
      continue;
    }
    if (!isa<memref::LoadOp, memref::DeallocOp>(op) && !isPure(&op))
      open = false;
  }
  return runs;
}

void ScalarsToDevicePass::runOnOperation() {
  SmallVector<Block *> blocks;
  getOperation().walk([&](func::FuncOp fn) {
    fn.walk([&](Block *block) {
      // Straight host code only: the function's body and its branches,
      // not a loop (nor anything inside a loop nest or kernel).
      for (Operation *parent = block->getParentOp(); parent != fn;
           parent = parent->getParentOp())
        if (!isa<scf::IfOp, scf::IndexSwitchOp>(parent))
          return;
      blocks.push_back(block);
    });
  });
  for (Block *block : blocks) {
    for (SmallVector<memref::StoreOp> &run : storeRuns(*block)) {
      auto tryMove = [&](ArrayRef<memref::StoreOp> stores) {
        ScalarUpdate update;
        update.stores.assign(stores.begin(), stores.end());
        for (memref::StoreOp store : stores)
          collectSlice(store, update);
        // An update makes the host wait if it reads what kernels computed,
        // or if kernels may have run before it; else it stays.
        if ((update.deviceLoads.empty() && !mayFollowKernels(stores.front())) ||
            !moveToDevice(update))
          return false;
        ++numUpdates;
        numStores += stores.size();
        return true;
      };
      if (tryMove(run))
        continue;
      // Apart, where the run as one cannot move.
      for (memref::StoreOp store : SmallVector<memref::StoreOp>(run))
        tryMove(store);
    }
  }
}
