//===- MapStepToGpu.cpp - The bufferized step as GPU kernel launches ------===//
//
// qtrain-map-step-to-gpu: every loop nest of the bufferized training step
// becomes one gpu.launch over a 1-D grid, and every buffer the step makes
// lives in device memory. The host keeps the allocations, the launches, the
// calls of the variant functions and the slot dispatch; a buffer the host
// itself reads or writes must be an argument of an entry point, which the
// pass marks for the runtime to place in host memory the device can see.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/HostCode.h"
#include "qtrain/Codegen/CUDA/Passes.h"
#include "qtrain/Codegen/CUDA/SplitReductions.h"

#include "mlir/Conversion/SCFToGPU/SCFToGPU.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/DialectConversion.h"

#include <numeric>

namespace mlir::qtrain {
#define GEN_PASS_DEF_MAPSTEPTOGPUPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct MapStepToGpuPass
    : mlir::qtrain::impl::MapStepToGpuPassBase<MapStepToGpuPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

/// The functions that run on the host: every func.func outside gpu.modules.
static SmallVector<func::FuncOp> hostFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> functions;
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal())
      functions.push_back(fn);
  return functions;
}

/// Lowers `op` to loops whose parallel dimensions form one outermost
/// scf.parallel (a unit one when it has none), its reductions scf.for
/// loops inside, in their order. For each (init, value) of `fills`, each
/// iteration of the parallel loop first stores the value to the elements
/// of that init it owns (foldableFill says when that is the whole init,
/// once).
///
/// A reduction with few outputs and many elements each
/// (isSplittableReduction) becomes levels of parallel loops instead
/// (splitReductionToLoops).
static LogicalResult toParallelLoops(IRRewriter &rewriter, linalg::LinalgOp op,
                                     ArrayRef<std::pair<unsigned, Value>> fills,
                                     const ReductionSplitOptions &split) {
  rewriter.setInsertionPoint(op);
  if (!isa<linalg::GenericOp>(op)) {
    FailureOr<linalg::GenericOp> generic =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generic))
      return op.emitError("not supported by qtrain's CUDA step: this op has "
                          "no generic form to map onto GPU threads");
    op = *generic;
  }
  auto generic = cast<linalg::GenericOp>(op.getOperation());
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (iterators[i] == utils::IteratorType::parallel)
      order.push_back(i);
  bool anyParallel = !order.empty();
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (iterators[i] != utils::IteratorType::parallel)
      order.push_back(i);
  bool identity = llvm::all_of(llvm::enumerate(order),
                               [](auto e) { return e.value() == e.index(); });
  if (!identity) {
    FailureOr<linalg::GenericOp> swapped =
        linalg::interchangeGenericOp(rewriter, generic, order);
    if (failed(swapped))
      return generic.emitError("qtrain: cannot put the parallel loops of "
                               "this op first");
    generic = *swapped;
  }
  if (isSplittableReduction(generic, split)) {
    splitReductionToLoops(rewriter, generic, fills, split);
    return success();
  }
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  unsigned numInputs = generic.getNumDpsInputs();
  SmallVector<Value> inits;
  for (OpOperand &init : generic.getDpsInitsMutable())
    inits.push_back(init.get());
  if (anyParallel) {
    FailureOr<linalg::LinalgLoops> loops =
        linalg::linalgOpToParallelLoops(rewriter, generic);
    if (failed(loops))
      return generic.emitError("qtrain: cannot lower this op to loops");
    Location loc = generic.getLoc();
    rewriter.eraseOp(generic);
    // Each init's map is a permutation of the parallel loops (after the
    // interchange, the scf.parallel's induction variables in order).
    auto loop = cast<scf::ParallelOp>(loops->front());
    rewriter.setInsertionPointToStart(loop.getBody());
    for (auto [index, value] : fills) {
      SmallVector<Value> indices;
      for (AffineExpr result : maps[numInputs + index].getResults())
        indices.push_back(
            loop.getInductionVars()[cast<AffineDimExpr>(result).getPosition()]);
      memref::StoreOp::create(rewriter, loc, value, inits[index], indices);
    }
    return success();
  }
  // A reduction to a scalar or a 0-d op: one thread runs it.
  Location loc = generic.getLoc();
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto unit = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                      ValueRange{one}, ValueRange{one});
  rewriter.moveOpBefore(generic, unit.getBody()->getTerminator());
  rewriter.setInsertionPoint(generic);
  for (auto [index, value] : fills)
    memref::StoreOp::create(rewriter, loc, value, inits[index], ValueRange());
  if (failed(linalg::linalgOpToLoops(rewriter, generic)))
    return generic.emitError("qtrain: cannot lower this op to loops");
  rewriter.eraseOp(generic);
  return success();
}

/// The linalg.fill of `op`'s init `index` that can run inside `op`'s
/// kernel instead of a launch of its own, if any: it fills exactly that
/// buffer, comes earlier in the same block with nothing in between that may
/// touch the buffer's memory, the init is read through a permutation of
/// `op`'s parallel loops (each element owned by one iteration of the
/// parallel loop, every element owned) and no other operand of `op` shares
/// its memory. Each thread then stores the fill value to its own elements
/// first, exactly what the fill would have left there.
static linalg::FillOp foldableFill(linalg::LinalgOp op, unsigned index) {
  Value init = op.getDpsInitOperand(index)->get();
  auto type = dyn_cast<MemRefType>(init.getType());
  if (!type || !type.hasStaticShape())
    return {};
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInitOperand(index));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int64_t parallel = llvm::count(iterators, utils::IteratorType::parallel);
  if (!map.isProjectedPermutation() || int64_t(map.getNumResults()) != parallel)
    return {};
  for (AffineExpr result : map.getResults())
    if (iterators[cast<AffineDimExpr>(result).getPosition()] !=
        utils::IteratorType::parallel)
      return {};
  Value root = rootBuffer(init);
  for (OpOperand &operand : op->getOpOperands())
    if (&operand != op.getDpsInitOperand(index) &&
        isa<BaseMemRefType>(operand.get().getType()) &&
        rootBuffer(operand.get()) == root)
      return {};
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev);
        fill && fill.hasPureBufferSemantics())
      if (fill.getDpsInitOperand(0)->get() == init)
        return fill;
    if (isPure(prev))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(prev);
    if (!effects)
      return {};
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (MemoryEffects::EffectInstance &effect : instances) {
      Value value = effect.getValue();
      if (!value || rootBuffer(value) == root)
        return {};
    }
  }
  return {};
}

/// The outermost scf.parallel loops of `fn` that carry no GPU mapping yet.
static SmallVector<scf::ParallelOp> unmappedLoops(func::FuncOp fn) {
  SmallVector<scf::ParallelOp> loops;
  fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<gpu::LaunchOp>(op))
      return WalkResult::skip();
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      if (!loop->hasAttr(gpu::getMappingAttrName()))
        loops.push_back(loop);
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  return loops;
}

/// The trip count of a 1-D scf.parallel with constant bounds, if it has them.
static std::optional<int64_t> tripCount(scf::ParallelOp loop) {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[0]);
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound()[0]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[0]);
  if (!lb || !ub || !step || *step <= 0)
    return std::nullopt;
  return *ub <= *lb ? 0 : (*ub - *lb + *step - 1) / *step;
}

/// Maps `loop`'s one dimension to `processor`, and every scf.parallel
/// nested in its body to sequential loops.
static void setMapping(scf::ParallelOp loop, gpu::Processor processor) {
  MLIRContext *context = loop.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, context);
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping(
      loop.getNumLoops(),
      gpu::ParallelLoopDimMappingAttr::get(context, gpu::Processor::Sequential,
                                           identity, identity));
  mapping[0] = gpu::ParallelLoopDimMappingAttr::get(context, processor,
                                                    identity, identity);
  (void)gpu::setMappingAttr(loop, mapping);
}

/// Collapses every outermost loop nest of `fn` to one dimension and tiles
/// it by `threads`: blocks over the tiles, a thread per element of a tile.
static void mapLoops(IRRewriter &rewriter, func::FuncOp fn, int64_t threads) {
  for (scf::ParallelOp loop : unmappedLoops(fn)) {
    if (loop.getNumLoops() > 1) {
      std::vector<unsigned> all(loop.getNumLoops());
      std::iota(all.begin(), all.end(), 0u);
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {all});
    }
  }
  for (scf::ParallelOp loop : unmappedLoops(fn)) {
    int64_t tile = threads;
    if (std::optional<int64_t> count = tripCount(loop))
      tile = std::clamp<int64_t>(*count, 1, threads);
    auto [outer, inner] =
        scf::tileParallelLoop(loop, {tile}, /*noMinMaxBounds=*/true);
    setMapping(outer, gpu::Processor::BlockX);
    setMapping(inner, gpu::Processor::ThreadX);
    inner.walk([](scf::ParallelOp nested) {
      if (!nested->hasAttr(gpu::getMappingAttrName()))
        setMapping(nested, gpu::Processor::Sequential);
    });
  }
}

/// Device memory for every buffer the host code of `fn` makes: allocations
/// and deallocations on the device (`host_shared` for those in
/// `hostShared`, which the host reads or writes too), copies between buffers
/// by the device, and each constant global copied to a device buffer for
/// the kernels that read it.
static LogicalResult placeBuffers(IRRewriter &rewriter, func::FuncOp fn,
                                  const DenseSet<Operation *> &hostShared) {
  SmallVector<Operation *> ops;
  fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<gpu::LaunchOp>(op))
      return WalkResult::skip();
    if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp,
            memref::GetGlobalOp, memref::AllocaOp>(op))
      ops.push_back(op);
    return WalkResult::advance();
  });
  for (Operation *op : ops) {
    rewriter.setInsertionPoint(op);
    Location loc = op->getLoc();
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      auto device = gpu::AllocOp::create(
          rewriter, loc, alloc.getType(), /*asyncToken=*/Type(), ValueRange(),
          alloc.getDynamicSizes(), alloc.getSymbolOperands(),
          /*hostShared=*/hostShared.contains(alloc));
      rewriter.replaceOp(alloc, device.getMemref());
    } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      gpu::DeallocOp::create(rewriter, loc, TypeRange(), ValueRange(),
                             dealloc.getMemref());
      rewriter.eraseOp(dealloc);
    } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      gpu::MemcpyOp::create(rewriter, loc, TypeRange(), ValueRange(),
                            copy.getTarget(), copy.getSource());
      rewriter.eraseOp(copy);
    } else if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
      // Read-only on the device: a copy made where the constant is read,
      // freed at the end of its block.
      auto type = cast<MemRefType>(global.getType());
      if (!type.hasStaticShape() || !type.getLayout().isIdentity())
        return global.emitError("qtrain: cannot place this global on the "
                                "device (its buffer type is not static and "
                                "dense)");
      rewriter.setInsertionPointAfter(global);
      auto device =
          gpu::AllocOp::create(rewriter, loc, type, Type(), ValueRange(),
                               ValueRange(), ValueRange());
      // The host's own loads keep reading the global.
      rewriter.replaceUsesWithIf(
          global.getResult(), device.getMemref(), [](OpOperand &use) {
            return !isa<memref::LoadOp>(use.getOwner()) ||
                   use.getOwner()->getParentOfType<gpu::LaunchOp>();
          });
      gpu::MemcpyOp::create(rewriter, loc, TypeRange(), ValueRange(),
                            device.getMemref(), global.getResult());
      // Every use is in the global's block (dominance): freed at its end.
      rewriter.setInsertionPoint(global->getBlock()->getTerminator());
      gpu::DeallocOp::create(rewriter, loc, TypeRange(), ValueRange(),
                             device.getMemref());
    } else {
      return op->emitError("qtrain: a stack buffer on the host of the CUDA "
                           "step (memref.alloca) is not supported");
    }
  }
  return success();
}

/// Finds the buffers the host code reads or writes itself. Those made in
/// the step are returned, for placeBuffers to allocate `host_shared`;
/// arguments of public functions (the entry points, through the calls that
/// reach the access) are marked `qtrain.host_visible`, for the runtime to
/// place in memory both sides can access. Anything else is an error.
static FailureOr<DenseSet<Operation *>>
findHostBuffers(ModuleOp module, ArrayRef<func::FuncOp> functions) {
  SymbolTableCollection symbols;
  SymbolUserMap users(symbols, module);
  SmallVector<std::pair<Value, Operation *>> worklist;
  for (func::FuncOp fn : functions) {
    WalkResult walk = fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
      // Kernels (qtrain-gpu-gemms launches its own) access device memory.
      if (isa<gpu::LaunchOp, gpu::LaunchFuncOp>(op))
        return WalkResult::skip();
      if (isa<func::FuncOp, func::CallOp, memref::AllocOp, memref::DeallocOp,
              memref::CopyOp, memref::GetGlobalOp>(op))
        return WalkResult::advance();
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      if (!effects) {
        if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() || isPure(op))
          return WalkResult::advance();
        op->emitError("qtrain: the host code of the CUDA step cannot run "
                      "this op (unknown memory effects)");
        return WalkResult::interrupt();
      }
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (MemoryEffects::EffectInstance &effect : instances)
        if (Value value = effect.getValue())
          if (isa<BaseMemRefType>(value.getType()))
            worklist.push_back({value, op});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  DenseSet<Operation *> hostShared;
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    auto [value, user] = worklist.pop_back_val();
    Value root = rootBuffer(value);
    if (!seen.insert(root).second)
      continue;
    if (Operation *def = root.getDefiningOp()) {
      if (isa<memref::AllocOp>(def)) {
        hostShared.insert(def);
        continue;
      }
      if (isa<memref::GetGlobalOp>(def) && isa<memref::LoadOp>(user))
        continue;
      return user->emitError("qtrain: the host code of the CUDA step would "
                             "access a buffer it cannot place here");
    }
    auto arg = cast<BlockArgument>(root);
    auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (!fn)
      return user->emitError("qtrain: the host code of the CUDA step would "
                             "access a buffer it cannot place here");
    if (fn.isPublic())
      fn.setArgAttr(arg.getArgNumber(), kHostVisibleAttrName,
                    UnitAttr::get(module.getContext()));
    for (Operation *caller : users.getUsers(fn)) {
      auto call = dyn_cast<func::CallOp>(caller);
      if (!call)
        return caller->emitError("qtrain: the CUDA step cannot follow this "
                                 "use of a function whose host code reads "
                                 "its arguments");
      worklist.push_back({call.getOperand(arg.getArgNumber()), call});
    }
  }
  return hostShared;
}

void MapStepToGpuPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (threadsPerBlock < 1 || threadsPerBlock > 1024) {
    module.emitError("qtrain-map-step-to-gpu: threads-per-block must be in "
                     "[1, 1024], got ")
        << threadsPerBlock.getValue();
    return signalPassFailure();
  }
  if (reductionFanIn < 0 || splitReductionsBelow < 0) {
    module.emitError("qtrain-map-step-to-gpu: reduction-fan-in and "
                     "split-reductions-below must not be negative");
    return signalPassFailure();
  }
  ReductionSplitOptions split;
  split.fanIn = reductionFanIn;
  split.parallelBelow = splitReductionsBelow;
  split.threadsPerBlock = threadsPerBlock;
  split.lastBlockCombines = lastBlockCombines;
  IRRewriter rewriter(&getContext());
  SmallVector<func::FuncOp> functions = hostFunctions(module);
  for (func::FuncOp fn : functions) {
    SmallVector<linalg::LinalgOp> ops;
    fn.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    // Fills that run inside their consumer's kernel (one launch fewer).
    DenseMap<Operation *, SmallVector<std::pair<unsigned, Value>>> fills;
    DenseSet<Operation *> foldedFills;
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics() || isa<linalg::FillOp>(op))
        continue;
      for (unsigned i = 0; i < op.getNumDpsInits(); ++i)
        if (linalg::FillOp fill = foldableFill(op, i);
            fill && foldedFills.insert(fill).second)
          fills[op].push_back({i, fill.value()});
    }
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics()) {
        op.emitError("qtrain-map-step-to-gpu: expected a bufferized step "
                     "(this op has tensor operands)");
        return signalPassFailure();
      }
      if (foldedFills.contains(op)) {
        rewriter.eraseOp(op);
        continue;
      }
      if (failed(toParallelLoops(rewriter, op, fills.lookup(op), split)))
        return signalPassFailure();
    }
    mapLoops(rewriter, fn, threadsPerBlock);
  }

  RewritePatternSet patterns(&getContext());
  populateParallelLoopToGPUPatterns(patterns);
  ConversionTarget target(getContext());
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  configureParallelLoopToGPULegality(target);
  if (failed(applyPartialConversion(module, target, std::move(patterns))))
    return signalPassFailure();
  finalizeParallelLoopToGPUConversion(module);
  module.walk(
      [](gpu::LaunchOp launch) { launch->removeAttr("SCFToGPU_visited"); });

  for (func::FuncOp fn : functions) {
    WalkResult loops = fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (isa<scf::ParallelOp, linalg::LinalgOp>(op)) {
        op->emitError("qtrain-map-step-to-gpu: this loop nest was not "
                      "mapped onto GPU threads");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (loops.wasInterrupted())
      return signalPassFailure();
  }
  FailureOr<DenseSet<Operation *>> hostShared =
      findHostBuffers(module, functions);
  if (failed(hostShared))
    return signalPassFailure();
  for (func::FuncOp fn : functions)
    if (failed(placeBuffers(rewriter, fn, *hostShared)))
      return signalPassFailure();
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(&getContext()));
}
