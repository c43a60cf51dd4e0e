//===- EmulateGpu.cpp - GPU launches as host loops, for tests -------------===//
//
// qtrain-emulate-gpu: each gpu.launch becomes an scf.parallel over its grid
// and block, and device allocations and copies become host ones, so that
// the CUDA step runs on the CPU (qtrain-compile --cuda-emulate-step) and is
// checked there against the CPU step. Exact for every kernel
// qtrain-map-step-to-gpu makes: those of split reductions, which combine
// in shared memory between barriers, run block by block, each part between
// two barriers for all the block's threads before the next. A
// launch of a GEMM kernel (qtrain-gpu-gemms) runs the arithmetic its
// description (qtrain.gemm) states instead of its tensor-core code.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/Passes.h"

#include "qtrain/Codegen/CUDA/EmulateTensorCores.h"
#include "qtrain/Codegen/CUDA/GemmKernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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

/// The host values of `launch`'s body arguments: its block and thread ids
/// (`blockIds`, `threadIds`), grid and block sizes, and workgroup buffers
/// (`shared`); null for what is not given.
static SmallVector<Value> launchArguments(gpu::LaunchOp launch,
                                          ValueRange blockIds,
                                          ValueRange threadIds,
                                          ValueRange shared) {
  Block &body = launch.getBody().front();
  SmallVector<Value> replacements(body.getNumArguments());
  auto set = [&](gpu::KernelDim3 dims, ValueRange values) {
    if (values.empty())
      return;
    for (auto [arg, value] :
         llvm::zip_equal(SmallVector<Value>{dims.x, dims.y, dims.z}, values))
      replacements[cast<BlockArgument>(arg).getArgNumber()] = value;
  };
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  set(launch.getBlockIds(), blockIds);
  set(launch.getThreadIds(), threadIds);
  set(launch.getGridSize(), {grid.x, grid.y, grid.z});
  set(launch.getBlockSize(), {block.x, block.y, block.z});
  for (auto [arg, buffer] :
       llvm::zip_equal(launch.getWorkgroupAttributions(), shared))
    replacements[arg.getArgNumber()] = buffer;
  return replacements;
}

/// Clones into `b` what `value` needs from `body` (defined in an earlier
/// part of a launch split at barriers): pure ops, recomputed from the block
/// and thread ids. Fails on anything else, which would have to be kept per
/// thread.
static LogicalResult rematerialize(OpBuilder &b, Value value, Block &body,
                                   IRMapping &mapping) {
  if (mapping.contains(value))
    return success();
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != &body)
    return success();
  if (!isPure(def) || def->getNumRegions() != 0)
    return def->emitError("qtrain-emulate-gpu: a value that crosses a "
                          "barrier must be recomputable (pure)");
  for (Value operand : def->getOperands())
    if (failed(rematerialize(b, operand, body, mapping)))
      return failure();
  b.clone(*def, mapping);
  return success();
}

/// Replaces `launch` by a loop over its blocks and threads. A launch with
/// barriers (in its body, not nested) or workgroup buffers runs as a loop
/// over its blocks, each with host buffers for the workgroup's and the
/// body's parts between barriers one after the other, each part a loop over
/// the block's threads: what a thread wrote before a barrier, every thread
/// sees after it.
static LogicalResult emulateLaunch(IRRewriter &rewriter, gpu::LaunchOp launch) {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.getClusterSizeX() || launch.getDynamicSharedMemorySize() ||
      !launch.getPrivateAttributions().empty() ||
      !launch.getBody().hasOneBlock())
    return launch.emitError("qtrain-emulate-gpu: only synchronous launches "
                            "of one block, without clusters or private "
                            "attributions, run on the host");
  Block &body = launch.getBody().front();
  WalkResult nested = launch.walk([&](gpu::BarrierOp barrier) {
    if (barrier->getBlock() == &body)
      return WalkResult::advance();
    barrier.emitError("qtrain-emulate-gpu: a barrier inside control flow "
                      "cannot run in host loops");
    return WalkResult::interrupt();
  });
  if (nested.wasInterrupted())
    return failure();
  bool phased = !launch.getWorkgroupAttributions().empty() ||
                llvm::any_of(body, llvm::IsaPred<gpu::BarrierOp>);

  Location loc = launch.getLoc();
  rewriter.setInsertionPoint(launch);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  if (!phased) {
    SmallVector<Value> upper = {grid.x,  grid.y,  grid.z,
                                block.x, block.y, block.z};
    auto loop =
        scf::ParallelOp::create(rewriter, loc, SmallVector<Value>(6, zero),
                                upper, SmallVector<Value>(6, one));
    SmallVector<Value> ivs(loop.getInductionVars());
    SmallVector<Value> replacements =
        launchArguments(launch, ValueRange(ivs).take_front(3),
                        ValueRange(ivs).drop_front(3), ValueRange());
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

  // Blocks one after the other (their workgroup buffers are their own).
  auto blocks = scf::ForOp::create(rewriter, loc, zero, grid.x, one);
  rewriter.setInsertionPoint(blocks.getBody()->getTerminator());
  auto blocksY = scf::ForOp::create(rewriter, loc, zero, grid.y, one);
  rewriter.setInsertionPoint(blocksY.getBody()->getTerminator());
  auto blocksZ = scf::ForOp::create(rewriter, loc, zero, grid.z, one);
  rewriter.setInsertionPoint(blocksZ.getBody()->getTerminator());
  SmallVector<Value> blockIds = {blocks.getInductionVar(),
                                 blocksY.getInductionVar(),
                                 blocksZ.getInductionVar()};
  SmallVector<Value> shared;
  for (BlockArgument arg : launch.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(arg.getType());
    if (!type.hasStaticShape())
      return launch.emitError("qtrain-emulate-gpu: a workgroup buffer must "
                              "have a static shape");
    shared.push_back(memref::AllocOp::create(
        rewriter, loc,
        MemRefType::get(type.getShape(), type.getElementType(),
                        type.getLayout())));
  }
  // The parts of the body between barriers.
  SmallVector<SmallVector<Operation *>> parts(1);
  for (Operation &op : body.without_terminator()) {
    if (isa<gpu::BarrierOp>(op))
      parts.emplace_back();
    else
      parts.back().push_back(&op);
  }
  for (ArrayRef<Operation *> part : parts) {
    auto threads =
        scf::ParallelOp::create(rewriter, loc, SmallVector<Value>(3, zero),
                                SmallVector<Value>{block.x, block.y, block.z},
                                SmallVector<Value>(3, one));
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(threads.getBody()->getTerminator());
    SmallVector<Value> replacements =
        launchArguments(launch, blockIds, threads.getInductionVars(), shared);
    IRMapping mapping;
    for (auto [arg, value] : llvm::zip_equal(body.getArguments(), replacements))
      if (value)
        mapping.map(arg, value);
    for (Operation *op : part) {
      WalkResult operands = op->walk([&](Operation *inner) {
        for (Value operand : inner->getOperands())
          if (failed(rematerialize(rewriter, operand, body, mapping)))
            return WalkResult::interrupt();
        return WalkResult::advance();
      });
      if (operands.wasInterrupted())
        return failure();
      rewriter.clone(*op, mapping);
    }
  }
  for (Value buffer : shared)
    memref::DeallocOp::create(rewriter, loc, buffer);
  rewriter.eraseOp(launch);
  return success();
}

/// Replaces the launch of a GEMM kernel by host loops computing what its
/// description states: C[b, i, j] = sum over k, in order, of A[b, i, k] x
/// B[b, j, k] (f32: one fused multiply-add per term, as the CUDA-core
/// kernel; tensor-core kinds: exact products, f32 or exact s32 sums).
static LogicalResult emulateGemmLaunch(IRRewriter &rewriter,
                                       gpu::LaunchFuncOp launch) {
  auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
      launch, launch.getKernel());
  FailureOr<GemmKernelSpec> spec = GemmKernelSpec::fromAttr(
      kernel ? kernel->getAttrOfType<DictionaryAttr>(kGemmAttrName)
             : DictionaryAttr());
  if (failed(spec) || launch.getNumKernelOperands() != 3 ||
      launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return launch.emitError("qtrain-emulate-gpu: emulates only synchronous "
                            "launches of GEMM kernels described by ")
           << kGemmAttrName << " (qtrain-gpu-gemms)";
  Location loc = launch.getLoc();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(launch);
  Value a = launch.getKernelOperand(0), bm = launch.getKernelOperand(1),
        c = launch.getKernelOperand(2);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value c0 = index(0), c1 = index(1), batch = index(spec->batch),
        m = index(spec->m), n = index(spec->n), k = index(spec->k);
  bool isInt = spec->c == GemmEncoding::S32;
  Value zero =
      isInt
          ? arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0).getResult()
          : arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                           APFloat(0.0f))
                .getResult();
  auto loop = scf::ParallelOp::create(b, loc, {c0, c0, c0}, {batch, m, n},
                                      {c1, c1, c1});
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value bi = loop.getInductionVars()[0], i = loop.getInductionVars()[1],
        j = loop.getInductionVars()[2];
  // Row `row` of the [batch, rows, cols] operand at `bi`: its offset.
  auto offset = [&](Value row, Value rows, Value cols) -> Value {
    Value flat = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, bi, rows), row);
    return arith::MulIOp::create(b, loc, flat, cols);
  };
  Value aRow = offset(i, m, k), bRow = offset(j, n, k);
  // The sum over terms [first, last), in order, from zero.
  auto sumTerms = [&](Value first, Value last) {
    return scf::ForOp::create(
               b, loc, first, last, c1, ValueRange{zero},
               [&](OpBuilder &nb, Location nloc, Value kk, ValueRange acc) {
                 auto element = [&](Value memref, Value row,
                                    GemmEncoding encoding) {
                   Value raw = memref::LoadOp::create(
                       nb, nloc, memref,
                       ValueRange{arith::AddIOp::create(nb, nloc, row, kk)});
                   return decodeGemmElement(nb, nloc, raw, *spec, encoding);
                 };
                 Value av = element(a, aRow, spec->a),
                       bv = element(bm, bRow, spec->b);
                 Value next;
                 if (isInt)
                   next = arith::AddIOp::create(
                       nb, nloc, acc[0],
                       arith::MulIOp::create(nb, nloc, av, bv));
                 else if (spec->kind == "f32")
                   next = math::FmaOp::create(nb, nloc, av, bv, acc[0]);
                 else
                   next = arith::AddFOp::create(
                       nb, nloc, acc[0],
                       arith::MulFOp::create(nb, nloc, av, bv));
                 scf::YieldOp::create(nb, nloc, next);
               })
        .getResult(0);
  };
  Value sum;
  if (spec->splits == 1) {
    sum = sumTerms(c0, k);
  } else {
    // Each split's chunk summed on its own, then the chunks' sums added in
    // split order, from zero (the kernel's last block).
    Value chunk = index(spec->kChunk);
    sum = scf::ForOp::create(
              b, loc, c0, index(spec->splits), c1, ValueRange{zero},
              [&](OpBuilder &nb, Location nloc, Value split, ValueRange acc) {
                Value first = arith::MulIOp::create(nb, nloc, split, chunk);
                Value last = arith::MinUIOp::create(
                    nb, nloc, arith::AddIOp::create(nb, nloc, first, chunk), k);
                Value part = sumTerms(first, last);
                Value next = isInt
                                 ? arith::AddIOp::create(nb, nloc, acc[0], part)
                                       .getResult()
                                 : arith::AddFOp::create(nb, nloc, acc[0], part)
                                       .getResult();
                scf::YieldOp::create(nb, nloc, next);
              })
              .getResult(0);
  }
  Value flat = arith::AddIOp::create(b, loc, offset(i, m, n), j);
  memref::StoreOp::create(b, loc, sum, c, ValueRange{flat});
  rewriter.eraseOp(launch);
  return success();
}

/// Replaces the launch of a GEMM kernel by a gpu.launch of the kernel's
/// body: its ids the launch's, its workgroup buffers the launch's, its
/// globals copied into `module` and its tensor-core ops in host form
/// (EmulateTensorCores.h).
static FailureOr<gpu::LaunchOp> inlineGemmKernel(IRRewriter &rewriter,
                                                 gpu::LaunchFuncOp launch,
                                                 ModuleOp module) {
  auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
      launch, launch.getKernel());
  FailureOr<GemmKernelSpec> spec = GemmKernelSpec::fromAttr(
      kernel ? kernel->getAttrOfType<DictionaryAttr>(kGemmAttrName)
             : DictionaryAttr());
  if (failed(spec) || !kernel.getBody().hasOneBlock() ||
      !kernel.getPrivateAttributions().empty() ||
      launch.getNumKernelOperands() != kernel.getNumArguments() ||
      launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return launch.emitError("qtrain-emulate-gpu: gemms=kernel runs the code "
                            "of synchronous launches of GEMM kernels "
                            "described by ")
           << kGemmAttrName << " (qtrain-gpu-gemms)";
  Location loc = launch.getLoc();
  rewriter.setInsertionPoint(launch);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  SmallVector<Type> shared;
  for (BlockArgument arg : kernel.getWorkgroupAttributions())
    shared.push_back(arg.getType());
  auto inlined = gpu::LaunchOp::create(
      rewriter, loc, grid.x, grid.y, grid.z, block.x, block.y, block.z,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, shared);
  IRMapping mapping;
  for (auto [arg, operand] :
       llvm::zip_equal(kernel.getArguments(), launch.getKernelOperands()))
    mapping.map(arg, operand);
  for (auto [arg, buffer] : llvm::zip_equal(kernel.getWorkgroupAttributions(),
                                            inlined.getWorkgroupAttributions()))
    mapping.map(arg, buffer);
  auto dim = [](gpu::KernelDim3 dims, gpu::Dimension d) {
    return d == gpu::Dimension::x   ? dims.x
           : d == gpu::Dimension::y ? dims.y
                                    : dims.z;
  };
  auto gpuModule = kernel->getParentOfType<gpu::GPUModuleOp>();
  SymbolTable symbols(module);
  Block &body = inlined.getBody().front();
  rewriter.setInsertionPointToEnd(&body);
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    // The kernel's ids are its top-level ops (GemmKernel.cpp).
    if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
      mapping.map(id.getResult(),
                  dim(inlined.getThreadIds(), id.getDimension()));
      continue;
    }
    if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
      mapping.map(id.getResult(),
                  dim(inlined.getBlockIds(), id.getDimension()));
      continue;
    }
    WalkResult walk = op.walk([&](Operation *inner) {
      if (isa<gpu::ThreadIdOp, gpu::BlockIdOp>(inner)) {
        inner->emitError("qtrain-emulate-gpu: gemms=kernel needs the "
                         "kernel's ids at its top level");
        return WalkResult::interrupt();
      }
      if (auto get = dyn_cast<memref::GetGlobalOp>(inner))
        if (!symbols.lookup(get.getName()))
          if (auto global =
                  gpuModule.lookupSymbol<memref::GlobalOp>(get.getNameAttr())) {
            OpBuilder::InsertionGuard guard(rewriter);
            rewriter.setInsertionPointToStart(module.getBody());
            symbols.insert(rewriter.clone(*global));
          }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    rewriter.clone(op, mapping);
  }
  gpu::TerminatorOp::create(rewriter, loc);
  rewriter.eraseOp(launch);
  if (failed(emulateTensorCores(rewriter, inlined, *spec)))
    return failure();
  return inlined;
}

void EmulateGpuPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (gemms != "description" && gemms != "kernel") {
    module.emitError("qtrain-emulate-gpu: gemms must be description or "
                     "kernel, got '")
        << gemms << "'";
    return signalPassFailure();
  }
  IRRewriter rewriter(&getContext());
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<gpu::LaunchOp, gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp,
            gpu::MemsetOp, gpu::LaunchFuncOp>(op))
      ops.push_back(op);
  });
  // The host has no GEMM library: every product runs its kernel.
  if (auto library = module.lookupSymbol<func::FuncOp>(kLibraryGemmFunction)) {
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      if (call.getCallee() == kLibraryGemmFunction)
        calls.push_back(call);
    });
    for (func::CallOp call : calls) {
      rewriter.setInsertionPoint(call);
      rewriter.replaceOp(
          call, arith::ConstantIntOp::create(rewriter, call.getLoc(),
                                             rewriter.getI32Type(), 0));
    }
    rewriter.eraseOp(library);
  }
  for (Operation *op : ops) {
    rewriter.setInsertionPoint(op);
    if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
      if (failed(emulateLaunch(rewriter, launch)))
        return signalPassFailure();
      continue;
    }
    if (auto launchFunc = dyn_cast<gpu::LaunchFuncOp>(op)) {
      if (gemms == "kernel") {
        FailureOr<gpu::LaunchOp> inlined =
            inlineGemmKernel(rewriter, launchFunc, module);
        if (failed(inlined) || failed(emulateLaunch(rewriter, *inlined)))
          return signalPassFailure();
        continue;
      }
      if (failed(emulateGemmLaunch(rewriter, launchFunc)))
        return signalPassFailure();
      continue;
    }
    auto async = dyn_cast<gpu::AsyncOpInterface>(op);
    if (isa<gpu::MemsetOp>(op) ||
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
  // The kernels the launches ran are host loops now.
  for (auto kernels :
       llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>()))
    if (SymbolTable::symbolKnownUseEmpty(kernels, module))
      rewriter.eraseOp(kernels);
  if (module.getOps<gpu::GPUModuleOp>().empty())
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  // Every buffer is host memory now.
  module.walk([](func::FuncOp fn) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      fn.removeArgAttr(i, kHostVisibleAttrName);
  });
}
