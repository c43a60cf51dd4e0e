//===- InsertQuant.cpp - Place the quantizers of CPT ------------*- C++ -*-===//
//
// qtrain-insert-quant: fake-quantizes the weights and input activations of
// every GEMM and convolution of the forward graph at the step's forward
// precision and marks its output for error quantization at the backward
// precision (qtrain.grad_quant), with the precisions as new arguments.
// With policy=ldp the forward precision is each layer's own, learned from
// a new parameter (PAPERS.md section 3), and a cost term joins the loss.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Quant/Passes.h"

#include "qtrain/Analysis/LayerMacs.h"
#include "qtrain/Analysis/QuantizedOperand.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"
#include "qtrain/runtime/Schedule.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Remarks.h"

#include <cmath>

namespace mlir::qtrain {
#define GEN_PASS_DEF_INSERTQUANTPASS
#include "qtrain/Quant/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;
namespace rt = ::qtrain::rt;

namespace {

/// The control arguments the pass appends to the forward function.
struct Controls {
  Value bits, gradBits, seed, step;
};

/// Where a layer's weight is quantized: the use it feeds (null when an
/// earlier layer quantized it already) and the output-channel axis there.
struct WeightSite {
  OpOperand *use = nullptr;
  int64_t axis = 0;
  /// When `use` is null: the quantizer an earlier layer placed.
  FakeQuantOp existing;
};

/// A layer with a learned precision (LDP): its bits (an integer-valued 0-d
/// f32) and its MACs, for the cost term.
struct LearnedLayer {
  Value bits;
  int64_t macs;
};

struct InsertQuantPass
    : mlir::qtrain::impl::InsertQuantPassBase<InsertQuantPass> {
  using InsertQuantPassBase::InsertQuantPassBase;
  void runOnOperation() override;
};

} // namespace

static bool isLayer(Operation *op) {
  return isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp,
             linalg::Conv2DNhwcHwcfOp, linalg::Conv2DNhwcFhwcOp,
             linalg::Conv2DNgchwGfchwOp, linalg::Conv2DNgchwFgchwOp,
             linalg::Conv2DNhwgcGfhwcOp, linalg::DepthwiseConv2DNchwChwOp,
             linalg::DepthwiseConv2DNhwcHwcOp>(op);
}

static bool isParam(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return false;
  auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return fn && fn.getArgAttr(arg.getArgNumber(), kParamAttrName);
}

/// Follows `operand` of `layer` back through transposes to a parameter.
/// Returns the use to quantize and the axis of the output channel there.
static std::optional<WeightSite> findWeight(linalg::LinalgOp layer,
                                            OpOperand &operand) {
  // The output channel is the loop dimension this operand shares with the
  // result only (f of a convolution, also of a grouped one, n of a matmul),
  // or, for a depthwise convolution, where every channel is its own group,
  // the one it shares with both (c).
  AffineMap map = layer.getMatchingIndexingMap(&operand);
  AffineMap outMap = layer.getMatchingIndexingMap(layer.getDpsInitOperand(0));
  std::optional<int64_t> axis, sharedAxis;
  AffineMap otherMap;
  for (OpOperand *in : layer.getDpsInputOperands())
    if (in != &operand)
      otherMap = layer.getMatchingIndexingMap(in);
  for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || !outMap.isFunctionOfDim(dim.getPosition()))
      continue;
    if (otherMap && otherMap.isFunctionOfDim(dim.getPosition()))
      sharedAxis = pos;
    else
      axis = pos;
  }
  if (!axis &&
      isa<linalg::DepthwiseConv2DNchwChwOp, linalg::DepthwiseConv2DNhwcHwcOp>(
          layer.getOperation()))
    axis = sharedAxis;
  if (!axis)
    return std::nullopt;
  DataMovementOptions transposes;
  transposes.pads = DataMovementOptions::Pads::None;
  QuantizedOperand traced = traceQuantizedOperand(operand.get(), transposes);
  // torch-mlir splits a grouped convolution's [F, C/G, KH, KW] weight into
  // [G, F/G, C/G, KH, KW] with an expand_shape: the expanded weight is
  // quantized, at the convolution.
  if (traced.chain.empty())
    if (auto expand = operand.get().getDefiningOp<tensor::ExpandShapeOp>();
        expand && isParam(expand.getSrc()))
      return WeightSite{&operand, *axis, FakeQuantOp()};
  int64_t sourceAxis = traced.sourcePosition(*axis);
  // A weight shared with an earlier layer (tied weights, or one transpose
  // feeding two layers) is quantized already.
  if (FakeQuantOp quant = traced.quant;
      quant && quant.getRole() == Role::Weight && isParam(quant.getInput()))
    return WeightSite{nullptr, sourceAxis, quant};
  if (!isParam(traced.source))
    return std::nullopt;
  OpOperand *use =
      traced.chain.empty() ? &operand : &traced.chain.front()->getOpOperand(0);
  return WeightSite{use, sourceAxis, FakeQuantOp()};
}

/// Whether `pairs` lists the enumerators of a runtime enum and of the
/// dialect's enum of the same name side by side, each pair the same number,
/// in order from 0, and the dialect has no enumerator beyond the list
/// (`dialectMax`, its largest value).
template <typename RuntimeEnum, typename DialectEnum, size_t N>
static constexpr bool
sameEnumerators(const std::pair<RuntimeEnum, DialectEnum> (&pairs)[N],
                uint64_t dialectMax) {
  for (size_t i = 0; i < N; ++i)
    if (uint64_t(pairs[i].first) != i || uint64_t(pairs[i].second) != i)
      return false;
  return dialectMax == N - 1;
}

// The runtime's schedule enums (the reference, runtime/Schedule.h) and the
// dialect's (QTrainAttrs.td) are one list each in one order, so that toAttr
// converts them by value.
static_assert(sameEnumerators<rt::CycleShape, ShapeKind>(
                  {{rt::CycleShape::Cosine, ShapeKind::Cosine},
                   {rt::CycleShape::Linear, ShapeKind::Linear},
                   {rt::CycleShape::Exponential, ShapeKind::Exponential},
                   {rt::CycleShape::Rex, ShapeKind::Rex}},
                  getMaxEnumValForShapeKind()),
              "rt::CycleShape and the dialect's ShapeKind differ");
static_assert(sameEnumerators<rt::CycleMode, CycleMode>(
                  {{rt::CycleMode::Repeated, CycleMode::Repeated},
                   {rt::CycleMode::Triangular, CycleMode::Triangular}},
                  getMaxEnumValForCycleMode()),
              "rt::CycleMode and the dialect's CycleMode differ");
static_assert(sameEnumerators<rt::CycleFlip, Flip>(
                  {{rt::CycleFlip::None, Flip::None},
                   {rt::CycleFlip::Vertical, Flip::Vertical},
                   {rt::CycleFlip::Horizontal, Flip::Horizontal}},
                  getMaxEnumValForFlip()),
              "rt::CycleFlip and the dialect's Flip differ");
static_assert(sameEnumerators<rt::PeriodConvention, PeriodConvention>(
                  {{rt::PeriodConvention::Floor, PeriodConvention::Floor},
                   {rt::PeriodConvention::FloorPlusOne,
                    PeriodConvention::FloorPlusOne}},
                  getMaxEnumValForPeriodConvention()),
              "rt::PeriodConvention and the dialect's PeriodConvention differ");

/// The schedule of the command line as a dialect attribute.
static Attribute toAttr(MLIRContext *ctx, const rt::Schedule &s) {
  switch (s.kind) {
  case rt::ScheduleKind::Static:
    return StaticScheduleAttr::get(ctx, s.bits);
  case rt::ScheduleKind::Learned:
    return LearnedScheduleAttr::get(ctx, s.minBits, s.maxBits);
  case rt::ScheduleKind::Cyclic:
    break;
  }
  auto shape = static_cast<ShapeKind>(s.shape);
  auto mode = static_cast<CycleMode>(s.mode);
  auto flip = static_cast<Flip>(s.flip);
  auto period = static_cast<PeriodConvention>(s.period);
  return CyclicScheduleAttr::get(ctx, shape, mode, flip, s.minBits, s.maxBits,
                                 s.cycles, period);
}

/// Adds an argument with a `qtrain.control` role to `fn`, after the inputs
/// and controls and before any state (the step ABI's order).
static Value addControl(func::FuncOp fn, Type type, StringRef name) {
  unsigned index = 0;
  for (unsigned e = fn.getNumArguments(); index < e; ++index)
    if (fn.getArgAttr(index, kStateAttrName))
      break;
  MLIRContext *ctx = fn.getContext();
  auto attrs = DictionaryAttr::get(
      ctx, {NamedAttribute(StringAttr::get(ctx, kControlAttrName),
                           StringAttr::get(ctx, name))});
  (void)fn.insertArgument(index, type, attrs, fn.getLoc());
  return fn.getArgument(index);
}

/// LDP's cost term (PAPERS.md section 3, form unconfirmed):
///   lambda * sum_l MACs_l * b_l^2 / (sum_l MACs_l * 32^2)
/// with lambda a {qtrain.state = "ldp_lambda"} input (tensor<1xf32>,
/// returned unchanged, so the runtime can set it between steps) and the
/// term a {qtrain.loss_term} result of `fn`.
static void addCostTerm(func::FuncOp fn, ArrayRef<LearnedLayer> layers,
                        double lambda) {
  MLIRContext *ctx = fn.getContext();
  Location loc = fn.getLoc();
  auto f32 = Float32Type::get(ctx);
  auto lambdaType = RankedTensorType::get({1}, f32);
  auto scalarType = RankedTensorType::get({}, f32);
  auto stateAttrs = DictionaryAttr::get(
      ctx, {NamedAttribute(StringAttr::get(ctx, kStateAttrName),
                           StringAttr::get(ctx, "ldp_lambda")),
            NamedAttribute(StringAttr::get(ctx, kInitAttrName),
                           DenseElementsAttr::get(lambdaType, float(lambda)))});
  unsigned argIndex = fn.getNumArguments();
  (void)fn.insertArgument(argIndex, lambdaType, stateAttrs, loc);
  Value lambdaArg = fn.getArgument(argIndex);

  auto returnOp = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  OpBuilder b(returnOp);
  double total = 0;
  for (const LearnedLayer &l : layers)
    total += double(l.macs);
  SmallVector<Value> ins;
  for (const LearnedLayer &l : layers)
    ins.push_back(l.bits);
  // lambda as a 0-d tensor, the last input of the generic.
  ins.push_back(tensor::CollapseShapeOp::create(
      b, loc, scalarType, lambdaArg, ArrayRef<ReassociationIndices>{}));
  Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, f32);
  auto scalarMap = AffineMap::get(0, 0, ctx);
  SmallVector<AffineMap> maps(ins.size() + 1, scalarMap);
  auto cost = linalg::GenericOp::create(
      b, loc, TypeRange{scalarType}, ins, ValueRange{init}, maps,
      ArrayRef<utils::IteratorType>{},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value sum;
        for (auto [i, l] : llvm::enumerate(layers)) {
          Value weight = arith::ConstantOp::create(
              nb, nl,
              nb.getF32FloatAttr(float(double(l.macs) / (total * 1024.0))));
          Value square = arith::MulFOp::create(nb, nl, args[i], args[i]);
          Value term = arith::MulFOp::create(nb, nl, weight, square);
          sum =
              sum ? arith::AddFOp::create(nb, nl, sum, term).getResult() : term;
        }
        Value weighted =
            arith::MulFOp::create(nb, nl, args[layers.size()], sum);
        linalg::YieldOp::create(nb, nl, weighted);
      });
  unsigned resultIndex = fn.getNumResults();
  (void)fn.insertResult(
      resultIndex, lambdaType,
      DictionaryAttr::get(
          ctx, {NamedAttribute(StringAttr::get(ctx, kStateAttrName),
                               StringAttr::get(ctx, "ldp_lambda"))}));
  returnOp.getOperandsMutable().append(lambdaArg);
  (void)fn.insertResult(
      resultIndex + 1, scalarType,
      DictionaryAttr::get(
          ctx, {NamedAttribute(StringAttr::get(ctx, kLossTermAttrName),
                               UnitAttr::get(ctx))}));
  returnOp.getOperandsMutable().append(cost.getResult(0));
}

void InsertQuantPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  auto fn = module.lookupSymbol<func::FuncOp>(forward);
  if (!fn || fn.isExternal()) {
    module.emitError("qtrain-insert-quant: no function @")
        << forward << " with a body in the module (set forward=<name>)";
    return signalPassFailure();
  }
  if (policy != "cpt" && policy != "static" && policy != "none" &&
      policy != "ldp") {
    module.emitError("qtrain-insert-quant: unknown policy '")
        << policy << "' (expected cpt, static, ldp or none)";
    return signalPassFailure();
  }
  if (gradFormat != "int" && gradFormat != "e5m2") {
    module.emitError("qtrain-insert-quant: unknown grad-format '")
        << gradFormat << "' (expected int or e5m2)";
    return signalPassFailure();
  }
  bool fp8Errors = gradFormat == "e5m2";
  if (fp8Errors && policy == "none") {
    module.emitError("qtrain-insert-quant: grad-format=e5m2 quantizes the "
                     "errors of a quantized policy; policy=none has none");
    return signalPassFailure();
  }
  if (fp8Errors && gradBits != 8) {
    module.emitError("qtrain-insert-quant: grad-format=e5m2 is the 8-bit "
                     "backward in fp8; grad-bits must be 8, got ")
        << static_cast<unsigned>(gradBits);
    return signalPassFailure();
  }
  if (policy == "none") {
    // Full precision: nothing to place; the schedule says so. The controls
    // are still arguments, unused, so that every step has the same ABI.
    for (auto [type, name] :
         {std::pair<Type, StringRef>{IntegerType::get(ctx, 32), "bits"},
          {IntegerType::get(ctx, 32), "grad_bits"},
          {IntegerType::get(ctx, 64), "seed"},
          {IntegerType::get(ctx, 32), "step"}})
      addControl(fn, type, name);
    module->setAttr(kScheduleAttrName, StaticScheduleAttr::get(ctx, 0));
    module->setAttr(kGradScheduleAttrName, StaticScheduleAttr::get(ctx, 0));
    remark::analysis(fn.getLoc(), remark::RemarkOpts::name("policy")
                                      .category(getArgument())
                                      .function(fn.getSymName()))
        << "policy=none: no quantizers, fp32 throughout";
    return;
  }
  if (gradBits > 16) {
    module.emitError("qtrain-insert-quant: grad-bits must be in [0, 16], got ")
        << static_cast<unsigned>(gradBits);
    return signalPassFailure();
  }
  std::string text =
      !schedule.empty() ? std::string(schedule)
      : policy == "cpt" ? std::string("cpt:3:8")
      : policy == "ldp"
          ? std::string("ldp:3:8")
          : "static:" + std::to_string(static_cast<unsigned>(bits));
  rt::Schedule parsed;
  if (rt::Status status = rt::parseSchedule(text, parsed); status.failed()) {
    module.emitError("qtrain-insert-quant: ") << status.message();
    return signalPassFailure();
  }
  if (policy == "static" && parsed.kind != rt::ScheduleKind::Static) {
    module.emitError("qtrain-insert-quant: policy=static needs a static "
                     "schedule, got '")
        << text << "'";
    return signalPassFailure();
  }
  bool learned = policy == "ldp";
  if (learned != (parsed.kind == rt::ScheduleKind::Learned)) {
    module.emitError("qtrain-insert-quant: ")
        << (learned ? "policy=ldp needs a learned schedule (ldp:MIN:MAX), "
                      "got '"
                    : "a learned schedule needs policy=ldp, got policy=" +
                          policy + " with '")
        << text << "'";
    return signalPassFailure();
  }
  if (learned &&
      (!std::isfinite(lambda) || lambda < 0.0 || !std::isfinite(ldpInit))) {
    module.emitError("qtrain-insert-quant: lambda must be finite and "
                     "non-negative and ldp-init finite, got lambda=")
        << lambda << " ldp-init=" << ldpInit;
    return signalPassFailure();
  }
  if (fn->hasAttr(kRoleAttrName) || !fn.getOps<GradQuantOp>().empty() ||
      module->hasAttr(kGradFormatAttrName)) {
    fn.emitError("qtrain-insert-quant: @")
        << forward << " is already quantized";
    return signalPassFailure();
  }

  SmallVector<linalg::LinalgOp> layers;
  fn.walk([&](Operation *op) {
    if (isLayer(op))
      layers.push_back(cast<linalg::LinalgOp>(op));
  });
  llvm::SmallDenseSet<int64_t> keep;
  for (int64_t index : fullPrecisionLayers) {
    int64_t n = layers.size();
    if (index < -n || index >= n) {
      fn.emitError("qtrain-insert-quant: full-precision layer ")
          << index << " does not exist; @" << forward << " has " << n
          << " layers";
      return signalPassFailure();
    }
    keep.insert(index < 0 ? index + n : index);
  }

  Controls controls;
  controls.bits = addControl(fn, IntegerType::get(ctx, 32), "bits");
  controls.gradBits = addControl(fn, IntegerType::get(ctx, 32), "grad_bits");
  controls.seed = addControl(fn, IntegerType::get(ctx, 64), "seed");
  controls.step = addControl(fn, IntegerType::get(ctx, 32), "step");
  module->setAttr(kScheduleAttrName, toAttr(ctx, parsed));
  module->setAttr(kGradScheduleAttrName,
                  StaticScheduleAttr::get(ctx, gradBits));
  if (fp8Errors)
    module->setAttr(kGradFormatAttrName, StringAttr::get(ctx, gradFormat));

  auto nearest = RoundingAttr::get(ctx, Rounding::NearestEven);
  auto perTensor =
      GranularityAttr::get(ctx, GranularityKind::PerTensor, std::nullopt);
  // Quantizers of values used by several layers (a parameter shared by two
  // layers, an activation feeding two branches) are created once.
  // Keyed by the value and its precision: LDP layers have their own.
  llvm::DenseMap<std::pair<Value, Value>, Value> quantized;
  // Running ranges of the quantized activations, returned as state.
  SmallVector<Value> emaStates;
  auto quantize = [&](OpOperand &use, Role role, GranularityAttr gran,
                      Value layerBits) {
    Value v = use.get();
    Value &q = quantized[{v, layerBits}];
    if (!q) {
      OpBuilder b(ctx);
      b.setInsertionPointAfterValue(v);
      // A learned precision is computed at the top of the function: a
      // parameter's quantizer goes after it.
      if (Operation *def = layerBits.getDefiningOp();
          def && def->getBlock() == b.getInsertionBlock() &&
          !def->isBeforeInBlock(&*b.getInsertionPoint()))
        b.setInsertionPointAfter(def);
      q = FakeQuantOp::create(b, v.getLoc(), v.getType(), v, layerBits, Value(),
                              Value(), Value(), Value(),
                              RoleAttr::get(ctx, role), nearest, gran,
                              b.getI64IntegerAttr(0));
      if (role == Role::Activation) {
        auto stateType = RangeEmaOp::getStateType(ctx);
        unsigned index = fn.getNumArguments();
        auto attrs = DictionaryAttr::get(
            ctx, {NamedAttribute(StringAttr::get(ctx, kStateAttrName),
                                 StringAttr::get(ctx, "ema"))});
        (void)fn.insertArgument(index, stateType, attrs, v.getLoc());
        emaStates.push_back(RangeEmaOp::create(b, v.getLoc(), stateType, v,
                                               fn.getArgument(index),
                                               b.getF64FloatAttr(0.9)));
      }
    }
    use.set(q);
  };

  // LDP: the learnable precision of each quantized layer, a parameter
  // after the existing ones, and its bits as an integer-valued f32.
  auto f32 = Float32Type::get(ctx);
  auto scalarType = RankedTensorType::get({}, f32);
  unsigned numParams = 0;
  while (numParams < fn.getNumArguments() &&
         fn.getArgAttr(numParams, kParamAttrName))
    ++numParams;
  SmallVector<LearnedLayer> learnedLayers;
  auto addPrecision = [&](int64_t index, linalg::LinalgOp layer) {
    MLIRContext *c = ctx;
    auto attrs = DictionaryAttr::get(
        c,
        {NamedAttribute(StringAttr::get(c, kParamAttrName), UnitAttr::get(c)),
         NamedAttribute(StringAttr::get(c, kPrecisionAttrName),
                        IntegerAttr::get(IntegerType::get(c, 64), index)),
         NamedAttribute(
             StringAttr::get(c, kInitAttrName),
             DenseElementsAttr::get(scalarType, float(double(ldpInit))))});
    (void)fn.insertArgument(numParams, scalarType, attrs, layer.getLoc());
    Value p = fn.getArgument(numParams++);
    OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
    Value bitsF = LearnedBitsOp::create(b, layer.getLoc(), p,
                                        b.getI32IntegerAttr(parsed.minBits),
                                        b.getI32IntegerAttr(parsed.maxBits));
    Value scalar =
        tensor::ExtractOp::create(b, layer.getLoc(), bitsF, ValueRange{});
    Value bitsI = arith::FPToSIOp::create(b, layer.getLoc(),
                                          IntegerType::get(c, 32), scalar);
    learnedLayers.push_back({bitsF, countMacs(layer)});
    return bitsI;
  };

  for (auto [index, layer] : llvm::enumerate(layers)) {
    if (keep.contains(index)) {
      remark::missed(layer->getLoc(), remark::RemarkOpts::name("layer-kept")
                                          .category(getArgument())
                                          .function(fn.getSymName()))
          << ("layer " + Twine(index) + " kept in full precision").str();
      continue;
    }
    Value layerBits =
        learned ? addPrecision(int64_t(index), layer) : controls.bits;
    std::optional<WeightSite> weight;
    OpOperand *weightOperand = nullptr;
    for (OpOperand *in : layer.getDpsInputOperands()) {
      if ((weight = findWeight(layer, *in))) {
        weightOperand = in;
        if (weight->use)
          quantize(*weight->use, Role::Weight,
                   GranularityAttr::get(ctx, GranularityKind::PerChannel,
                                        weight->axis),
                   layerBits);
        // LDP: a weight tied to an earlier layer is quantized at that
        // layer's learned bits, which this layer's precision gradient and
        // kernels would not match.
        else if (learned && weight->existing.getBits() != layerBits) {
          layer->emitError("qtrain-insert-quant: policy=ldp: layer ")
              << index
              << " shares its weight with an earlier layer (tied weights), "
                 "which has its own learned precision; not supported";
          return signalPassFailure();
        }
        break;
      }
    }
    for (OpOperand *in : layer.getDpsInputOperands()) {
      if (in == weightOperand)
        continue;
      // Quantize before padding: PyTorch pads the quantized input with
      // exact zeros inside the convolution.
      if (auto pad = in->get().getDefiningOp<tensor::PadOp>())
        quantize(pad.getSourceMutable(), Role::Activation, perTensor,
                 layerBits);
      else
        quantize(*in, Role::Activation, perTensor, layerBits);
    }
    // The error entering this layer's backward pass.
    OpBuilder b(layer->getNextNode());
    Value y = layer->getResult(0);
    Operation *errorQuant;
    if (fp8Errors)
      errorQuant = GradRoundFloatOp::create(
          b, layer.getLoc(), y.getType(), y,
          FloatFormatAttr::get(ctx, 5, 2, 0, /*saturate=*/false),
          b.getF32FloatAttr(kE5m2Max), RoleAttr::get(ctx, Role::Error));
    else
      errorQuant = GradQuantOp::create(
          b, layer.getLoc(), y.getType(), y, controls.gradBits, controls.seed,
          controls.step, RoundingAttr::get(ctx, Rounding::Stochastic),
          b.getI64IntegerAttr(index));
    y.replaceAllUsesExcept(errorQuant->getResult(0), errorQuant);
    layer->setAttr(kLayerAttrName, b.getI64IntegerAttr(index));
    layer->setAttr(kProductAttrName, b.getStringAttr("forward"));
    remark::passed(layer->getLoc(), remark::RemarkOpts::name("layer-quantized")
                                        .category(getArgument())
                                        .function(fn.getSymName()))
        << ("layer " + Twine(index) + " quantized" +
            (learned ? " at its learned precision" : "") +
            (weight ? ""
                    : " (no parameter operand: both inputs as activations)"))
               .str();
    ++numLayers;
  }

  // The updated running ranges leave the function after the logits.
  auto returnOp = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  for (Value state : emaStates) {
    unsigned index = fn.getNumResults();
    auto attrs = DictionaryAttr::get(
        ctx, {NamedAttribute(StringAttr::get(ctx, kStateAttrName),
                             StringAttr::get(ctx, "ema"))});
    (void)fn.insertResult(index, state.getType(), attrs);
    returnOp.getOperandsMutable().append(state);
  }
  if (learned) {
    if (learnedLayers.empty()) {
      fn.emitError("qtrain-insert-quant: policy=ldp: no layer of @")
          << forward << " is quantized, so there is no precision to learn";
      return signalPassFailure();
    }
    addCostTerm(fn, learnedLayers, lambda);
  }
}
