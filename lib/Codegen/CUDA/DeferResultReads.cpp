//===- DeferResultReads.cpp - Host reads of the step's results at its end -===//
//
// qtrain-defer-result-reads: in the bufferized CUDA step, before
// qtrain-map-step-to-gpu, a host read of a buffer the step made whose value
// only reaches the function's results (the loss, through its scaling) moves
// to just before the return. The host waits for the device before each of
// its own memory accesses (qtrain-cuda-host-calls); read where the loss is
// computed, it drains the device between the forward and the backward; read
// at the end, it shares the wait the step ends with.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Analysis/BufferAliasing.h"
#include "qtrain/Codegen/CUDA/HostCode.h"
#include "qtrain/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_DEFERRESULTREADSPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct DeferResultReadsPass
    : mlir::qtrain::impl::DeferResultReadsPassBase<DeferResultReadsPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

/// Adds to `moving` the scalar arithmetic of `load`'s block that its value
/// flows through to `ret`, if that is all it reaches; returns whether it is.
static bool collectResultSlice(memref::LoadOp load, func::ReturnOp ret,
                               llvm::SetVector<Operation *> &moving) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Operation *> worklist{load};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Operation *user : op->getUsers()) {
      if (user == ret || slice.contains(user))
        continue;
      if (user->getBlock() != load->getBlock() || !isScalarArithmetic(user))
        return false;
      slice.insert(user);
      worklist.push_back(user);
    }
  }
  moving.insert(load);
  moving.insert(slice.begin(), slice.end());
  return true;
}

void DeferResultReadsPass::runOnOperation() {
  getOperation().walk([&](func::FuncOp fn) {
    if (fn.isExternal() || !fn.getBody().hasOneBlock())
      return;
    Block &body = fn.getBody().front();
    auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
    if (!ret)
      return;
    for (auto load : llvm::to_vector(body.getOps<memref::LoadOp>())) {
      if (!isStepBuffer(rootOf(load.getMemRef())))
        continue;
      llvm::SetVector<Operation *> moving;
      if (!collectResultSlice(load, ret, moving))
        continue;
      SmallVector<Operation *> deallocs;
      // The latest point before which it may read instead.
      Operation *point = firstWriterAfter(
          load, ret, [&](Operation *op) { return moving.contains(op); },
          deallocs);
      // What moves, in block order (every op after the ops it uses): the
      // ops before `point`, if what they use is defined before it.
      SmallVector<Operation *> ordered;
      for (Operation &op : body)
        if (moving.contains(&op) && op.isBeforeInBlock(point))
          ordered.push_back(&op);
      bool dominated = llvm::all_of(ordered, [&](Operation *op) {
        return llvm::all_of(op->getOperands(), [&](Value operand) {
          Operation *def = operand.getDefiningOp();
          return !def || def->getBlock() != &body || moving.contains(def) ||
                 def->isBeforeInBlock(point);
        });
      });
      if (!dominated || ordered.back()->getNextNode() == point)
        continue;
      for (Operation *op : ordered)
        op->moveBefore(point);
      for (Operation *dealloc : deallocs)
        dealloc->moveBefore(point);
      ++numDeferred;
    }
  });
}
