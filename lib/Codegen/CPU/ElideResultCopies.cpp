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
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_ELIDERESULTCOPIESPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;

namespace {

/// The entry points of the step ABI (docs/bundle.md, "The step ABI"): their
/// buffers never overlap where written (outputs alias no input, inputs are
/// only read), so every buffer argument is `llvm.noalias`.
bool isStepEntry(func::FuncOp fn) {
  return fn.isPublic() &&
         llvm::is_contained({"train_step", "eval_step"}, fn.getSymName());
}

/// Whether `copy` may be elided: its target an argument of `fn` that only
/// the copy uses, its source a fresh buffer of the same type whose other
/// users come before the copy in its block and return no memref (no alias
/// of the buffer outlives the copy). Unless the target is `llvm.noalias`,
/// those users must be calls: code generated in `fn` itself that wrote the
/// buffer would then write an argument, which LLVM must assume may alias
/// the others, and the vectorized `reassoc` sums of
/// qtrain-reassociate-sums would add in another order (ulp-level
/// differences in the step's bias gradients, seen as different losses). A
/// callee sees an argument either way; a `llvm.noalias` argument is to LLVM
/// what a fresh allocation is.
memref::AllocOp elidableSource(func::FuncOp fn, memref::CopyOp copy);

/// The buffer `copy` copies into an argument of `fn` that only the copy
/// uses: a memref.alloc of the argument's type in the copy's block.
memref::AllocOp copiedBuffer(func::FuncOp fn, memref::CopyOp copy) {
  auto target = dyn_cast<BlockArgument>(copy.getTarget());
  if (!target || target.getOwner() != &fn.getBody().front() ||
      !target.hasOneUse())
    return {};
  auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc.getType() != target.getType() ||
      alloc->getBlock() != copy->getBlock())
    return {};
  return alloc;
}

memref::AllocOp elidableSource(func::FuncOp fn, memref::CopyOp copy) {
  memref::AllocOp alloc = copiedBuffer(fn, copy);
  if (!alloc)
    return {};
  auto target = cast<BlockArgument>(copy.getTarget());
  bool noAlias = static_cast<bool>(fn.getArgAttr(
      target.getArgNumber(), LLVM::LLVMDialect::getNoAliasAttrName()));
  Block *block = copy->getBlock();
  for (Operation *user : alloc->getUsers()) {
    if (user == copy)
      continue;
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!inBlock || !inBlock->isBeforeInBlock(copy) ||
        (!noAlias && !isa<func::CallOp>(user)) ||
        llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>))
      return {};
  }
  return alloc;
}

/// The root buffer of `v` through views.
Value rootOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// elementwise-writers: whether `alloc`, copied by `copy`, is written by
/// one elementwise linalg.generic right before the copy (nothing with
/// memory effects between) for the copy alone, that does not read its
/// output and whose other inputs are allocations of the function or read
/// element for element (the output's map): that generic may then write the
/// copy's target itself.
bool elementwiseWriter(memref::AllocOp alloc, memref::CopyOp copy) {
  Operation *prev = copy->getPrevNode();
  while (prev && isMemoryEffectFree(prev))
    prev = prev->getPrevNode();
  auto writer = dyn_cast_or_null<linalg::GenericOp>(prev);
  if (!writer || !alloc.getResult().hasNUses(2) ||
      writer.getNumDpsInits() != 1 ||
      writer.getDpsInits()[0] != alloc.getResult() ||
      writer.getNumParallelLoops() != writer.getNumLoops() ||
      !writer.hasPureBufferSemantics() ||
      writer.payloadUsesValueFromOperand(writer.getDpsInitOperand(0)))
    return false;
  AffineMap outMap = writer.getMatchingIndexingMap(writer.getDpsInitOperand(0));
  for (OpOperand *input : writer.getDpsInputOperands()) {
    if (!isa<BaseMemRefType>(input->get().getType()) ||
        isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
            rootOf(input->get()).getDefiningOp()))
      continue;
    if (writer.getMatchingIndexingMap(input) != outMap ||
        input->get().getType() != alloc.getType())
      return false;
  }
  return true;
}

/// elementwise-writers: the buffer of `copy` when an elementwise generic
/// writes it for the copy alone (elementwiseWriter).
memref::AllocOp elementwiseSource(func::FuncOp fn, memref::CopyOp copy) {
  memref::AllocOp alloc = copiedBuffer(fn, copy);
  if (!alloc || !elementwiseWriter(alloc, copy))
    return {};
  return alloc;
}

struct ElideResultCopiesPass
    : mlir::qtrain::impl::ElideResultCopiesPassBase<ElideResultCopiesPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    if (isStepEntry(fn))
      for (auto [index, type] : llvm::enumerate(fn.getArgumentTypes()))
        if (isa<BaseMemRefType>(type))
          fn.setArgAttr(index, LLVM::LLVMDialect::getNoAliasAttrName(),
                        UnitAttr::get(&getContext()));
    SmallVector<memref::CopyOp> copies;
    fn.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      memref::AllocOp alloc = elidableSource(fn, copy);
      if (!alloc && elementwiseWriters)
        alloc = elementwiseSource(fn, copy);
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
