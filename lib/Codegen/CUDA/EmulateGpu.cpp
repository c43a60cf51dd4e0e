//===- EmulateGpu.cpp - GPU launches as host loops, for tests -------------===//
//
// qtrain-emulate-gpu: each gpu.launch becomes an scf.parallel over its grid
// and block, and device allocations and copies become host ones, so that
// the CUDA step runs on the CPU (qtrain-compile --cuda-emulate-step) and is
// checked there against the CPU step. Exact for kernels without barriers or
// shared memory, which is every kernel qtrain-map-step-to-gpu makes.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_EMULATEGPUPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct EmulateGpuPass : mlir::qtrain::impl::EmulateGpuPassBase<EmulateGpuPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

/// Replaces `launch` by a loop over its blocks and threads.
static LogicalResult emulateLaunch(IRRewriter &rewriter, gpu::LaunchOp launch) {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.getClusterSizeX() || launch.getDynamicSharedMemorySize() ||
      !launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty() ||
      !launch.getBody().hasOneBlock())
    return launch.emitError("qtrain-emulate-gpu: only synchronous launches "
                            "of one block, without clusters or attributions, "
                            "run on the host");
  WalkResult barriers = launch.walk([](gpu::BarrierOp barrier) {
    barrier.emitError("qtrain-emulate-gpu: a barrier cannot run in host "
                      "loops");
    return WalkResult::interrupt();
  });
  if (barriers.wasInterrupted())
    return failure();

  Location loc = launch.getLoc();
  rewriter.setInsertionPoint(launch);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  SmallVector<Value> upper = {grid.x,  grid.y,  grid.z,
                              block.x, block.y, block.z};
  auto loop =
      scf::ParallelOp::create(rewriter, loc, SmallVector<Value>(6, zero), upper,
                              SmallVector<Value>(6, one));
  ValueRange ivs = loop.getInductionVars();
  Block &body = launch.getBody().front();
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  gpu::KernelDim3 threadIds = launch.getThreadIds();
  gpu::KernelDim3 gridSize = launch.getGridSize();
  gpu::KernelDim3 blockSize = launch.getBlockSize();
  SmallVector<Value> replacements(body.getNumArguments());
  auto set = [&](gpu::KernelDim3 dims, Value x, Value y, Value z) {
    for (auto [arg, value] :
         llvm::zip(SmallVector<Value>{dims.x, dims.y, dims.z},
                   SmallVector<Value>{x, y, z}))
      replacements[cast<BlockArgument>(arg).getArgNumber()] = value;
  };
  set(blockIds, ivs[0], ivs[1], ivs[2]);
  set(threadIds, ivs[3], ivs[4], ivs[5]);
  set(gridSize, grid.x, grid.y, grid.z);
  set(blockSize, block.x, block.y, block.z);
  if (llvm::any_of(replacements, [](Value v) { return !v; }))
    return launch.emitError("qtrain-emulate-gpu: a launch argument has no "
                            "host value");
  Operation *terminator = body.getTerminator();
  rewriter.inlineBlockBefore(&body, loop.getBody()->getTerminator(),
                             replacements);
  rewriter.eraseOp(terminator);
  rewriter.eraseOp(launch);
  return success();
}

void EmulateGpuPass::runOnOperation() {
  ModuleOp module = getOperation();
  IRRewriter rewriter(&getContext());
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<gpu::LaunchOp, gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp,
            gpu::MemsetOp, gpu::LaunchFuncOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    rewriter.setInsertionPoint(op);
    if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
      if (failed(emulateLaunch(rewriter, launch)))
        return signalPassFailure();
      continue;
    }
    auto async = dyn_cast<gpu::AsyncOpInterface>(op);
    if (isa<gpu::LaunchFuncOp, gpu::MemsetOp>(op) ||
        (async &&
         (async.getAsyncToken() || !async.getAsyncDependencies().empty()))) {
      op->emitError("qtrain-emulate-gpu: emulates synchronous gpu.launch, "
                    "alloc, dealloc and memcpy before kernel outlining; "
                    "this op is not one");
      return signalPassFailure();
    }
    if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
      rewriter.replaceOpWithNewOp<memref::AllocOp>(
          alloc, alloc.getMemref().getType(), alloc.getDynamicSizes(),
          alloc.getSymbolOperands());
    } else if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
      rewriter.replaceOpWithNewOp<memref::DeallocOp>(dealloc,
                                                     dealloc.getMemref());
    } else if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
      rewriter.replaceOpWithNewOp<memref::CopyOp>(copy, copy.getSrc(),
                                                  copy.getDst());
    }
  }
  module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  // Every buffer is host memory now.
  module.walk([](func::FuncOp fn) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      fn.removeArgAttr(i, kHostVisibleAttrName);
  });
}
