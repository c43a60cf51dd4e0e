//===- TrainBatchNorm.cpp - Eval-mode batch norm trained --------*- C++ -*-===//
//
// qtrain-train-batchnorm: a batch norm exported in eval mode, which
// normalizes with running statistics that are constants (or lifted
// parameters), normalizes with the batch's statistics in the training step
// and keeps the running ones as state (qtrain.running_stat), as PyTorch's
// BatchNorm in train().
//
//===----------------------------------------------------------------------===//

#include "qtrain/Frontend/Passes.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Remarks.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_TRAINBATCHNORMPASS
#include "qtrain/Frontend/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct TrainBatchNormPass
    : mlir::qtrain::impl::TrainBatchNormPassBase<TrainBatchNormPass> {
  using TrainBatchNormPassBase::TrainBatchNormPassBase;
  void runOnOperation() override;
};

/// A per-channel operand of an elementwise generic: a rank-1 running
/// statistic, possibly reshaped (`[C] -> [C, 1, 1]`) before it is read.
struct ChannelOperand {
  OpOperand *use = nullptr;
  /// The rank-1 `[C]` tensor: a constant or a parameter of @forward.
  Value source;
  /// The expand_shapes between `source` and `use`, source side first.
  SmallVector<Operation *> reshapes;
  /// The generic's loop that indexes the channel.
  unsigned loopDim = 0;
};

/// `x - mean[c]` in an elementwise generic: the running mean of a batch norm
/// on `input`, whose dimension `channelDim` is the channel.
struct MeanUse {
  ChannelOperand mean;
  Value input;
  unsigned channelDim = 0;
};

/// `var[c] + eps`: the running variance of a batch norm.
struct VarUse {
  ChannelOperand var;
};

} // namespace

/// Traces `use`, an input of the all-parallel `generic`, back to a rank-1
/// f32 constant or parameter read along one loop of `generic`.
static std::optional<ChannelOperand> traceChannel(linalg::GenericOp generic,
                                                  OpOperand &use) {
  ChannelOperand c;
  c.use = &use;
  Value v = use.get();
  while (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>()) {
    c.reshapes.insert(c.reshapes.begin(), expand);
    v = expand.getSrc();
  }
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() != 1 || !type.hasStaticShape() ||
      !isa<Float32Type, Float64Type>(type.getElementType()))
    return std::nullopt;
  auto arg = dyn_cast<BlockArgument>(v);
  auto fn = dyn_cast<func::FuncOp>(v.getParentBlock()->getParentOp());
  bool isParam = arg && fn && fn.getArgAttr(arg.getArgNumber(), kParamAttrName);
  if (!isParam && !v.getDefiningOp<arith::ConstantOp>())
    return std::nullopt;
  c.source = v;
  // One loop indexes the channel; every other index is on a unit dim.
  AffineMap map = generic.getMatchingIndexingMap(&use);
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(use.get().getType()).getShape();
  std::optional<unsigned> dim;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (shape[i] == 1 &&
        (isa<AffineDimExpr>(expr) || expr.isSymbolicOrConstant()))
      continue;
    auto d = dyn_cast<AffineDimExpr>(expr);
    if (dim || !d || shape[i] != type.getDimSize(0))
      return std::nullopt;
    dim = d.getPosition();
  }
  if (!dim)
    return std::nullopt;
  c.loopDim = *dim;
  return c;
}

/// Whether `v` is a scalar constant, possibly converted (torch-mlir's eps is
/// an f64 constant truncated in the body).
static bool isScalarConstant(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<arith::TruncFOp, arith::ExtFOp>(def))
      break;
    v = def->getOperand(0);
  }
  return matchPattern(v, m_Constant());
}

/// The ops that read the results of `op`, and theirs, up to `depth` levels
/// deep, with their distance from `op` (0 for `op`).
static llvm::DenseMap<Operation *, unsigned> usersWithin(Operation *op,
                                                         unsigned depth) {
  llvm::DenseMap<Operation *, unsigned> distance{{op, 0}};
  SmallVector<Operation *> frontier{op};
  for (unsigned d = 1; d <= depth && !frontier.empty(); ++d) {
    SmallVector<Operation *> next;
    for (Operation *from : frontier)
      for (Operation *user : from->getUsers())
        if (distance.try_emplace(user, d).second)
          next.push_back(user);
    frontier = std::move(next);
  }
  return distance;
}

/// The initial value of a running statistic: the export's, or `fallback`
/// (0 for the mean, 1 for the variance, as a fresh PyTorch layer) when it
/// has none (an elided blob, or a parameter without qtrain.init).
static DenseElementsAttr initialValue(Value source, float fallback,
                                      bool &exported) {
  auto type = cast<RankedTensorType>(source.getType());
  Attribute value;
  if (auto cst = source.getDefiningOp<arith::ConstantOp>()) {
    value = cst.getValue();
  } else {
    auto arg = cast<BlockArgument>(source);
    auto fn = cast<func::FuncOp>(arg.getOwner()->getParentOp());
    value = fn.getArgAttr(arg.getArgNumber(), kInitAttrName);
  }
  exported = true;
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(value))
    return dense;
  if (auto blob = dyn_cast_or_null<DenseResourceElementsAttr>(value))
    if (AsmResourceBlob *data = blob.getRawHandle().getBlob();
        data &&
        data->getData().size() ==
            size_t(type.getNumElements()) * (type.getElementTypeBitWidth() / 8))
      return DenseElementsAttr::getFromRawBuffer(type, data->getData());
  exported = false;
  return DenseElementsAttr::get(
      type, FloatAttr::get(type.getElementType(), double(fallback)));
}

/// A reduction of `input` over every dimension but `channelDim` into a
/// `[C]` tensor: sum_{others} f(x, mean) where `body` builds f.
static Value reducePerChannel(
    OpBuilder &b, Location loc, Value input, unsigned channelDim, Value mean,
    function_ref<Value(OpBuilder &, Location, Value, Value)> body) {
  auto type = cast<RankedTensorType>(input.getType());
  MLIRContext *ctx = b.getContext();
  int64_t channels = type.getDimSize(channelDim);
  auto channelType = RankedTensorType::get({channels}, type.getElementType());
  Value zero = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), 0.0));
  Value empty = tensor::EmptyOp::create(b, loc, channelType.getShape(),
                                        type.getElementType());
  Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  AffineMap chan =
      AffineMap::get(type.getRank(), 0, getAffineDimExpr(channelDim, ctx));
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::reduction);
  iters[channelDim] = utils::IteratorType::parallel;
  SmallVector<Value> ins{input};
  SmallVector<AffineMap> maps{id};
  if (mean) {
    ins.push_back(mean);
    maps.push_back(chan);
  }
  maps.push_back(chan);
  return linalg::GenericOp::create(
             b, loc, TypeRange{channelType}, ins, ValueRange{init}, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value term = body(nb, nl, args[0], mean ? args[1] : Value());
               linalg::YieldOp::create(
                   nb, nl,
                   arith::AddFOp::create(nb, nl, args.back(), term)
                       .getResult());
             })
      .getResult(0);
}

/// `v / count`, elementwise on a `[C]` tensor.
static Value divideBy(OpBuilder &b, Location loc, Value v, double count) {
  auto type = cast<RankedTensorType>(v.getType());
  AffineMap id = b.getMultiDimIdentityMap(1);
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{v}, ValueRange{empty},
             ArrayRef<AffineMap>{id, id},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value n = arith::ConstantOp::create(
                   nb, nl, nb.getFloatAttr(type.getElementType(), count));
               linalg::YieldOp::create(
                   nb, nl,
                   arith::DivFOp::create(nb, nl, args[0], n).getResult());
             })
      .getResult(0);
}

/// Points `c.use` at `stat` through clones of the reshapes it was read
/// through. The old reshapes are left for the caller to erase (the builder
/// may point at one of them).
static void replaceChannelOperand(OpBuilder &b, const ChannelOperand &c,
                                  Value stat) {
  IRMapping mapping;
  mapping.map(c.source, stat);
  Value v = stat;
  for (Operation *reshape : c.reshapes)
    v = b.clone(*reshape, mapping)->getResult(0);
  c.use->set(v);
}

void TrainBatchNormPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  auto fn = module.lookupSymbol<func::FuncOp>(forward);
  if (!fn || fn.isExternal()) {
    module.emitError("qtrain-train-batchnorm: no function @")
        << forward << " with a body (set forward=<name>)";
    return signalPassFailure();
  }
  if (!(momentum > 0.0 && momentum <= 1.0)) {
    module.emitError("qtrain-train-batchnorm: momentum must be in (0, 1], got ")
        << momentum;
    return signalPassFailure();
  }
  if (!fn.getBody().hasOneBlock())
    return;
  Block &body = fn.getBody().front();

  // Find the running statistics: x - mean[c] and var[c] + eps in
  // elementwise generics, in program order.
  SmallVector<MeanUse> means;
  SmallVector<VarUse> vars;
  for (auto generic : body.getOps<linalg::GenericOp>()) {
    if (generic.getNumParallelLoops() != generic.getNumLoops())
      continue;
    Block *gbody = generic.getBody();
    for (OpOperand *input : generic.getDpsInputOperands()) {
      std::optional<ChannelOperand> c = traceChannel(generic, *input);
      if (!c)
        continue;
      BlockArgument arg = generic.getMatchingBlockArgument(input);
      for (Operation *user : arg.getUsers()) {
        if (auto sub = dyn_cast<arith::SubFOp>(user);
            sub && sub.getRhs() == arg) {
          auto x = dyn_cast<BlockArgument>(sub.getLhs());
          if (!x || x.getOwner() != gbody ||
              x.getArgNumber() >= generic.getNumDpsInputs())
            continue;
          OpOperand *xOperand = generic.getDpsInputOperand(x.getArgNumber());
          AffineMap map = generic.getMatchingIndexingMap(xOperand);
          std::optional<unsigned> pos =
              map.getResultPosition(getAffineDimExpr(c->loopDim, ctx));
          if (!map.isPermutation() || !pos)
            continue;
          means.push_back({*c, xOperand->get(), *pos});
          break;
        }
        if (auto add = dyn_cast<arith::AddFOp>(user)) {
          Value other = add.getLhs() == arg ? add.getRhs() : add.getLhs();
          if (other != arg && isScalarConstant(other)) {
            vars.push_back({*c});
            break;
          }
        }
      }
    }
  }

  // Pair each mean with the variance of the same layer: the op that
  // combines x - mean and 1 / sqrt(var + eps) is at most a few ops after
  // both (the same generic when the exporter fused them). The closest
  // pairs go first, so that an input normalization x - mean[c] further up
  // does not take a layer's variance.
  struct Pair {
    unsigned mean, var, meanDistance, varDistance;
  };
  SmallVector<Pair> pairs;
  for (auto [v, var] : llvm::enumerate(vars)) {
    llvm::DenseMap<Operation *, unsigned> afterVar =
        usersWithin(var.var.use->getOwner(), 5);
    for (auto [m, mean] : llvm::enumerate(means)) {
      llvm::DenseMap<Operation *, unsigned> afterMean =
          usersWithin(mean.mean.use->getOwner(), 3);
      std::optional<Pair> best;
      for (auto [op, d] : afterMean)
        if (auto it = afterVar.find(op); it != afterVar.end())
          if (!best ||
              std::make_pair(d, it->second) <
                  std::make_pair(best->meanDistance, best->varDistance))
            best = Pair{unsigned(m), unsigned(v), d, it->second};
      if (best)
        pairs.push_back(*best);
    }
  }
  llvm::stable_sort(pairs, [](const Pair &a, const Pair &b) {
    return std::make_tuple(a.meanDistance, a.varDistance, a.mean) <
           std::make_tuple(b.meanDistance, b.varDistance, b.mean);
  });
  llvm::BitVector meanTaken(means.size()), varTaken(vars.size());
  SmallVector<std::pair<unsigned, unsigned>> layers;
  for (const Pair &p : pairs) {
    if (meanTaken.test(p.mean) || varTaken.test(p.var))
      continue;
    meanTaken.set(p.mean);
    varTaken.set(p.var);
    layers.push_back({p.mean, p.var});
  }
  // Program order of the means, for stable numbering.
  llvm::sort(layers);

  unsigned numLayers = 0;
  llvm::SmallPtrSet<Value, 8> replaced;
  SmallVector<Operation *> oldReshapes;
  for (auto [meanIndex, varIndex] : layers) {
    MeanUse &mean = means[meanIndex];
    VarUse *var = &vars[varIndex];
    Operation *meanOp = mean.mean.use->getOwner();
    auto inputType = cast<RankedTensorType>(mean.input.getType());
    Location loc = meanOp->getLoc();
    if (!inputType.hasStaticShape() ||
        inputType.getElementType() !=
            cast<RankedTensorType>(mean.mean.source.getType())
                .getElementType()) {
      emitError(loc, "qtrain-train-batchnorm: batch norm of ")
          << inputType << " is not supported: training-mode batch norm needs "
          << "a static input of its statistics' element type";
      return signalPassFailure();
    }
    int64_t channels = inputType.getDimSize(mean.channelDim);
    int64_t count = inputType.getNumElements() / channels;
    if (count < 2) {
      emitError(loc, "qtrain-train-batchnorm: batch norm of ")
          << inputType << " has " << count
          << " value per channel: training needs more than 1 (set a larger "
             "batch with qtrain-rebatch)";
      return signalPassFailure();
    }

    // Batch statistics right after the input, biased variance as PyTorch
    // normalizes with.
    OpBuilder b(ctx);
    if (Operation *def = mean.input.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(&body);
    Value sum = reducePerChannel(
        b, loc, mean.input, mean.channelDim, Value(),
        [](OpBuilder &, Location, Value x, Value) { return x; });
    Value batchMean = divideBy(b, loc, sum, double(count));
    Value squares = reducePerChannel(
        b, loc, mean.input, mean.channelDim, batchMean,
        [](OpBuilder &nb, Location nl, Value x, Value m) -> Value {
          Value d = arith::SubFOp::create(nb, nl, x, m);
          return arith::MulFOp::create(nb, nl, d, d);
        });
    Value batchVar = divideBy(b, loc, squares, double(count));

    // The running statistics become state, starting at the export's values.
    auto statType = cast<RankedTensorType>(batchMean.getType());
    bool meanExported = false, varExported = false;
    DenseElementsAttr meanInit =
        initialValue(mean.mean.source, 0.0f, meanExported);
    DenseElementsAttr varInit =
        initialValue(var->var.source, 1.0f, varExported);
    auto addState = [&](StringRef kind, DenseElementsAttr init) {
      unsigned index = fn.getNumArguments();
      auto attrs = DictionaryAttr::get(
          ctx, {NamedAttribute(StringAttr::get(ctx, kStateAttrName),
                               StringAttr::get(ctx, kind)),
                NamedAttribute(StringAttr::get(ctx, kInitAttrName), init)});
      (void)fn.insertArgument(index, statType, attrs, loc);
      return fn.getArgument(index);
    };
    Value runningMean = addState("bn_mean", meanInit);
    Value runningVar = addState("bn_var", varInit);
    auto meanStat = RunningStatOp::create(b, loc, batchMean, runningMean,
                                          b.getF64FloatAttr(momentum),
                                          b.getF64FloatAttr(1.0));
    auto varStat = RunningStatOp::create(
        b, loc, batchVar, runningVar, b.getF64FloatAttr(momentum),
        b.getF64FloatAttr(double(count) / double(count - 1)));
    replaced.insert(mean.mean.source);
    replaced.insert(var->var.source);
    replaceChannelOperand(b, mean.mean, meanStat.getStat());
    replaceChannelOperand(b, var->var, varStat.getStat());
    for (const ChannelOperand *c : {&mean.mean, &var->var})
      oldReshapes.append(c->reshapes.rbegin(), c->reshapes.rend());

    auto returnOp = cast<func::ReturnOp>(body.getTerminator());
    for (auto [kind, value] :
         {std::pair<StringRef, Value>{"bn_mean", meanStat.getUpdated()},
          {"bn_var", varStat.getUpdated()}}) {
      (void)fn.insertResult(
          fn.getNumResults(), statType,
          DictionaryAttr::get(
              ctx, {NamedAttribute(StringAttr::get(ctx, kStateAttrName),
                                   StringAttr::get(ctx, kind))}));
      returnOp.getOperandsMutable().append(value);
    }
    remark::passed(loc, remark::RemarkOpts::name("batch-norm")
                            .category(getArgument())
                            .function(fn.getSymName()))
        << ("batch norm #" + Twine(numLayers) + " (" + Twine(channels) +
            " channels, dim " + Twine(mean.channelDim) +
            ") trains with batch statistics; its running mean and variance "
            "are state (momentum " +
            llvm::formatv("{0}", llvm::format("%g", double(momentum))).str() +
            "), starting at " +
            (meanExported && varExported ? "the exported values"
                                         : "0 and 1 (the export has none)"))
               .str();
    ++numLayers;
  }
  numRewritten += numLayers;
  if (numLayers == 0)
    return;

  // The old reshapes of the running statistics, unless something else reads
  // them (a reshape may be listed twice: it is erased once).
  llvm::SmallPtrSet<Operation *, 8> erased;
  for (Operation *reshape : oldReshapes)
    if (!erased.contains(reshape) && reshape->use_empty()) {
      erased.insert(reshape);
      reshape->erase();
    }

  // The reshapes of the variance may have come before the input the batch
  // statistics read; order the body by its uses again.
  (void)sortTopologically(&body);

  // Running statistics that were lifted as parameters are state now.
  llvm::BitVector unused(fn.getNumArguments());
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    if (replaced.contains(fn.getArgument(i)) && fn.getArgument(i).use_empty())
      unused.set(i);
  (void)fn.eraseArguments(unused);
}
