//===- FreeEarly.cpp - Free each buffer after its last use ------*- C++ -*-===//
//
// qtrain-free-early: MLIR's ownership-based buffer deallocation frees the
// buffers of a block at its end, so a training step holds every buffer it
// ever allocates until it returns. This pass moves each memref.dealloc to
// right after the last op of its block that uses the buffer or any view of
// it, so that memory is reused while the step runs. It stays put when an
// alias may be used where the analysis cannot see it. Each memref.alloc
// moves the other way, to right before its first use in its block.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_FREEEARLYPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;

namespace {
struct FreeEarlyPass : mlir::qtrain::impl::FreeEarlyPassBase<FreeEarlyPass> {
  void runOnOperation() override;
};
} // namespace

void FreeEarlyPass::runOnOperation() {
  Operation *root = getOperation();
  BufferViewFlowAnalysis aliases(root);
  SmallVector<memref::DeallocOp> deallocs;
  root->walk([&](memref::DeallocOp op) { deallocs.push_back(op); });
  for (memref::DeallocOp dealloc : deallocs) {
    Block *block = dealloc->getBlock();
    // The last op of the block that touches the buffer through any alias
    // (views, and values it flows to through region branches).
    Operation *last = nullptr;
    bool escapes = false;
    BufferViewFlowAnalysis::ValueSetT all =
        aliases.resolve(dealloc.getMemref());
    for (Value alias : all) {
      if (auto arg = dyn_cast<BlockArgument>(alias);
          arg && arg.getOwner() == block)
        escapes = true; // defined by the block itself: keep it where it is
      for (Operation *user : alias.getUsers()) {
        if (user == dealloc)
          continue;
        // A user that returns a buffer the analysis did not relate to this
        // one (an op without a view-flow model, e.g. a memref
        // arith.select) may return an alias: do not move.
        if (llvm::any_of(user->getResults(), [&](Value r) {
              return isa<BaseMemRefType>(r.getType()) && !all.contains(r);
            }))
          escapes = true;
        Operation *ancestor = block->findAncestorOpInBlock(*user);
        // A use outside the block (an enclosing op reads it after the
        // block runs): leave the dealloc alone.
        if (!ancestor) {
          escapes = true;
          continue;
        }
        if (!last || last->isBeforeInBlock(ancestor))
          last = ancestor;
      }
    }
    if (escapes || !last || !last->isBeforeInBlock(dealloc))
      continue;
    if (last->hasTrait<OpTrait::IsTerminator>())
      continue;
    dealloc->moveAfter(last);
    ++numMoved;
  }

  // Allocate late: bufferization allocates a tensor.empty's buffer where
  // the empty tensor was defined, which may be long before the op that
  // fills it (convnet's ReLU output was allocated before the convolution
  // it follows). Each alloc moves to right before the first op of its block
  // that uses it; every view of it is made by such a user, so none comes
  // earlier. Its size operands are defined before it, so they still
  // dominate.
  SmallVector<memref::AllocOp> allocs;
  root->walk([&](memref::AllocOp op) { allocs.push_back(op); });
  for (memref::AllocOp alloc : allocs) {
    Block *block = alloc->getBlock();
    Operation *first = nullptr;
    for (Operation *user : alloc->getUsers()) {
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (ancestor && (!first || ancestor->isBeforeInBlock(first)))
        first = ancestor;
    }
    if (!first || first == alloc->getNextNode() ||
        !alloc->isBeforeInBlock(first))
      continue;
    alloc->moveBefore(first);
    ++numSunk;
  }
}
