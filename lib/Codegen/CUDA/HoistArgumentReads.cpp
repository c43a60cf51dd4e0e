//===- HoistArgumentReads.cpp - Host reads of read-only arguments first ---===//
//
// qtrain-hoist-argument-reads: in the CUDA step's host code, a scalar read
// of an entry argument that nothing in the function writes (the float
// formats' promotion flags) moves to the start of the function. The host
// waits for the device before each of its own memory accesses
// (qtrain-cuda-host-calls) when a kernel was launched since the last wait;
// at the start nothing has been launched, so the reads cost no wait.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_HOISTARGUMENTREADSPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;

namespace {

struct HoistArgumentReadsPass
    : mlir::qtrain::impl::HoistArgumentReadsPassBase<HoistArgumentReadsPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// Whether every use of `argument` reads it (memref.load, in host code or
/// in a kernel): then its values are those it had on entry.
bool isReadOnly(BlockArgument argument) {
  return llvm::all_of(argument.getUsers(), [](Operation *user) {
    return isa<memref::LoadOp>(user);
  });
}

} // namespace

void HoistArgumentReadsPass::runOnOperation() {
  getOperation().walk([&](func::FuncOp fn) {
    if (fn.isExternal())
      return;
    Block &entry = fn.getBody().front();
    SmallVector<memref::LoadOp> reads;
    for (BlockArgument argument : entry.getArguments()) {
      if (!isa<MemRefType>(argument.getType()) || !isReadOnly(argument))
        continue;
      for (Operation *user : argument.getUsers()) {
        auto load = cast<memref::LoadOp>(user);
        // Host reads at the top level at constant indices.
        if (load->getBlock() == &entry &&
            llvm::all_of(load.getIndices(), [](Value index) {
              return matchPattern(index, m_Constant());
            }))
          reads.push_back(load);
      }
    }
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    for (memref::LoadOp load : reads) {
      // The index constants come along (clones: they may have other users
      // in between).
      SmallVector<Value> indices;
      for (Value index : load.getIndices())
        indices.push_back(b.clone(*index.getDefiningOp())->getResult(0));
      auto hoisted = memref::LoadOp::create(b, load.getLoc(), load.getMemRef(),
                                            indices, load.getNontemporal());
      load.getResult().replaceAllUsesWith(hoisted.getResult());
      load.erase();
      ++numHoisted;
    }
  });
}
