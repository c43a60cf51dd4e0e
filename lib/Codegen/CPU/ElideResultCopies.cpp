//===- ElideResultCopies.cpp - Calls write out-parameters -------*- C++ -*-===//
//
// qtrain-elide-result-copies: `%b = memref.alloc; call @f(..., %b);
// memref.copy %b, %out` with %out an argument of the function becomes
// `call @f(..., %out)`. The public variants that qtrain-share-functions
// turns into calls of a shared body have exactly that shape after
// buffer-results-to-out-params.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_ELIDERESULTCOPIESPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;

namespace {

/// Whether `copy` may be elided: its target an argument of `fn` that only
/// the copy uses, its source a fresh buffer of the same type whose other
/// users are calls before the copy in its block (returning no memref, so no
/// alias of the buffer outlives the copy). Only calls: code generated in
/// `fn` itself that wrote the buffer would then write an argument, which
/// LLVM must assume may alias the others, and the vectorized `reassoc`
/// sums of qtrain-reassociate-sums and qtrain-promote-accumulators'
/// registers would change the order of additions (ulp-level differences in
/// the step's bias gradients, seen as different losses). A callee sees an
/// argument either way.
memref::AllocOp elidableSource(func::FuncOp fn, memref::CopyOp copy) {
  auto target = dyn_cast<BlockArgument>(copy.getTarget());
  if (!target || target.getOwner() != &fn.getBody().front() ||
      !target.hasOneUse())
    return {};
  auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc.getType() != target.getType() ||
      alloc->getBlock() != copy->getBlock())
    return {};
  Block *block = copy->getBlock();
  for (Operation *user : alloc->getUsers()) {
    if (user == copy)
      continue;
    if (!isa<func::CallOp>(user) || user->getBlock() != block ||
        !user->isBeforeInBlock(copy) ||
        llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>))
      return {};
  }
  return alloc;
}

struct ElideResultCopiesPass
    : mlir::qtrain::impl::ElideResultCopiesPassBase<ElideResultCopiesPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    SmallVector<memref::CopyOp> copies;
    fn.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      memref::AllocOp alloc = elidableSource(fn, copy);
      if (!alloc)
        continue;
      Value target = copy.getTarget();
      copy.erase();
      alloc.getResult().replaceAllUsesWith(target);
      alloc.erase();
      ++numElided;
    }
  }
};

} // namespace
