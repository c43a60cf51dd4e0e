//===- InsertQuant.cpp - Place the quantizers of CPT --------------*- C++
//-*-===//
//
// qtrain-insert-quant: fake-quantizes the weights and input activations of
// every GEMM and convolution of the forward graph at the step's forward
// precision and marks its output for error quantization at the backward
// precision (qtrain.grad_quant), with the precisions as new arguments.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Transforms/Passes.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"
#include "qtrain/runtime/Schedule.h"

#include "mlir/IR/Builders.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_INSERTQUANTPASS
#include "qtrain/Transforms/Passes.h.inc"
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
};

struct InsertQuantPass
    : mlir::qtrain::impl::InsertQuantPassBase<InsertQuantPass> {
  using InsertQuantPassBase::InsertQuantPassBase;
  void runOnOperation() override;
};

} // namespace

static bool isLayer(Operation *op) {
  return isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp,
             linalg::Conv2DNhwcHwcfOp>(op);
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
  // result (f of a convolution, n of a matmul).
  AffineMap map = layer.getMatchingIndexingMap(&operand);
  AffineMap outMap = layer.getMatchingIndexingMap(layer.getDpsInitOperand(0));
  std::optional<int64_t> axis;
  AffineMap otherMap;
  for (OpOperand *in : layer.getDpsInputOperands())
    if (in != &operand)
      otherMap = layer.getMatchingIndexingMap(in);
  for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (dim && outMap.isFunctionOfDim(dim.getPosition()) &&
        !(otherMap && otherMap.isFunctionOfDim(dim.getPosition())))
      axis = pos;
  }
  if (!axis)
    return std::nullopt;
  OpOperand *use = &operand;
  while (!isParam(use->get())) {
    // A weight shared with an earlier layer (tied weights, or one transpose
    // feeding two layers) is quantized already.
    if (auto quant = use->get().getDefiningOp<FakeQuantOp>();
        quant && quant.getRole() == Role::Weight && isParam(quant.getInput()))
      return WeightSite{nullptr, *axis};
    auto transpose = use->get().getDefiningOp<linalg::TransposeOp>();
    if (!transpose)
      return std::nullopt;
    axis = transpose.getPermutation()[*axis];
    use = &transpose.getInputMutable();
  }
  return WeightSite{use, *axis};
}

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
  auto shape = static_cast<ShapeKind>(static_cast<int>(s.shape));
  auto mode = s.mode == rt::CycleMode::Repeated ? CycleMode::Repeated
                                                : CycleMode::Triangular;
  Flip flip = s.flip == rt::CycleFlip::None       ? Flip::None
              : s.flip == rt::CycleFlip::Vertical ? Flip::Vertical
                                                  : Flip::Horizontal;
  PeriodConvention period = s.period == rt::PeriodConvention::Floor
                                ? PeriodConvention::Floor
                                : PeriodConvention::FloorPlusOne;
  return CyclicScheduleAttr::get(ctx, shape, mode, flip, s.minBits, s.maxBits,
                                 s.cycles, period);
}

/// Appends an argument with a `qtrain.control` role to `fn`.
static Value addControl(func::FuncOp fn, Type type, StringRef name) {
  unsigned index = fn.getNumArguments();
  MLIRContext *ctx = fn.getContext();
  auto attrs = DictionaryAttr::get(
      ctx, {NamedAttribute(StringAttr::get(ctx, kControlAttrName),
                           StringAttr::get(ctx, name))});
  (void)fn.insertArgument(index, type, attrs, fn.getLoc());
  return fn.getArgument(index);
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
  if (policy != "cpt" && policy != "static" && policy != "none") {
    module.emitError("qtrain-insert-quant: unknown policy '")
        << policy << "' (expected cpt, static or none)";
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
    fn.emitRemark("policy=none: no quantizers, fp32 throughout");
    return;
  }
  if (gradBits > 16) {
    module.emitError("qtrain-insert-quant: grad-bits must be in [0, 16], got ")
        << static_cast<unsigned>(gradBits);
    return signalPassFailure();
  }
  std::string text =
      !schedule.empty() ? std::string(schedule)
      : policy == "cpt"
          ? std::string("cpt:3:8")
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
  if (parsed.kind == rt::ScheduleKind::Learned) {
    module.emitError("qtrain-insert-quant: a learned schedule needs "
                     "policy=ldp, which is not implemented yet");
    return signalPassFailure();
  }
  if (fn->hasAttr(kRoleAttrName) || !fn.getOps<GradQuantOp>().empty()) {
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

  auto nearest = RoundingAttr::get(ctx, Rounding::NearestEven);
  auto perTensor =
      GranularityAttr::get(ctx, GranularityKind::PerTensor, std::nullopt);
  // Quantizers of values used by several layers (a parameter shared by two
  // layers, an activation feeding two branches) are created once.
  llvm::DenseMap<Value, Value> quantized;
  // Running ranges of the quantized activations, returned as state.
  SmallVector<Value> emaStates;
  auto quantize = [&](OpOperand &use, Role role, GranularityAttr gran) {
    Value v = use.get();
    Value &q = quantized[v];
    if (!q) {
      OpBuilder b(ctx);
      b.setInsertionPointAfterValue(v);
      q = FakeQuantOp::create(b, v.getLoc(), v.getType(), v, controls.bits,
                              Value(), Value(), Value(), Value(),
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

  for (auto [index, layer] : llvm::enumerate(layers)) {
    if (keep.contains(index)) {
      layer->emitRemark() << "layer " << index << " kept in full precision";
      continue;
    }
    std::optional<WeightSite> weight;
    OpOperand *weightOperand = nullptr;
    for (OpOperand *in : layer.getDpsInputOperands()) {
      if ((weight = findWeight(layer, *in))) {
        weightOperand = in;
        if (weight->use)
          quantize(*weight->use, Role::Weight,
                   GranularityAttr::get(ctx, GranularityKind::PerChannel,
                                        weight->axis));
        break;
      }
    }
    for (OpOperand *in : layer.getDpsInputOperands()) {
      if (in == weightOperand)
        continue;
      // Quantize before padding: PyTorch pads the quantized input with
      // exact zeros inside the convolution.
      if (auto pad = in->get().getDefiningOp<tensor::PadOp>())
        quantize(pad.getSourceMutable(), Role::Activation, perTensor);
      else
        quantize(*in, Role::Activation, perTensor);
    }
    // The error entering this layer's backward pass.
    OpBuilder b(layer->getNextNode());
    Value y = layer->getResult(0);
    auto gradQuant = GradQuantOp::create(
        b, layer.getLoc(), y.getType(), y, controls.gradBits, controls.seed,
        controls.step, RoundingAttr::get(ctx, Rounding::Stochastic),
        b.getI64IntegerAttr(index));
    y.replaceAllUsesExcept(gradQuant.getResult(), gradQuant);
    layer->setAttr(kLayerAttrName, b.getI64IntegerAttr(index));
    layer->setAttr(kProductAttrName, b.getStringAttr("forward"));
    layer->emitRemark() << "layer " << index << " quantized"
                        << (weight ? ""
                                   : " (no parameter operand: both "
                                     "inputs as activations)");
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
}
