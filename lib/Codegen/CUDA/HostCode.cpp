//===- HostCode.cpp - Facts about the CUDA step's host code ---------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/HostCode.h"

#include "mlir/Interfaces/ViewLikeInterface.h"
#include "qtrain/Analysis/BufferAliasing.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

Value qtrain::rootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

bool qtrain::isStepBuffer(Value root) {
  return isa_and_nonnull<memref::AllocOp, memref::GetGlobalOp>(
      root.getDefiningOp());
}

bool qtrain::isScalarArithmetic(Operation *op) {
  return isPure(op) && op->getNumRegions() == 0 &&
         llvm::all_of(op->getResultTypes(),
                      [](Type type) { return type.isIntOrIndexOrFloat(); });
}

bool qtrain::mayTouch(Operation *op, Value root, bool reads) {
  WalkResult walk = op->walk([&](Operation *nested) {
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(nested)) {
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (MemoryEffects::EffectInstance &effect : instances) {
        if (isa<MemoryEffects::Allocate>(effect.getEffect()) ||
            (!reads && isa<MemoryEffects::Read>(effect.getEffect())))
          continue;
        Value value = effect.getValue();
        if (!value || mayAlias(rootOf(value), root))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    if (isPure(nested) ||
        nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    for (Value operand : nested->getOperands())
      if (isa<BaseMemRefType>(operand.getType()) &&
          mayAlias(rootOf(operand), root))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return walk.wasInterrupted();
}

Operation *
qtrain::firstWriterAfter(memref::LoadOp load, Operation *until,
                         llvm::function_ref<bool(Operation *)> moving,
                         SmallVectorImpl<Operation *> &deallocs) {
  Value root = rootOf(load.getMemRef());
  Operation *op = load->getNextNode();
  for (; op != until; op = op->getNextNode()) {
    if (moving(op))
      continue;
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op);
        dealloc && rootOf(dealloc.getMemref()) == root) {
      deallocs.push_back(op);
      continue;
    }
    if (mayTouch(op, root, /*reads=*/false))
      break;
  }
  return op;
}
