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

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
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

static Value rootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
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

SmallVector<Operation *>
qtrain::splitReductionToLoops(RewriterBase &rewriter, linalg::GenericOp op,
                              ArrayRef<std::pair<unsigned, Value>> fills,
                              const ReductionSplitOptions &options) {
  Shape shape = *matchShape(op);
  SmallVector<Reduction> reductions = *matchReductions(op);
  Location loc = op.getLoc();
  unsigned numParallel = shape.parallel.size();
  int64_t fanIn = options.fanIn;
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
  SmallVector<Operation *> loops;
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
  auto withPartial = [](ValueRange parallel, Value partial) {
    SmallVector<Value> indices(parallel);
    indices.push_back(partial);
    return indices;
  };

  // The first level: thread (p, g) combines the elements g, g + G, ...
  int64_t count = llvm::divideCeil(shape.reducedCount, fanIn);
  SmallVector<Value> partials = allocate(count);
  SmallVector<int64_t> extents(shape.parallel);
  extents.push_back(count);
  loops.push_back(
      parallelLoop(rewriter, loc, extents, [&](OpBuilder &b, ValueRange ivs) {
        ValueRange parallel = ivs.take_front(numParallel);
        Value g = ivs.back();
        auto at = [&](OpBuilder &b, Value linear) {
          SmallVector<Value> all(parallel);
          llvm::append_range(all, delinearize(b, loc, linear, shape.reduced));
          return elementValues(b, loc, op, reductions, all);
        };
        SmallVector<Value> first = at(b, g);
        Value stride = arith::ConstantIndexOp::create(b, loc, count);
        Value end = arith::ConstantIndexOp::create(b, loc, shape.reducedCount);
        Value next = arith::AddIOp::create(b, loc, g, stride);
        auto loop = scf::ForOp::create(
            b, loc, next, end, stride, first,
            [&](OpBuilder &b, Location, Value r, ValueRange accumulators) {
              scf::YieldOp::create(
                  b, loc, combine(b, reductions, accumulators, at(b, r)));
            });
        for (auto [value, partial] :
             llvm::zip_equal(loop.getResults(), partials))
          memref::StoreOp::create(b, loc, value, partial,
                                  withPartial(parallel, g));
      }));

  // Next levels, down to one value per output element, then the last: the
  // output's initial value combined with the partial values in order.
  while (true) {
    int64_t previousCount = count;
    SmallVector<Value> previous = partials;
    count = llvm::divideCeil(count, fanIn);
    bool last = count == 1;
    SmallVector<int64_t> levelExtents(shape.parallel);
    if (!last) {
      partials = allocate(count);
      levelExtents.push_back(count);
    }
    loops.push_back(parallelLoop(
        rewriter, loc, levelExtents, [&](OpBuilder &b, ValueRange ivs) {
          ValueRange parallel = ivs.take_front(numParallel);
          Value g = last ? arith::ConstantIndexOp::create(b, loc, 0).getResult()
                         : ivs.back();
          SmallVector<Value> initial;
          if (last) {
            for (unsigned index = 0; index < outputs.size(); ++index) {
              Value output = outputs[index];
              auto fill = llvm::find_if(
                  fills, [&](auto entry) { return entry.first == index; });
              initial.push_back(
                  fill != fills.end()
                      ? fill->second
                      : memref::LoadOp::create(
                            b, loc, output,
                            operandIndices(b, loc, outputMaps[index], parallel))
                            .getResult());
            }
          } else {
            for (Value buffer : previous)
              initial.push_back(memref::LoadOp::create(
                  b, loc, buffer, withPartial(parallel, g)));
          }
          Value stride = arith::ConstantIndexOp::create(b, loc, count);
          Value end = arith::ConstantIndexOp::create(b, loc, previousCount);
          Value start =
              last ? g : arith::AddIOp::create(b, loc, g, stride).getResult();
          auto loop = scf::ForOp::create(
              b, loc, start, end, stride, initial,
              [&](OpBuilder &b, Location, Value m, ValueRange accumulators) {
                SmallVector<Value> values;
                for (Value buffer : previous)
                  values.push_back(memref::LoadOp::create(
                      b, loc, buffer, withPartial(parallel, m)));
                scf::YieldOp::create(
                    b, loc, combine(b, reductions, accumulators, values));
              });
          for (auto [index, value] : llvm::enumerate(loop.getResults())) {
            if (last)
              memref::StoreOp::create(
                  b, loc, value, outputs[index],
                  operandIndices(b, loc, outputMaps[index], parallel));
            else
              memref::StoreOp::create(b, loc, value, partials[index],
                                      withPartial(parallel, g));
          }
        }));
    for (Value buffer : previous)
      memref::DeallocOp::create(rewriter, loc, buffer);
    if (last)
      break;
  }
  rewriter.eraseOp(op);
  return loops;
}
