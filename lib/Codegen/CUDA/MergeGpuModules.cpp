//===- MergeGpuModules.cpp - One gpu.module for the step's kernels --------===//
//
// qtrain-merge-gpu-modules: every gpu.module of the module moves into one,
// so that the step's kernels are one PTX or cubin, loaded once, instead of
// one module per launch as gpu-kernel-outlining leaves them.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_MERGEGPUMODULESPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct MergeGpuModulesPass
    : mlir::qtrain::impl::MergeGpuModulesPassBase<MergeGpuModulesPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

void MergeGpuModulesPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<gpu::GPUModuleOp> sources(module.getOps<gpu::GPUModuleOp>());
  if (sources.empty())
    return;
  // One module can only be serialized one way.
  for (gpu::GPUModuleOp source : sources)
    if (source.getTargetsAttr() != sources.front().getTargetsAttr() ||
        source.getOffloadingHandlerAttr() !=
            sources.front().getOffloadingHandlerAttr()) {
      source.emitError("qtrain-merge-gpu-modules: this gpu.module's targets "
                       "or offloading handler differ from those of @")
          << sources.front().getSymName()
          << "; modules serialized differently cannot be merged";
      return signalPassFailure();
    }
  if (sources.size() == 1 && sources.front().getSymName() == name)
    return;

  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto merged = gpu::GPUModuleOp::create(
      builder, sources.front().getLoc(), "qtrain_merged_kernels",
      sources.front().getTargetsAttr(),
      sources.front().getOffloadingHandlerAttr());
  SymbolTable mergedSymbols(merged);
  // (module, symbol) -> the symbol's name in the merged module.
  DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
  for (gpu::GPUModuleOp source : sources) {
    StringAttr sourceName = source.getSymNameAttr();
    for (Operation &op : llvm::make_early_inc_range(*source.getBody())) {
      auto symbol = dyn_cast<SymbolOpInterface>(op);
      StringAttr before = symbol ? symbol.getNameAttr() : StringAttr();
      op.moveBefore(merged.getBody(), merged.getBody()->end());
      if (!symbol)
        continue;
      // Kernels keep their names; a clash (two modules' private helpers)
      // gets a unique one.
      if (auto existing = mergedSymbols.lookup(before); existing != &op) {
        if (existing && symbol.isPrivate() &&
            OperationEquivalence::isEquivalentTo(
                existing, &op, OperationEquivalence::Flags::IgnoreLocations)) {
          // The same declaration (a libdevice function) is kept once.
          op.erase();
          renamed[{sourceName, before}] = before;
          continue;
        }
      }
      renamed[{sourceName, before}] = mergedSymbols.insert(&op);
    }
  }
  for (gpu::GPUModuleOp source : sources)
    source.erase();
  merged.setName(name);

  StringAttr mergedName = merged.getSymNameAttr();
  WalkResult walk = module.walk([&](gpu::LaunchFuncOp launch) {
    SymbolRefAttr kernel = launch.getKernel();
    auto it =
        renamed.find({kernel.getRootReference(), kernel.getLeafReference()});
    if (it == renamed.end() || kernel.getNestedReferences().size() != 1) {
      launch.emitError("qtrain-merge-gpu-modules: this launch's kernel is not "
                       "in a gpu.module of the module");
      return WalkResult::interrupt();
    }
    launch.setKernelAttr(
        SymbolRefAttr::get(mergedName, {FlatSymbolRefAttr::get(it->second)}));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return signalPassFailure();
}
