//===- SinkViews.cpp - Views a launch uses, made inside it ----------------===//
//
// qtrain-sink-views: each gpu.launch gets its own copy of the views (and
// the constants they use) that make the memrefs its body reads and writes,
// so that outlining passes its kernel the buffers those views start from,
// which the bare-pointer calling convention can pass, instead of strided
// views at offsets, which it cannot.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_SINKVIEWSPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct SinkViewsPass : mlir::qtrain::impl::SinkViewsPassBase<SinkViewsPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// Ops cloned into a launch: views, and the constants they take.
bool isSunk(Operation *op) {
  return isa<ViewLikeOpInterface>(op) || isa<arith::ConstantOp>(op);
}

/// Appends to `chain`, defs first, the sunk ops that make `value`.
void collect(Value value, SetVector<Operation *> &chain) {
  Operation *def = value.getDefiningOp();
  if (!def || !isSunk(def) || chain.contains(def))
    return;
  for (Value operand : def->getOperands())
    collect(operand, chain);
  chain.insert(def);
}

/// An scf.if whose branches yield casts of buffers of one dense type T to a
/// strided type (bufferization gives a choice between buffers the most
/// general layout) yields the buffers as T instead, and casts its result
/// after, so that the cast is a view to sink like any other.
void yieldDenseBuffers(scf::IfOp branch) {
  if (branch.getElseRegion().empty())
    return;
  auto thenYield = branch.thenYield(), elseYield = branch.elseYield();
  OpBuilder builder = OpBuilder::atBlockEnd(branch->getBlock());
  builder.setInsertionPointAfter(branch);
  for (OpResult result : branch->getResults()) {
    auto type = dyn_cast<MemRefType>(result.getType());
    if (!type || type.getLayout().isIdentity())
      continue;
    unsigned i = result.getResultNumber();
    auto thenCast = thenYield.getOperand(i).getDefiningOp<memref::CastOp>();
    auto elseCast = elseYield.getOperand(i).getDefiningOp<memref::CastOp>();
    if (!thenCast || !elseCast ||
        thenCast.getSource().getType() != elseCast.getSource().getType())
      continue;
    auto dense = cast<MemRefType>(thenCast.getSource().getType());
    if (!dense.getLayout().isIdentity())
      continue;
    thenYield->setOperand(i, thenCast.getSource());
    elseYield->setOperand(i, elseCast.getSource());
    // (One cast from above the scf.if may be both.)
    if (thenCast->use_empty())
      thenCast->erase();
    if (elseCast != thenCast && elseCast->use_empty())
      elseCast->erase();
    result.setType(dense);
    auto view = memref::CastOp::create(builder, branch.getLoc(), type, result);
    result.replaceAllUsesExcept(view, view);
  }
}

} // namespace

void SinkViewsPass::runOnOperation() {
  getOperation().walk(yieldDenseBuffers);
  getOperation().walk([](gpu::LaunchOp launch) {
    Region &body = launch.getBody();
    SetVector<Value> used;
    getUsedValuesDefinedAbove(body, used);
    SetVector<Operation *> chain;
    for (Value value : used)
      if (isa<BaseMemRefType>(value.getType()))
        collect(value, chain);
    if (chain.empty())
      return;
    OpBuilder builder = OpBuilder::atBlockBegin(&body.front());
    IRMapping mapping;
    for (Operation *op : chain) {
      Operation *clone = builder.clone(*op, mapping);
      for (auto [from, to] :
           llvm::zip_equal(op->getResults(), clone->getResults()))
        replaceAllUsesInRegionWith(from, to, body);
    }
  });
}
