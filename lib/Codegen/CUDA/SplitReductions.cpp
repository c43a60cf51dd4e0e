//===- SplitReductions.cpp - Reductions over many GPU threads -------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
//
// A reduction with few outputs and many elements, lowered to levels of
// scf.parallel loops in which each thread combines at most `fanIn` values
// (include/qtrain/Codegen/CUDA/SplitReductions.h).
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/SplitReductions.h"

#include "qtrain/Codegen/CUDA/HostCode.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::qtrain;

/// Ops whose repeated application gives one value whatever the grouping
/// and order of the operands (up to rounding, for floating-point add and
/// multiply).
static bool isCombiner(Operation *op) {
  return op->getNumOperands() == 2 && op->getNumResults() == 1 &&
         op->getNumRegions() == 0 &&
         isa<arith::AddFOp, arith::AddIOp, arith::MulFOp, arith::MulIOp,
             arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
             arith::MinNumFOp, arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp,
             arith::MinUIOp, arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op);
}

namespace {

/// How output `index` of a generic is reduced: `combiner` combines the
/// output's value (operand `outPosition`) with the element's value.
struct Reduction {
  Operation *combiner;
  unsigned outPosition;
};

/// The shape of a splittable generic: its loops' extents, parallel first.
struct Shape {
  SmallVector<int64_t> parallel, reduced;
  int64_t reducedCount = 1;
};

} // namespace

/// Each output's reduction, if every output of `op` has the form the split
/// needs (isSplittableReduction).
static std::optional<SmallVector<Reduction>>
matchReductions(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  unsigned numInputs = op.getNumDpsInputs();
  SmallVector<Reduction> reductions;
  for (unsigned i = 0; i < op.getNumDpsInits(); ++i) {
    BlockArgument out = body.getArgument(numInputs + i);
    if (!out.hasOneUse())
      return std::nullopt;
    Operation *combiner = *out.getUsers().begin();
    if (!isCombiner(combiner) || !combiner->getResult(0).hasOneUse())
      return std::nullopt;
    OpOperand &use = *combiner->getResult(0).getUses().begin();
    if (use.getOwner() != yield || use.getOperandNumber() != i)
      return std::nullopt;
    unsigned position = combiner->getOperand(0) == out ? 0 : 1;
    if (combiner->getOperand(1 - position) == out)
      return std::nullopt;
    reductions.push_back({combiner, position});
  }
  for (Operation &inner : body.without_terminator())
    if (!isa<linalg::IndexOp>(inner) && !isMemoryEffectFree(&inner))
      return std::nullopt;
  return reductions;
}

static std::optional<Shape> matchShape(linalg::GenericOp op) {
  Shape shape;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [range, iterator] : llvm::zip_equal(ranges, iterators)) {
    if (ShapedType::isDynamic(range) || range < 1)
      return std::nullopt;
    if (iterator == utils::IteratorType::parallel) {
      if (!shape.reduced.empty())
        return std::nullopt;
      shape.parallel.push_back(range);
    } else {
      shape.reduced.push_back(range);
      shape.reducedCount *= range;
    }
  }
  if (shape.reduced.empty())
    return std::nullopt;
  return shape;
}

bool qtrain::isSplittableReduction(linalg::GenericOp op,
                                   const ReductionSplitOptions &options) {
  if (options.fanIn < 2 || !op.hasPureBufferSemantics())
    return false;
  std::optional<Shape> shape = matchShape(op);
  if (!shape || shape->reducedCount <= 4 * options.fanIn)
    return false;
  int64_t outputs = 1;
  for (int64_t extent : shape->parallel)
    outputs *= extent;
  if (outputs >= options.parallelBelow)
    return false;
  unsigned numParallel = shape->parallel.size();
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (!isa<MemRefType>(init.get().getType()))
      return false;
    AffineMap map = op.getMatchingIndexingMap(&init);
    // A permutation of the parallel loops: each output element is one
    // parallel iteration's.
    if (map.getNumResults() != numParallel || !map.isProjectedPermutation() ||
        llvm::any_of(map.getResults(), [&](AffineExpr e) {
          return cast<AffineDimExpr>(e).getPosition() >= numParallel;
        }))
      return false;
    Value root = rootBuffer(init.get());
    for (OpOperand *input : op.getDpsInputOperands())
      if (isa<BaseMemRefType>(input->get().getType()) &&
          rootBuffer(input->get()) == root)
        return false;
  }
  return matchReductions(op).has_value();
}

/// `linear` as indices of a row-major space of `extents`.
static SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                                      ArrayRef<int64_t> extents) {
  SmallVector<Value> indices(extents.size());
  for (int64_t i = extents.size() - 1; i > 0; --i) {
    Value extent = arith::ConstantIndexOp::create(b, loc, extents[i]);
    indices[i] = arith::RemUIOp::create(b, loc, linear, extent);
    linear = arith::DivUIOp::create(b, loc, linear, extent);
  }
  indices[0] = linear;
  return indices;
}

/// The indices of `operand` at loop indices `ivs`.
static SmallVector<Value> operandIndices(OpBuilder &b, Location loc,
                                         AffineMap map, ValueRange ivs) {
  SmallVector<Value> indices;
  for (AffineExpr result : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(result)) {
      indices.push_back(ivs[dim.getPosition()]);
      continue;
    }
    indices.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), 0, result), ivs));
  }
  return indices;
}

/// The value each output's combiner takes at loop indices `ivs`: the body
/// of `op` up to its combiners, on its inputs' elements there.
static SmallVector<Value> elementValues(OpBuilder &b, Location loc,
                                        linalg::GenericOp op,
                                        ArrayRef<Reduction> reductions,
                                        ValueRange ivs) {
  Block &body = op.getRegion().front();
  IRMapping mapping;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value value = input->get();
    if (isa<MemRefType>(value.getType()))
      value = memref::LoadOp::create(
          b, loc, value,
          operandIndices(b, loc, op.getMatchingIndexingMap(input), ivs));
    mapping.map(body.getArgument(input->getOperandNumber()), value);
  }
  DenseSet<Operation *> combiners;
  for (const Reduction &reduction : reductions)
    combiners.insert(reduction.combiner);
  for (Operation &inner : body.without_terminator()) {
    if (combiners.contains(&inner))
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  SmallVector<Value> values;
  for (const Reduction &reduction : reductions)
    values.push_back(mapping.lookupOrDefault(
        reduction.combiner->getOperand(1 - reduction.outPosition)));
  return values;
}

/// Each reduction's combiner applied to `accumulators` and `values`, the
/// accumulator where the output's value was.
static SmallVector<Value> combine(OpBuilder &b, ArrayRef<Reduction> reductions,
                                  ValueRange accumulators, ValueRange values) {
  SmallVector<Value> results;
  for (auto [reduction, accumulator, value] :
       llvm::zip_equal(reductions, accumulators, values)) {
    IRMapping mapping;
    Operation *combiner = reduction.combiner;
    mapping.map(combiner->getOperand(reduction.outPosition), accumulator);
    mapping.map(combiner->getOperand(1 - reduction.outPosition), value);
    results.push_back(b.clone(*combiner, mapping)->getResult(0));
  }
  return results;
}

/// An scf.parallel over `extents` (a unit one when there are none) whose
/// body `build` makes, given the induction variables.
static scf::ParallelOp
parallelLoop(OpBuilder &b, Location loc, ArrayRef<int64_t> extents,
             function_ref<void(OpBuilder &, ValueRange)> build) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> lower, upper, steps;
  for (int64_t extent : extents) {
    lower.push_back(zero);
    upper.push_back(arith::ConstantIndexOp::create(b, loc, extent));
    steps.push_back(one);
  }
  bool unit = extents.empty();
  if (unit) {
    lower.push_back(zero);
    upper.push_back(one);
    steps.push_back(one);
  }
  return scf::ParallelOp::create(
      b, loc, lower, upper, steps,
      [&](OpBuilder &nested, Location, ValueRange ivs) {
        build(nested, unit ? ValueRange() : ivs);
      });
}

/// One level of a split reduction as a launch of `blocks` blocks of
/// `threads` threads (a power of two) per output element: thread t of block
/// b combines the values b T + t, b T + t + B T, ... (fewer than `count`)
/// that `valueAt` gives for an output element's parallel indices and a
/// value's index; then the block combines its threads' results by halves in
/// shared memory, thread t with t + s for s = T/2, ..., 1 (threads with no
/// value drop out: they are the block's last), and thread 0 stores the
/// block's result to `partials` at [parallel indices..., b], or, with one
/// block per output element, calls `finish` with the parallel indices and
/// the results.
///
/// With `finishLast`, the block of an output element that finishes last
/// also combines the element's partial values: thread 0 of each block,
/// after its store, increments the element's counter in `counters` (device
/// memory that starts at zero) between two fences; the one that sees
/// blocks - 1 calls `finishLast` with the parallel indices, which reads the
/// partial values in order, and sets the counter back to zero. The
/// combination's order is fixed by the indices, whichever block is last.
static gpu::LaunchOp blockLevel(
    OpBuilder &b, Location loc, ArrayRef<int64_t> parallel, int64_t count,
    int64_t blocks, int64_t threads, ArrayRef<Reduction> reductions,
    ArrayRef<Type> types, ValueRange partials,
    function_ref<SmallVector<Value>(OpBuilder &, ValueRange, Value)> valueAt,
    function_ref<void(OpBuilder &, ValueRange, ValueRange)> finish,
    memref::GlobalOp counters = nullptr,
    function_ref<void(OpBuilder &, ValueRange)> finishLast = nullptr) {
  int64_t outputs = 1;
  for (int64_t extent : parallel)
    outputs *= extent;
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value one = index(b, 1);
  SmallVector<Type> shared;
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  for (Type type : types)
    shared.push_back(MemRefType::get({threads}, type,
                                     MemRefLayoutAttrInterface(), workgroup));
  auto launch = gpu::LaunchOp::create(
      b, loc, index(b, outputs * blocks), one, one, index(b, threads), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, shared);
  Block &body = launch.getBody().front();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&body);
  auto terminator = gpu::TerminatorOp::create(b, loc);
  b.setInsertionPoint(terminator);
  ArrayRef<BlockArgument> scratch = launch.getWorkgroupAttributions();
  Value blockId = launch.getBlockIds().x, thread = launch.getThreadIds().x;
  Value threadsValue = index(b, threads);
  Value blocksValue = index(b, blocks);
  Value output = arith::DivUIOp::create(b, loc, blockId, blocksValue);
  Value block = arith::RemUIOp::create(b, loc, blockId, blocksValue);
  SmallVector<Value> parallelIndices;
  if (!parallel.empty())
    parallelIndices = delinearize(b, loc, output, parallel);
  Value blockStart = arith::MulIOp::create(b, loc, block, threadsValue);
  Value first = arith::AddIOp::create(b, loc, blockStart, thread);
  Value end = index(b, count);
  // The block's threads with a value: a prefix, of at least one thread.
  Value active = arith::MinUIOp::create(
      b, loc, threadsValue, arith::SubIOp::create(b, loc, end, blockStart));
  Value has =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, first, end);
  scf::IfOp::create(b, loc, has, [&](OpBuilder &b, Location) {
    Value stride = index(b, blocks * threads);
    auto loop = scf::ForOp::create(
        b, loc, arith::AddIOp::create(b, loc, first, stride), end, stride,
        valueAt(b, parallelIndices, first),
        [&](OpBuilder &b, Location, Value r, ValueRange accumulators) {
          scf::YieldOp::create(b, loc,
                               combine(b, reductions, accumulators,
                                       valueAt(b, parallelIndices, r)));
        });
    for (auto [value, buffer] : llvm::zip_equal(loop.getResults(), scratch))
      memref::StoreOp::create(b, loc, value, buffer, thread);
    scf::YieldOp::create(b, loc);
  });
  for (int64_t half = threads / 2; half >= 1; half /= 2) {
    gpu::BarrierOp::create(b, loc);
    Value halfValue = index(b, half);
    Value partner = arith::AddIOp::create(b, loc, thread, halfValue);
    Value lower = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        thread, halfValue);
    Value present = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          partner, active);
    Value both = arith::AndIOp::create(b, loc, lower, present);
    scf::IfOp::create(b, loc, both, [&](OpBuilder &b, Location) {
      SmallVector<Value> mine, theirs;
      for (Value buffer : scratch) {
        mine.push_back(memref::LoadOp::create(b, loc, buffer, thread));
        theirs.push_back(memref::LoadOp::create(b, loc, buffer, partner));
      }
      for (auto [value, buffer] :
           llvm::zip_equal(combine(b, reductions, mine, theirs), scratch))
        memref::StoreOp::create(b, loc, value, buffer, thread);
      scf::YieldOp::create(b, loc);
    });
  }
  Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread,
                                       index(b, 0));
  scf::IfOp::create(b, loc, leader, [&](OpBuilder &b, Location) {
    SmallVector<Value> results;
    for (Value buffer : scratch)
      results.push_back(memref::LoadOp::create(b, loc, buffer, index(b, 0)));
    if (partials.empty()) {
      finish(b, parallelIndices, results);
    } else {
      SmallVector<Value> at(parallelIndices);
      at.push_back(block);
      for (auto [result, partial] : llvm::zip_equal(results, partials))
        memref::StoreOp::create(b, loc, result, partial, at);
      if (finishLast) {
        // Release this block's partial values before counting it; acquire
        // the others' after.
        Value counter = memref::GetGlobalOp::create(b, loc, counters.getType(),
                                                    counters.getSymName());
        LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel);
        Value seen = memref::AtomicRMWOp::create(
            b, loc, arith::AtomicRMWKind::addi,
            arith::ConstantIntOp::create(b, loc, 1, 32), counter, output);
        LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel);
        Value last = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq, seen,
            arith::ConstantIntOp::create(b, loc, blocks - 1, 32));
        scf::IfOp::create(b, loc, last, [&](OpBuilder &b, Location) {
          finishLast(b, parallelIndices);
          memref::StoreOp::create(b, loc,
                                  arith::ConstantIntOp::create(b, loc, 0, 32),
                                  counter, output);
          scf::YieldOp::create(b, loc);
        });
      }
    }
    scf::YieldOp::create(b, loc);
  });
  return launch;
}

/// Device memory of `outputs` counters that start at zero, for the blocks
/// of a split reduction's last level to count themselves (blockLevel): a
/// global of the module, which kernel outlining copies into the kernels'
/// module (zeroed when the module loads; the last block of each launch
/// sets its counter back to zero).
static memref::GlobalOp counterGlobal(OpBuilder &b, Location loc,
                                      Operation *within, int64_t outputs) {
  auto module = within->getParentOfType<ModuleOp>();
  auto type = MemRefType::get({outputs}, b.getI32Type());
  // Made outside the module, then inserted under a name of its own.
  OpBuilder detached(b.getContext());
  auto global = memref::GlobalOp::create(
      detached, loc, "qtrain_reduction_counters",
      detached.getStringAttr("private"), type,
      DenseElementsAttr::get(RankedTensorType::get({outputs}, b.getI32Type()),
                             b.getI32IntegerAttr(0).getValue()),
      /*constant=*/false, /*alignment=*/nullptr);
  SymbolTable(module).insert(global, module.getBody()->begin());
  return global;
}

void qtrain::splitReductionToLoops(RewriterBase &rewriter, linalg::GenericOp op,
                                   ArrayRef<std::pair<unsigned, Value>> fills,
                                   const ReductionSplitOptions &options) {
  Shape shape = *matchShape(op);
  SmallVector<Reduction> reductions = *matchReductions(op);
  Location loc = op.getLoc();
  int64_t fanIn = options.fanIn;
  int64_t threads =
      llvm::bit_floor(uint64_t(std::max<int64_t>(1, options.threadsPerBlock)));
  SmallVector<Value> outputs;
  SmallVector<AffineMap> outputMaps;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    outputs.push_back(init.get());
    outputMaps.push_back(op.getMatchingIndexingMap(&init));
  }
  SmallVector<Type> types;
  for (const Reduction &reduction : reductions)
    types.push_back(reduction.combiner->getResult(0).getType());

  rewriter.setInsertionPoint(op);
  // Buffers of `count` partial values per output element.
  auto allocate = [&](int64_t count) {
    SmallVector<int64_t> partialShape(shape.parallel);
    partialShape.push_back(count);
    SmallVector<Value> buffers;
    for (Type type : types)
      buffers.push_back(memref::AllocOp::create(
          rewriter, loc, MemRefType::get(partialShape, type)));
    return buffers;
  };
  auto loadAll = [&](OpBuilder &b, ValueRange buffers, ValueRange parallel,
                     Value at) {
    SmallVector<Value> indices(parallel);
    indices.push_back(at);
    SmallVector<Value> values;
    for (Value buffer : buffers)
      values.push_back(memref::LoadOp::create(b, loc, buffer, indices));
    return values;
  };

  // The output's initial value: the fill's, if it has one, else what it
  // holds.
  auto initialValues = [&](OpBuilder &b, ValueRange parallel) {
    SmallVector<Value> initial;
    for (unsigned index = 0; index < outputs.size(); ++index) {
      auto fill = llvm::find_if(
          fills, [&](auto entry) { return entry.first == index; });
      initial.push_back(
          fill != fills.end()
              ? fill->second
              : memref::LoadOp::create(
                    b, loc, outputs[index],
                    operandIndices(b, loc, outputMaps[index], parallel))
                    .getResult());
    }
    return initial;
  };
  auto store = [&](OpBuilder &b, ValueRange parallel, ValueRange values) {
    for (auto [index, value] : llvm::enumerate(values))
      memref::StoreOp::create(
          b, loc, value, outputs[index],
          operandIndices(b, loc, outputMaps[index], parallel));
  };
  // A block level's leader, when its block is the output element's only
  // one: the initial value combined with the block's result.
  auto finish = [&](OpBuilder &b, ValueRange parallel, ValueRange results) {
    store(b, parallel,
          combine(b, reductions, initialValues(b, parallel), results));
  };

  // The output's initial value combined with `count` partial values, in
  // order: the last level.
  auto combinePartials = [&](OpBuilder &b, ValueRange parallel,
                             ValueRange buffers, int64_t count) {
    auto loop = scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0),
        arith::ConstantIndexOp::create(b, loc, count),
        arith::ConstantIndexOp::create(b, loc, 1), initialValues(b, parallel),
        [&](OpBuilder &b, Location, Value m, ValueRange accumulators) {
          scf::YieldOp::create(b, loc,
                               combine(b, reductions, accumulators,
                                       loadAll(b, buffers, parallel, m)));
        });
    store(b, parallel, loop.getResults());
  };

  // Block levels while more than 4 x fanIn values per output are left: the
  // op's elements first, then the partial values of the level before. The
  // last of them, when it leaves more than one partial value per output,
  // combines them in its last block (options.lastBlockCombines), else in
  // a launch of a thread per output.
  int64_t perBlock = threads * fanIn;
  int64_t outputCount = 1;
  for (int64_t extent : shape.parallel)
    outputCount *= extent;
  SmallVector<Value> previous;
  int64_t previousCount = shape.reducedCount;
  int64_t count = llvm::divideCeil(shape.reducedCount, perBlock);
  for (bool firstLevel = true;; firstLevel = false) {
    SmallVector<Value> partials;
    if (count > 1)
      partials = allocate(count);
    bool lastLevel = count <= 4 * fanIn;
    memref::GlobalOp counters;
    if (lastLevel && count > 1 && options.lastBlockCombines)
      counters = counterGlobal(rewriter, loc, op, outputCount);
    auto elements = [&](OpBuilder &b, ValueRange parallel, Value linear) {
      SmallVector<Value> all(parallel);
      llvm::append_range(all, delinearize(b, loc, linear, shape.reduced));
      return elementValues(b, loc, op, reductions, all);
    };
    auto fromPrevious = [&](OpBuilder &b, ValueRange parallel, Value at) {
      return loadAll(b, previous, parallel, at);
    };
    auto finishLast = [&](OpBuilder &b, ValueRange parallel) {
      combinePartials(b, parallel, partials, count);
    };
    blockLevel(
        rewriter, loc, shape.parallel, previousCount, count, threads,
        reductions, types, partials,
        firstLevel
            ? function_ref<SmallVector<Value>(OpBuilder &, ValueRange, Value)>(
                  elements)
            : fromPrevious,
        finish, counters,
        counters ? function_ref<void(OpBuilder &, ValueRange)>(finishLast)
                 : nullptr);
    for (Value buffer : previous)
      memref::DeallocOp::create(rewriter, loc, buffer);
    previous = partials;
    previousCount = count;
    if (lastLevel)
      break;
    count = llvm::divideCeil(count, perBlock);
  }
  if (count > 1 && !options.lastBlockCombines) {
    // The last level: a thread per output element combines the output's
    // initial value with the partial values, in order.
    parallelLoop(rewriter, loc, shape.parallel,
                 [&](OpBuilder &b, ValueRange parallel) {
                   combinePartials(b, parallel, previous, count);
                 });
  }
  for (Value buffer : previous)
    memref::DeallocOp::create(rewriter, loc, buffer);
  rewriter.eraseOp(op);
}
