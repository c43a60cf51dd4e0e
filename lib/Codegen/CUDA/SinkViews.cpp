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

} // namespace

void SinkViewsPass::runOnOperation() {
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
