//===- Rebatch.cpp - Re-infer a forward graph at another batch --*- C++ -*-===//
//
// qtrain-rebatch: follows the batch dimension of @forward's inputs through
// the data flow, into the inits of the ops that carry it, and rewrites those
// dimensions (and only those) from the exported batch to a new one. A
// dimension may also fold the batch with others (batch x sequence before a
// matmul), the sample index outermost; it scales by the same factor.
// Whatever it cannot follow soundly is a located error.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Frontend/Passes.h"

#include "QTrain/QTrainAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Remarks.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SetVector.h"

#include <deque>

namespace mlir::qtrain {
#define GEN_PASS_DEF_REBATCHPASS
#include "qtrain/Frontend/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct RebatchPass : mlir::qtrain::impl::RebatchPassBase<RebatchPass> {
  using RebatchPassBase::RebatchPassBase;
  void runOnOperation() override;
};

/// The batch analysis and rewrite of one function. A fact says at which
/// dimension a tensor carries the batch. That dimension has the size `from`
/// or folds the batch with other dimensions: its size is `from` x k and its
/// index is sample x k + rest, so that rebatching scales it to `to` x k.
/// The size tells the two apart, so a fact is just the dimension; the rules
/// check that an op never lets samples meet along a fold (a reduction over
/// it, a broadcast of one sample over it). Facts live on values, except for
/// `tensor.empty`, whose uses get one each: an empty tensor shared by a
/// batched and an unbatched init is split rather than an error.
class Rebatcher {
public:
  Rebatcher(func::FuncOp fn, int64_t from, int64_t to)
      : fn(fn), from(from), to(to) {}

  /// Seeds the inputs and the result, propagates the facts to a fixed point
  /// and checks that every op carrying the batch can be rebatched.
  LogicalResult analyze();

  /// Rewrites the types (and the maps of unit broadcasts); returns the
  /// number of ops changed.
  unsigned rewrite();

private:
  std::optional<int64_t> getFact(OpOperand &use) const;
  std::optional<int64_t> getFact(Value v) const;
  LogicalResult checkType(Type type, int64_t dim, Operation *at, StringRef what,
                          bool unfolded = false);
  LogicalResult demand(OpOperand &use, int64_t dim, Operation *at);
  LogicalResult assign(Value v, int64_t dim, Operation *at);
  void enqueue(Operation *op);
  /// Visits the queued ops until no fact changes.
  LogicalResult propagate();

  LogicalResult visit(Operation *op);
  LogicalResult visitLinalg(linalg::LinalgOp op);
  LogicalResult visitPad(tensor::PadOp op);
  LogicalResult visitCollapse(tensor::CollapseShapeOp op);
  LogicalResult visitExpand(tensor::ExpandShapeOp op);
  LogicalResult visitSlice(Operation *op, OpOperand &full, Value sliceValue,
                           OpOperand *sliceUse, ArrayRef<int64_t> offsets,
                           ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
                           const llvm::SmallBitVector &dropped);

  /// A dimension that carries the batch (alone or folded) at the new batch.
  int64_t rebatched(int64_t size) const { return size / from * to; }

  RankedTensorType withBatch(Type type, int64_t dim) const {
    auto tensor = cast<RankedTensorType>(type);
    SmallVector<int64_t> shape(tensor.getShape());
    shape[dim] = rebatched(shape[dim]);
    return tensor.clone(shape);
  }

  func::FuncOp fn;
  int64_t from, to;
  /// Batch dimension of values (other than tensor.empty results).
  llvm::DenseMap<Value, int64_t> valueFacts;
  /// Batch dimension of uses of tensor.empty results.
  llvm::DenseMap<OpOperand *, int64_t> emptyFacts;
  /// Batch loop of linalg ops.
  llvm::DenseMap<Operation *, unsigned> batchLoops;
  /// Inputs of linalg.generic ops that index the unit batch with a constant
  /// 0 (torch-mlir's size-1 broadcast): (operand number, dim) -> batch loop.
  llvm::DenseMap<Operation *, SmallVector<std::pair<unsigned, int64_t>>>
      unitBroadcasts;
  /// Reshapes that could not tell which unit dimension is the batch.
  llvm::SetVector<Operation *> ambiguous;
  std::deque<Operation *> worklist;
  llvm::DenseSet<Operation *> queued;
};

} // namespace

/// The op's name for diagnostics: 'tensor.pad'.
static std::string name(Operation *op) {
  return ("'" + op->getName().getStringRef() + "'").str();
}

/// An affine expression as text, for diagnostics.
static std::string toString(AffineExpr expr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  expr.print(os);
  return text;
}

/// A static size as text, or 'dynamic', for diagnostics.
static std::string sizeToString(int64_t size) {
  return ShapedType::isDynamic(size) ? "dynamic" : std::to_string(size);
}

std::optional<int64_t> Rebatcher::getFact(OpOperand &use) const {
  if (use.get().getDefiningOp<tensor::EmptyOp>()) {
    auto it = emptyFacts.find(&use);
    return it == emptyFacts.end() ? std::nullopt
                                  : std::optional<int64_t>(it->second);
  }
  return getFact(use.get());
}

std::optional<int64_t> Rebatcher::getFact(Value v) const {
  auto it = valueFacts.find(v);
  return it == valueFacts.end() ? std::nullopt
                                : std::optional<int64_t>(it->second);
}

/// Checks that dimension `dim` of `type` can carry the batch: the batch
/// itself, or (unless `unfolded`) a fold of it, a static multiple of it.
LogicalResult Rebatcher::checkType(Type type, int64_t dim, Operation *at,
                                   StringRef what, bool unfolded) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || dim >= tensor.getRank())
    return at->emitError("qtrain-rebatch: ")
           << name(at) << " would need the batch at dimension " << dim << " of "
           << what << " of type " << type;
  int64_t size = tensor.getDimSize(dim);
  if (size == from ||
      (!unfolded && !tensor.isDynamicDim(dim) && size > 0 && size % from == 0))
    return success();
  return at->emitError("qtrain-rebatch: ")
         << name(at) << ": dimension " << dim << " of " << what << " (" << type
         << ") should be the batch " << from
         << (unfolded ? "" : " or fold it (a multiple of it)") << ", but it is "
         << sizeToString(size);
}

void Rebatcher::enqueue(Operation *op) {
  if (op && queued.insert(op).second)
    worklist.push_back(op);
}

LogicalResult Rebatcher::demand(OpOperand &use, int64_t dim, Operation *at) {
  if (!use.get().getDefiningOp<tensor::EmptyOp>())
    return assign(use.get(), dim, at);
  if (std::optional<int64_t> fact = getFact(use)) {
    if (*fact == dim)
      return success();
    return at->emitError("qtrain-rebatch: ")
           << name(at) << " needs the batch of operand #"
           << use.getOperandNumber() << " at dimensions " << *fact << " and "
           << dim;
  }
  if (failed(checkType(use.get().getType(), dim, at,
                       "operand #" + std::to_string(use.getOperandNumber()))))
    return failure();
  emptyFacts[&use] = dim;
  return success();
}

LogicalResult Rebatcher::assign(Value v, int64_t dim, Operation *at) {
  if (std::optional<int64_t> fact = getFact(v)) {
    if (*fact == dim)
      return success();
    return at->emitError("qtrain-rebatch: ")
           << name(at) << " needs the batch of a value at dimension " << dim
           << ", but it is at dimension " << *fact;
  }
  // Not a tensor with that dimension: say so before anything else.
  auto tensor = dyn_cast<RankedTensorType>(v.getType());
  if (!tensor || dim >= tensor.getRank())
    return checkType(v.getType(), dim, at, "a value");
  auto arg = dyn_cast<BlockArgument>(v);
  if (arg && fn.getArgAttr(arg.getArgNumber(), kParamAttrName))
    return at->emitError("qtrain-rebatch: ")
           << name(at) << " uses parameter #" << arg.getArgNumber() << " of @"
           << fn.getSymName()
           << " along the batch; a parameter cannot be rebatched";
  Operation *def = v.getDefiningOp();
  if (isa_and_present<arith::ConstantOp>(def))
    return def->emitError("qtrain-rebatch: this constant of type ")
           << v.getType() << " has the batch dimension baked in (used along "
           << "the batch by " << name(at)
           << "); lift it (qtrain-lift-params) or export at the new batch";
  if (failed(checkType(v.getType(), dim, at, "a value")))
    return failure();
  valueFacts[v] = dim;
  enqueue(def);
  for (Operation *user : v.getUsers())
    enqueue(user);
  return success();
}

LogicalResult Rebatcher::visitLinalg(linalg::LinalgOp op) {
  // A result carries the batch where its init does.
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (!op.hasPureTensorSemantics())
      break;
    if (std::optional<int64_t> fact = getFact(op.getTiedOpResult(&init)))
      if (failed(demand(init, *fact, op)))
        return failure();
  }

  // Which loop iterates over the batch.
  unsigned numLoops = op.getNumLoops();
  std::optional<unsigned> loop;
  if (auto it = batchLoops.find(op); it != batchLoops.end())
    loop = it->second;
  SmallVector<std::pair<unsigned, int64_t>> broadcasts;
  for (OpOperand &use : op->getOpOperands()) {
    std::optional<int64_t> fact = getFact(use);
    if (!fact)
      continue;
    AffineMap map = op.getMatchingIndexingMap(&use);
    AffineExpr expr = map.getResult(*fact);
    unsigned operandLoop;
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      operandLoop = dim.getPosition();
    } else if (auto cst = dyn_cast<AffineConstantExpr>(expr);
               cst && cst.getValue() == 0 && from == 1 &&
               isa<linalg::GenericOp>(op) && op.isDpsInput(&use)) {
      // torch-mlir indexes every static size-1 dimension of an elementwise
      // input with 0, the batch of an export at batch 1 included, and
      // aligns the input's dimensions with the trailing loops.
      if (cast<RankedTensorType>(use.get().getType()).getDimSize(*fact) != 1)
        return op->emitError("qtrain-rebatch: ")
               << name(op) << " reads dimension " << *fact << " of operand #"
               << use.getOperandNumber()
               << ", which folds the batch with other dimensions, at the "
                  "constant index 0: that is the first sample's part only";
      int64_t aligned = *fact + numLoops - map.getNumResults();
      if (aligned < 0 || map.isFunctionOfDim(aligned))
        return op->emitError("qtrain-rebatch: ")
               << name(op) << " reads the batch of operand #"
               << use.getOperandNumber()
               << " with a constant index that is not a broadcast of a "
                  "trailing-aligned unit dimension";
      // Over a loop that folds the batch with others, the one sample of the
      // export would be broadcast to the rows of every sample.
      int64_t range = op.getStaticLoopRanges()[aligned];
      if (range != from)
        return op->emitError("qtrain-rebatch: ")
               << name(op) << " broadcasts the batch of operand #"
               << use.getOperandNumber() << " over loop " << aligned
               << " of size " << sizeToString(range)
               << ", which is not the batch " << from
               << "; it cannot be rebatched";
      operandLoop = aligned;
      broadcasts.emplace_back(use.getOperandNumber(), *fact);
    } else {
      return op->emitError("qtrain-rebatch: ")
             << name(op) << " indexes the batch (dimension " << *fact
             << ") of operand #" << use.getOperandNumber() << " with '"
             << toString(expr) << "'; only a loop of its own can be rebatched";
    }
    if (loop && *loop != operandLoop)
      return op->emitError("qtrain-rebatch: ")
             << name(op) << " iterates over the batch with loops " << *loop
             << " and " << operandLoop;
    loop = operandLoop;
  }
  if (!loop)
    return success();
  int64_t range = op.getStaticLoopRanges()[*loop];
  if (op.getIteratorTypesArray()[*loop] != utils::IteratorType::parallel &&
      range != from)
    return op->emitError("qtrain-rebatch: ")
           << name(op) << " reduces over loop " << *loop
           << ", which folds the batch with other dimensions (size "
           << sizeToString(range)
           << "); it would mix samples, so it is not rebatched";
  if (op.getIteratorTypesArray()[*loop] != utils::IteratorType::parallel)
    return op->emitError("qtrain-rebatch: ")
           << name(op) << " reduces over the batch (loop " << *loop
           << "); its result could depend on the batch size (a mean over "
              "the batch, batch statistics), so it is not rebatched";
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!op.getMatchingIndexingMap(&init).isFunctionOfDim(*loop))
      return op->emitError("qtrain-rebatch: ")
             << name(op) << " drops the batch (loop " << *loop
             << ") from init #"
             << init.getOperandNumber() - op.getNumDpsInputs()
             << "; its result would not be per image";
  batchLoops[op] = *loop;
  if (!broadcasts.empty())
    unitBroadcasts[op] = broadcasts;

  // Every operand indexed by the batch loop carries the batch there.
  for (OpOperand &use : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&use);
    for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
      if (!expr.isFunctionOfDim(*loop))
        continue;
      if (!isa<AffineDimExpr>(expr))
        return op->emitError("qtrain-rebatch: ")
               << name(op) << " indexes operand #" << use.getOperandNumber()
               << " with '" << toString(expr)
               << "', which mixes the batch loop with "
               << "others";
      if (failed(demand(use, pos, op)))
        return failure();
    }
  }
  if (!op.hasPureTensorSemantics())
    return success();
  for (OpOperand &init : op.getDpsInitsMutable())
    if (std::optional<int64_t> fact = getFact(init))
      if (failed(assign(op.getTiedOpResult(&init), *fact, op)))
        return failure();
  return success();
}

LogicalResult Rebatcher::visitPad(tensor::PadOp op) {
  auto check = [&](int64_t dim) -> LogicalResult {
    if (op.getStaticLow()[dim] == 0 && op.getStaticHigh()[dim] == 0)
      return success();
    return op->emitError("qtrain-rebatch: ")
           << name(op) << " pads the batch (dimension " << dim << ")";
  };
  if (std::optional<int64_t> fact = getFact(op.getSourceMutable()))
    if (failed(check(*fact)) || failed(assign(op.getResult(), *fact, op)))
      return failure();
  if (std::optional<int64_t> fact = getFact(op.getResult()))
    if (failed(check(*fact)) ||
        failed(demand(op.getSourceMutable(), *fact, op)))
      return failure();
  return success();
}

/// For a reshape group `group` of the expanded type `expanded` whose
/// collapsed dimension (of size `collapsed`) carries the batch: the member
/// that carries it, or nullopt when it is ambiguous (several unit members at
/// batch 1), or -1 when no member can carry it.
static std::optional<int64_t> findBatchMember(RankedTensorType expanded,
                                              ArrayRef<int64_t> group,
                                              int64_t from, int64_t collapsed) {
  if (group.size() == 1)
    return group.front();
  if (collapsed == from) {
    // The batch alone: the member of its size among unit ones.
    std::optional<int64_t> member;
    for (int64_t d : group) {
      int64_t size = expanded.getDimSize(d);
      if (size == from && !member)
        member = d;
      else if (size != 1)
        return -1;
    }
    if (!member)
      return -1;
    if (from == 1)
      return std::nullopt;
    return member;
  }
  // A fold: the sample index is the outermost part of the collapsed index,
  // so it lands in the leading member (at batch 1, where every size fits,
  // the very first one: torch-mlir's [S, H] -> [1, S, H] after a matmul),
  // which must then hold whole samples.
  if (from == 1)
    return group.front();
  for (int64_t d : group) {
    int64_t size = expanded.getDimSize(d);
    if (size != 1)
      return size % from == 0 ? d : -1;
  }
  return -1;
}

/// The first member of `group` before `member` that is not a unit
/// dimension, if any: the batch is not outermost in the group then.
static std::optional<int64_t> findOuterMember(RankedTensorType expanded,
                                              ArrayRef<int64_t> group,
                                              int64_t member) {
  for (int64_t d : group) {
    if (d == member)
      break;
    if (expanded.getDimSize(d) != 1)
      return d;
  }
  return std::nullopt;
}

/// The group of `groups` that holds the expanded dimension `dim`.
static int64_t findGroup(ArrayRef<ReassociationIndices> groups, int64_t dim) {
  for (auto [g, group] : llvm::enumerate(groups))
    if (llvm::is_contained(group, dim))
      return g;
  llvm_unreachable("a reassociation covers every expanded dimension");
}

LogicalResult Rebatcher::visitCollapse(tensor::CollapseShapeOp op) {
  RankedTensorType srcType = op.getSrcType();
  SmallVector<ReassociationIndices> groups = op.getReassociationIndices();
  // From the source, the group of the batch is known; its members before
  // the batch must be unit ones, those after it fold into it.
  if (std::optional<int64_t> fact = getFact(op.getSrcMutable())) {
    int64_t g = findGroup(groups, *fact);
    if (std::optional<int64_t> outer =
            findOuterMember(srcType, groups[g], *fact))
      return op->emitError("qtrain-rebatch: ")
             << name(op) << " folds the batch (dimension " << *fact
             << ") into group " << g
             << " of the reassociation behind dimension " << *outer
             << " of size " << sizeToString(srcType.getDimSize(*outer))
             << "; only a fold whose outermost member is the batch can be "
                "rebatched";
    return assign(op.getResult(), g, op);
  }
  std::optional<int64_t> fact = getFact(op.getResult());
  if (!fact)
    return success();
  std::optional<int64_t> member = findBatchMember(
      srcType, groups[*fact], from, op.getResultType().getDimSize(*fact));
  if (member && *member < 0)
    return op->emitError("qtrain-rebatch: ")
           << name(op) << " mixes the batch with other dimensions (group "
           << *fact << " of the reassociation); it cannot be rebatched";
  if (!member) {
    ambiguous.insert(op);
    return success();
  }
  return demand(op.getSrcMutable(), *member, op);
}

LogicalResult Rebatcher::visitExpand(tensor::ExpandShapeOp op) {
  RankedTensorType resultType = op.getResultType();
  SmallVector<ReassociationIndices> groups = op.getReassociationIndices();
  if (std::optional<int64_t> fact = getFact(op.getResult())) {
    int64_t g = findGroup(groups, *fact);
    if (std::optional<int64_t> outer =
            findOuterMember(resultType, groups[g], *fact))
      return op->emitError("qtrain-rebatch: ")
             << name(op) << " splits group " << g
             << " of the reassociation so that dimension " << *outer
             << " of size " << sizeToString(resultType.getDimSize(*outer))
             << " comes before the batch (dimension " << *fact
             << "); it cannot be rebatched";
    return demand(op.getSrcMutable(), g, op);
  }
  std::optional<int64_t> fact = getFact(op.getSrcMutable());
  if (!fact)
    return success();
  std::optional<int64_t> member = findBatchMember(
      resultType, groups[*fact], from, op.getSrcType().getDimSize(*fact));
  if (member && *member < 0)
    return op->emitError("qtrain-rebatch: ")
           << name(op) << " splits the batch into several dimensions (group "
           << *fact << " of the reassociation); it cannot be rebatched";
  if (!member) {
    ambiguous.insert(op);
    return success();
  }
  return assign(op.getResult(), *member, op);
}

LogicalResult Rebatcher::visitSlice(Operation *op, OpOperand &full,
                                    Value sliceValue, OpOperand *sliceUse,
                                    ArrayRef<int64_t> offsets,
                                    ArrayRef<int64_t> sizes,
                                    ArrayRef<int64_t> strides,
                                    const llvm::SmallBitVector &dropped) {
  // Dimension `dim` of the full tensor is whole in the slice (the batch, or
  // all of a fold).
  ArrayRef<int64_t> fullShape =
      cast<RankedTensorType>(full.get().getType()).getShape();
  auto check = [&](int64_t dim) -> LogicalResult {
    if (offsets[dim] == 0 && sizes[dim] == fullShape[dim] &&
        strides[dim] == 1 && !dropped.test(dim))
      return success();
    return op->emitError("qtrain-rebatch: ")
           << name(op) << " slices the batch (dimension " << dim
           << "); only whole batches can be rebatched";
  };
  auto sliceFact = sliceUse ? getFact(*sliceUse) : getFact(sliceValue);
  if (std::optional<int64_t> fact = getFact(full)) {
    if (failed(check(*fact)))
      return failure();
    int64_t dim =
        *fact - llvm::count_if(llvm::seq<int64_t>(0, *fact),
                               [&](int64_t d) { return dropped.test(d); });
    if (failed(sliceUse ? demand(*sliceUse, dim, op)
                        : assign(sliceValue, dim, op)))
      return failure();
  }
  if (sliceFact) {
    // The sliceFact-th dimension that is not dropped.
    int64_t dim = -1;
    for (int64_t d = 0, seen = -1; d < static_cast<int64_t>(sizes.size()); ++d)
      if (!dropped.test(d) && ++seen == *sliceFact)
        dim = d;
    if (failed(check(dim)) || failed(demand(full, dim, op)))
      return failure();
  }
  return success();
}

LogicalResult Rebatcher::visit(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return visitLinalg(linalgOp);
  if (auto pad = dyn_cast<tensor::PadOp>(op))
    return visitPad(pad);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return visitCollapse(collapse);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return visitExpand(expand);
  if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op))
    return visitSlice(op, extract.getSourceMutable(), extract.getResult(),
                      nullptr, extract.getStaticOffsets(),
                      extract.getStaticSizes(), extract.getStaticStrides(),
                      extract.getDroppedDims());
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    // The destination and the result carry the batch at the same place.
    if (std::optional<int64_t> fact = getFact(insert.getDestMutable()))
      if (failed(assign(insert.getResult(), *fact, op)))
        return failure();
    if (std::optional<int64_t> fact = getFact(insert.getResult()))
      if (failed(demand(insert.getDestMutable(), *fact, op)))
        return failure();
    return visitSlice(op, insert.getDestMutable(), Value(),
                      &insert.getSourceMutable(), insert.getStaticOffsets(),
                      insert.getStaticSizes(), insert.getStaticStrides(),
                      insert.getDroppedDims());
  }
  if (auto cast = dyn_cast<tensor::CastOp>(op)) {
    if (std::optional<int64_t> fact = getFact(cast.getSourceMutable()))
      if (failed(assign(cast.getResult(), *fact, op)))
        return failure();
    if (std::optional<int64_t> fact = getFact(cast.getResult()))
      if (failed(demand(cast.getSourceMutable(), *fact, op)))
        return failure();
    return success();
  }
  // The function's results are seeded.
  if (isa<func::ReturnOp>(op))
    return success();
  bool carriesBatch =
      llvm::any_of(op->getOpOperands(),
                   [&](OpOperand &use) { return getFact(use).has_value(); }) ||
      llvm::any_of(op->getResults(),
                   [&](Value v) { return getFact(v).has_value(); });
  if (!carriesBatch)
    return success();
  return op->emitError("qtrain-rebatch: ")
         << name(op)
         << " is not supported by qtrain-rebatch: it cannot re-infer the "
            "batch dimension through it";
}

LogicalResult Rebatcher::propagate() {
  while (!worklist.empty()) {
    Operation *op = worklist.front();
    worklist.pop_front();
    queued.erase(op);
    if (failed(visit(op)))
      return failure();
  }
  return success();
}

LogicalResult Rebatcher::analyze() {
  Block &body = fn.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    if (fn.getArgAttr(arg.getArgNumber(), kParamAttrName) ||
        !isa<TensorType>(arg.getType()))
      continue;
    if (failed(checkType(arg.getType(), 0, fn,
                         "input #" + std::to_string(arg.getArgNumber()),
                         /*unfolded=*/true)))
      return failure();
    valueFacts[arg] = 0;
    for (Operation *user : arg.getUsers())
      enqueue(user);
  }
  // The inputs first, so that errors name the op where the batch is lost;
  // then the result, which must carry the batch first too.
  if (failed(propagate()))
    return failure();
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  if (returnOp.getNumOperands() == 0)
    return fn.emitError("qtrain-rebatch: @")
           << fn.getSymName() << " returns nothing";
  if (failed(demand(returnOp->getOpOperand(0), 0, returnOp)) ||
      failed(propagate()))
    return failure();
  // The loss reads one row of logits per sample.
  Type resultType = returnOp.getOperand(0).getType();
  if (cast<RankedTensorType>(resultType).getDimSize(0) != from)
    return returnOp->emitError("qtrain-rebatch: ")
           << name(returnOp) << ": the result (" << resultType
           << ") folds the batch " << from
           << " with other dimensions at dimension 0; @" << fn.getSymName()
           << " must return it as a dimension of its own";

  for (Operation *op : ambiguous) {
    OpOperand &src = op->getOpOperand(0);
    if (getFact(src).has_value() != getFact(op->getResult(0)).has_value())
      return op->emitError("qtrain-rebatch: ")
             << name(op)
             << " reshapes the unit batch together with other unit "
                "dimensions; it cannot tell which one is the batch";
  }
  return success();
}

unsigned Rebatcher::rewrite() {
  MLIRContext *ctx = fn.getContext();
  Block &body = fn.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (std::optional<int64_t> fact = getFact(arg))
      arg.setType(withBatch(arg.getType(), *fact));

  unsigned numRewritten = 0;
  for (Operation &op : llvm::make_early_inc_range(body)) {
    if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
      // One empty tensor per batch position its uses need; unbatched uses
      // keep the original.
      llvm::SmallMapVector<int64_t, SmallVector<OpOperand *>, 2> byDim;
      unsigned numUses = 0;
      for (OpOperand &use : empty->getUses()) {
        ++numUses;
        if (std::optional<int64_t> fact = getFact(use))
          byDim[*fact].push_back(&use);
      }
      if (byDim.empty())
        continue;
      ++numRewritten;
      if (byDim.size() == 1 && byDim.front().second.size() == numUses) {
        empty.getResult().setType(
            withBatch(empty.getType(), byDim.front().first));
        continue;
      }
      OpBuilder b(empty);
      for (auto &[dim, uses] : byDim) {
        auto clone = tensor::EmptyOp::create(b, empty.getLoc(),
                                             withBatch(empty.getType(), dim),
                                             empty.getDynamicSizes());
        for (OpOperand *use : uses)
          use->set(clone);
      }
      continue;
    }
    bool changed = false;
    for (OpResult result : op.getResults())
      if (std::optional<int64_t> fact = getFact(result)) {
        result.setType(withBatch(result.getType(), *fact));
        changed = true;
      }
    if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
      if (auto it = unitBroadcasts.find(generic); it != unitBroadcasts.end()) {
        SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
        unsigned loop = batchLoops.lookup(generic);
        for (auto [operand, dim] : it->second) {
          SmallVector<AffineExpr> exprs(maps[operand].getResults());
          exprs[dim] = getAffineDimExpr(loop, ctx);
          maps[operand] =
              AffineMap::get(maps[operand].getNumDims(), 0, exprs, ctx);
        }
        generic.setIndexingMapsAttr(Builder(ctx).getAffineMapArrayAttr(maps));
        changed = true;
      }
    }
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op);
        expand && getFact(expand.getResult())) {
      SmallVector<int64_t> shape(expand.getStaticOutputShape());
      int64_t dim = *getFact(expand.getResult());
      shape[dim] = rebatched(shape[dim]);
      expand.setStaticOutputShape(shape);
    }
    auto resize = [&](ArrayRef<int64_t> sizes, OpOperand &full) {
      SmallVector<int64_t> resized(sizes);
      if (std::optional<int64_t> fact = getFact(full))
        resized[*fact] = rebatched(resized[*fact]);
      return resized;
    };
    if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op);
        extract && getFact(extract.getSourceMutable())) {
      extract.setStaticSizes(
          resize(extract.getStaticSizes(), extract.getSourceMutable()));
      changed = true;
    }
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op);
        insert && getFact(insert.getDestMutable())) {
      insert.setStaticSizes(
          resize(insert.getStaticSizes(), insert.getDestMutable()));
      changed = true;
    }
    numRewritten += changed;
  }

  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  fn.setFunctionType(FunctionType::get(ctx, body.getArgumentTypes(),
                                       returnOp.getOperandTypes()));
  return numRewritten;
}

void RebatchPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto fn = module.lookupSymbol<func::FuncOp>(forward);
  if (!fn || !fn.getBody().hasOneBlock()) {
    module.emitError("qtrain-rebatch: no function @")
        << forward
        << " with a body of one block in the module (set forward=<name>)";
    return signalPassFailure();
  }
  if (batch <= 0) {
    module.emitError("qtrain-rebatch: set the new batch size with batch=<n> "
                     "(a positive number), got ")
        << static_cast<int64_t>(batch);
    return signalPassFailure();
  }
  int64_t exported = from;
  if (exported == 0) {
    for (unsigned i = 0, e = fn.getNumArguments(); i < e && !exported; ++i) {
      auto type = dyn_cast<RankedTensorType>(fn.getArgumentTypes()[i]);
      if (!fn.getArgAttr(i, kParamAttrName) && type && type.getRank() > 0)
        exported = type.getDimSize(0);
    }
    if (exported <= 0) {
      fn.emitError("qtrain-rebatch: @")
          << forward
          << " has no input with a static batch to infer it from; set from=<n>";
      return signalPassFailure();
    }
  }
  if (exported < 0) {
    fn.emitError("qtrain-rebatch: from must be positive, got ") << exported;
    return signalPassFailure();
  }

  Rebatcher rebatcher(fn, exported, batch);
  if (failed(rebatcher.analyze()))
    return signalPassFailure();
  unsigned numOps = exported == batch ? 0 : rebatcher.rewrite();
  numRewritten += numOps;
  if (failed(verify(fn))) {
    fn.emitError("qtrain-rebatch: internal error: the rebatched @")
        << forward << " does not verify";
    return signalPassFailure();
  }
  remark::passed(fn.getLoc(), remark::RemarkOpts::name("rebatched")
                                  .category(getArgument())
                                  .function(fn.getSymName()))
      << ("rebatched @" + forward + " from batch " + Twine(exported) + " to " +
          Twine(static_cast<int64_t>(batch)) + " (" + Twine(numOps) +
          " ops rewritten)")
             .str();
}
