//===- IntegerKernels.cpp - Integer products of quantized operands --------===//
//
// qtrain-integer-kernels: in each kernel variant, the product of two
// operands quantized on integer grids becomes an exact integer contraction
// of their codes plus zero-point corrections, evaluated in f64 (see the
// pass description in Passes.td and docs/passes/integer-kernels.md).
//
//===----------------------------------------------------------------------===//

#include "qtrain/Kernels/Passes.h"

#include "InputGrad.h"
#include "IntegerSums.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Remarks.h"
#include "mlir/Transforms/CSE.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

#include <set>

namespace mlir::qtrain {
#define GEN_PASS_DEF_INTEGERKERNELSPASS
#include "qtrain/Kernels/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;
using namespace mlir::qtrain::intkernels;

namespace {

/// Why a product stays in f32, or success.
using Reason = std::optional<std::string>;

/// The block argument `v` is, if any, of `op`'s body.
static std::optional<unsigned> argNumber(linalg::LinalgOp op, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != op.getBlock())
    return std::nullopt;
  return arg.getArgNumber();
}

/// Whether `op`'s body is `out + in0 * in1` (in either order).
static bool isMultiplyAccumulate(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  if (yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  for (auto [acc, term] : {std::pair(add.getLhs(), add.getRhs()),
                           std::pair(add.getRhs(), add.getLhs())}) {
    auto mul = term.getDefiningOp<arith::MulFOp>();
    if (argNumber(op, acc) != 2u || !mul)
      continue;
    std::optional<unsigned> x = argNumber(op, mul.getLhs());
    std::optional<unsigned> y = argNumber(op, mul.getRhs());
    if (x && y && ((*x == 0 && *y == 1) || (*x == 1 && *y == 0)))
      return body->getOperations().size() == 3;
  }
  return false;
}

struct IntegerKernelsPass
    : mlir::qtrain::impl::IntegerKernelsPassBase<IntegerKernelsPass> {
  using IntegerKernelsPassBase::IntegerKernelsPassBase;
  void runOnOperation() override;

  /// Rewrites `op`; returns why it stays in f32 when it does.
  FailureOr<Reason> rewrite(linalg::LinalgOp op, int64_t &codeBits);
};

} // namespace

/// Copies the qtrain tags (site, product, role) of a product to the op that
/// now computes it.
static void copyTags(Operation *from, Operation *to) {
  for (NamedAttribute attr : from->getDiscardableAttrs())
    if (attr.getName().getValue().starts_with("qtrain."))
      to->setAttr(attr.getName(), attr.getValue());
}

/// The map of a per-channel statistic, or of a per-tensor one, from the
/// epilogue's loops (the output positions).
static AffineMap statMap(MLIRContext *ctx, unsigned rank, const Factor &f) {
  if (f.channelOutput < 0)
    return AffineMap::get(rank, 0, {}, ctx);
  return AffineMap::get(rank, 0, getAffineDimExpr(f.channelOutput, ctx), ctx);
}

FailureOr<Reason> IntegerKernelsPass::rewrite(linalg::LinalgOp op,
                                              int64_t &codeBits) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      !isMultiplyAccumulate(op))
    return Reason("not a multiply-accumulate of two operands");
  if (!op.hasPureTensorSemantics() ||
      llvm::any_of(op->getOperandTypes(), [](Type t) {
        return !cast<RankedTensorType>(t).hasStaticShape();
      }))
    return Reason("dynamic shapes");
  std::array<Factor, 2> factors;
  for (unsigned i = 0; i < 2; ++i) {
    FailureOr<Factor> f = traceFactor(op->getOperand(i));
    if (failed(f))
      return Reason("an operand is not an integer-grid quantizer seen through "
                    "zero padding and transposes");
    factors[i] = *f;
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap outMap = maps[2];
  if (!outMap.isProjectedPermutation())
    return Reason("the output is not a projection of the loops");
  // A per-channel scale must be constant over the reduction.
  for (auto [i, f] : llvm::enumerate(factors)) {
    if (!f.channelPosition)
      continue;
    auto rank = cast<RankedTensorType>(op->getOperand(i).getType()).getRank();
    if (paddedPositions(f, rank).test(*f.channelPosition))
      return Reason("a per-channel operand is padded along its channels");
    auto dim = dyn_cast<AffineDimExpr>(maps[i].getResult(*f.channelPosition));
    std::optional<unsigned> out =
        dim ? outMap.getResultPosition(dim) : std::nullopt;
    if (!out)
      return Reason("a per-channel scale runs along a reduction dimension");
    f.channelLoop = dim.getPosition();
    f.channelOutput = *out;
  }

  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  IntegerSums r{b,
                loc,
                op,
                maps,
                op.getIteratorTypesArray(),
                op.getStaticLoopRanges(),
                /*wideSums=*/referenceSums};

  // Codes, with the chains replayed on them.
  std::array<Value, 2> codes, scales, lows;
  std::array<int64_t, 2> half;
  for (auto [i, f] : llvm::enumerate(factors)) {
    FakeQuantOp q = f.quant;
    auto inputType = cast<RankedTensorType>(q.getInput().getType());
    Type codeType = QuantizeOp::getCodeType(ctx, f.bits);
    SmallVector<int64_t> statShape;
    if (std::optional<int64_t> axis = q.getGranularity().getAxis())
      statShape.push_back(inputType.getDimSize(*axis));
    auto statType = RankedTensorType::get(statShape, b.getF32Type());
    auto quantize = QuantizeOp::create(
        b, q.getLoc(), RankedTensorType::get(inputType.getShape(), codeType),
        statType, statType, q.getInput(),
        b.getI32IntegerAttr(static_cast<int32_t>(f.bits)), q.getMin(),
        q.getMax(), q.getSeed(), q.getStep(), q.getRoleAttr(),
        q.getRoundingAttr(), q.getGranularityAttr(), q.getStreamAttr(),
        q.getWidthAttr());
    codes[i] = replayChain(b, loc, f.chain, quantize.getCodes());
    scales[i] = quantize.getScale();
    lows[i] = quantize.getLow();
    half[i] = int64_t(1) << (f.bits - 1);
    codeBits = std::max<int64_t>(codeBits, f.bits <= 8 ? 8 : 16);
  }

  // The four terms.
  llvm::SmallBitVector none(r.ranges.size());
  // The plain reference form collapses nothing.
  llvm::SmallBitVector privA =
      referenceSums ? none : r.privateLoops(0, factors[0]);
  llvm::SmallBitVector privW =
      referenceSums ? none : r.privateLoops(1, factors[1]);
  auto positions = [&](unsigned i, const llvm::SmallBitVector &loops) {
    return IntegerSums::positionsOf(maps[i], loops);
  };
  Value maskA = r.mask(0, factors[0], positions(0, privA));
  Value maskW = r.mask(1, factors[1], positions(1, privW));
  // Convolutions' main term runs as a GEMM on patches (not in the plain
  // reference form).
  auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation());
  // So do generic contractions that read windows (weight gradients).
  bool windows = llvm::any_of(
      maps, [](AffineMap map) { return !map.isProjectedPermutation(); });
  FailureOr<Term> t1 = failure();
  if (conv && !referenceSums) {
    // 8-bit VNNI codes (qtrain-microkernels picks bit-serial below 4 bit
    // products, which has no convolution form).
    bool implicit = factors[0].bits <= 8 && factors[1].bits <= 8 &&
                    factors[0].bits * factors[1].bits > 4;
    t1 = r.convAsGemm(conv, codes[0], codes[1], half[0] * half[1], implicit);
  } else if (windows && !referenceSums && isa<linalg::GenericOp>(op))
    t1 = r.windowsAsGemm(codes[0], codes[1], half[0] * half[1]);
  if (failed(t1))
    t1 = r.contract(codes[0], codes[1], none, half[0] * half[1]);
  FailureOr<Term> t2 =
      r.contract(codes[0], maskW, privW, half[0], 1, &factors[1]);
  FailureOr<Term> t3 =
      r.contract(maskA, codes[1], privA, half[1], 0, &factors[0]);
  FailureOr<Term> t4 = r.contract(
      maskA, maskW, llvm::SmallBitVector(privA) |= privW, 1, 0, &factors[0]);
  if (failed(t1) || failed(t2) || failed(t3) || failed(t4)) {
    op->emitError("qtrain-integer-kernels: the reduction is too long for "
                  "64-bit accumulation");
    return failure();
  }

  // The epilogue over the output: f64, in the documented order.
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  unsigned rank = resultType.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  auto termMap = [&](const Term &t) {
    SmallVector<AffineExpr> exprs;
    for (unsigned i = 0; i < rank; ++i)
      exprs.push_back(t.collapsed.test(i) ? getAffineConstantExpr(0, ctx)
                                          : getAffineDimExpr(i, ctx));
    return AffineMap::get(rank, 0, exprs, ctx);
  };
  Value init = op.getDpsInits()[0];
  SmallVector<Value> inputs = {init,      t1->value, t2->value,
                               t3->value, t4->value, scales[0],
                               lows[0],   scales[1], lows[1]};
  SmallVector<AffineMap> epilogueMaps = {id,
                                         termMap(*t1),
                                         termMap(*t2),
                                         termMap(*t3),
                                         termMap(*t4),
                                         statMap(ctx, rank, factors[0]),
                                         statMap(ctx, rank, factors[0]),
                                         statMap(ctx, rank, factors[1]),
                                         statMap(ctx, rank, factors[1]),
                                         id};
  Value empty = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                        resultType.getElementType());
  auto epilogue = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs, ValueRange{empty}, epilogueMaps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Type f64 = nb.getF64Type();
        auto ext = [&](Value v) {
          return isa<FloatType>(v.getType())
                     ? arith::ExtFOp::create(nb, nl, f64, v).getResult()
                     : arith::SIToFPOp::create(nb, nl, f64, v).getResult();
        };
        auto mul = [&](Value x, Value y) {
          return arith::MulFOp::create(nb, nl, x, y).getResult();
        };
        auto add = [&](Value x, Value y) {
          return arith::AddFOp::create(nb, nl, x, y).getResult();
        };
        auto constant = [&](double v) {
          return arith::ConstantOp::create(nb, nl, nb.getF64FloatAttr(v))
              .getResult();
        };
        Value sA = ext(a[5]), sW = ext(a[7]);
        // l' = l + h * s, exact in f64.
        Value lA = add(ext(a[6]), mul(constant(double(half[0])), sA));
        Value lW = add(ext(a[8]), mul(constant(double(half[1])), sW));
        Value sum = mul(mul(sA, sW), ext(a[1]));
        sum = add(sum, mul(mul(sA, lW), ext(a[2])));
        sum = add(sum, mul(mul(lA, sW), ext(a[3])));
        sum = add(sum, mul(mul(lA, lW), ext(a[4])));
        Value y = add(ext(a[0]), sum);
        linalg::YieldOp::create(
            nb, nl,
            arith::TruncFOp::create(nb, nl, nb.getF32Type(), y).getResult());
      });
  // The integer product keeps the product's tags, and tells the lowering
  // the widths of its codes (qtrain-microkernels picks a kernel by them).
  copyTags(op, t1->sum);
  int32_t first = int32_t(factors[0].bits), second = int32_t(factors[1].bits);
  if (t1->swapped)
    std::swap(first, second);
  ctx->getLoadedDialect<QTrainDialect>()->getCodeBitsAttrHelper().setAttr(
      t1->sum, DenseI32ArrayAttr::get(ctx, {first, second}));
  op->replaceAllUsesWith(epilogue->getResults());
  op->erase();
  // The factors may share their quantizer and chain (x * x): erase each op
  // once, users first.
  llvm::SetVector<Operation *> dead;
  for (Factor &f : factors) {
    for (Operation *chained : f.chain)
      dead.insert(chained);
    dead.insert(f.quant);
  }
  SmallVector<Operation *> order(dead.begin(), dead.end());
  llvm::sort(order,
             [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
  for (Operation *o : order)
    if (o->use_empty())
      o->erase();
  return Reason();
}

/// Makes a multiply-accumulate product accumulate in f64: y = f32(f64(init)
/// + sum of f64(x) * f64(w)).
static bool widenToF64(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isMultiplyAccumulate(op) ||
      !cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape())
    return false;
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Type f64 = b.getF64Type();
  Value zero = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0.0));
  Value empty = tensor::EmptyOp::create(b, loc, resultType.getShape(), f64);
  Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  auto sum = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, op.getDpsInputs(), ValueRange{init},
      op.getIndexingMapsArray(), op.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value x = arith::ExtFOp::create(nb, nl, f64, a[0]);
        Value w = arith::ExtFOp::create(nb, nl, f64, a[1]);
        Value p = arith::MulFOp::create(nb, nl, x, w);
        linalg::YieldOp::create(
            nb, nl, arith::AddFOp::create(nb, nl, a[2], p).getResult());
      });
  copyTags(op, sum);
  unsigned rank = resultType.getRank();
  // The sum is laid out like the output; the epilogue runs over it.
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  Value out = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                      resultType.getElementType());
  auto epilogue = linalg::GenericOp::create(
      b, loc, TypeRange{resultType},
      ValueRange{op.getDpsInits()[0], sum.getResult(0)}, ValueRange{out},
      ArrayRef<AffineMap>{id, id, id},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value y = arith::AddFOp::create(
            nb, nl, arith::ExtFOp::create(nb, nl, f64, a[0]), a[1]);
        linalg::YieldOp::create(
            nb, nl,
            arith::TruncFOp::create(nb, nl, nb.getF32Type(), y).getResult());
      });
  op->replaceAllUsesWith(epilogue->getResults());
  op->erase();
  return true;
}

void IntegerKernelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (inputGrad != "f32" && inputGrad != "bf16" && inputGrad != "int" &&
      inputGrad != "fp8") {
    module.emitError() << "qtrain-integer-kernels: input-grad must be f32, "
                          "bf16, int or fp8, got '"
                       << inputGrad << "'";
    return signalPassFailure();
  }
  std::set<std::pair<int64_t, std::string>> reported;
  QTrainDialect::VariantAttrHelper variantAttr =
      getContext().getLoadedDialect<QTrainDialect>()->getVariantAttrHelper();
  for (auto fn : module.getOps<func::FuncOp>()) {
    VariantAttr variant = variantAttr.getAttr(fn);
    // Variants already specialized (they carry `kernel`) stay as they are.
    if (!variant || variant.getKernel())
      continue;
    SmallVector<linalg::LinalgOp> products;
    fn.walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(kProductAttrName))
        products.push_back(op);
    });
    int64_t codeBits = 0;
    bool anyFloat = false, anyBF16 = false;
    // The input gradients input-grad applies to.
    bool lowInputGrad = inputGrad != "f32" &&
                        variant.getProduct() == ProductKind::InputGrad &&
                        variant.getBits() != 0 && variant.getGradBits() != 0;
    if (f64Reference) {
      for (linalg::LinalgOp op : products) {
        if (!widenToF64(op)) {
          op->emitError("qtrain-integer-kernels: f64-reference: the product "
                        "is not a multiply-accumulate of two operands with a "
                        "static shape");
          return signalPassFailure();
        }
      }
      variantAttr.setAttr(fn, variant.withKernel(KernelKind::F64));
      continue;
    }
    for (linalg::LinalgOp op : products) {
      auto site = op->getAttrOfType<IntegerAttr>(kLayerAttrName);
      auto product = op->getAttrOfType<StringAttr>(kProductAttrName);
      if (lowInputGrad && inputGrad == "int" && isMultiplyAccumulate(op))
        if (linalg::LinalgOp folded = foldWeightScales(op))
          op = folded;
      // input-grad=fp8: the folded product of a float error and the
      // weight's codes stays an f32 product here (exact operands: the
      // reference for the GPU's fp8 and bf16 kernels).
      if (lowInputGrad && inputGrad == "fp8" && isMultiplyAccumulate(op) &&
          foldWeightScales(op, ErrorGrid::ScaledFloat)) {
        ++numFloat;
        anyFloat = true;
        continue;
      }
      FailureOr<Reason> reason = rewrite(op, codeBits);
      if (failed(reason))
        return signalPassFailure();
      if (!*reason) {
        ++numInteger;
        continue;
      }
      if (lowInputGrad && inputGrad == "bf16" && isMultiplyAccumulate(op)) {
        roundOperandsToBF16(op);
        anyBF16 = true;
        continue;
      }
      ++numFloat;
      anyFloat = true;
      // The full-precision variant is f32 by design.
      if (variant.getBits() == 0)
        continue;
      if (site && product &&
          reported.insert({site.getInt(), product.getValue().str()}).second)
        remark::missed(op.getLoc(), remark::RemarkOpts::name("stays-f32")
                                        .category(getArgument())
                                        .function(fn.getSymName()))
            << ("site " + Twine(site.getInt()) + " " + product.getValue() +
                " stays f32: " + **reason)
                   .str();
    }
    // input-grad=int quantizes the scaled error for the product and for
    // the zero-point term alike: one quantization.
    if (lowInputGrad && inputGrad == "int") {
      IRRewriter rewriter(&getContext());
      DominanceInfo dominance(fn);
      eliminateCommonSubExpressions(rewriter, dominance, fn);
    }
    KernelKind kernel = anyFloat        ? KernelKind::F32
                        : anyBF16       ? KernelKind::BF16
                        : codeBits == 0 ? KernelKind::F32
                        : codeBits == 8 ? KernelKind::I8
                                        : KernelKind::I16;
    variantAttr.setAttr(fn, variant.withKernel(kernel));
  }
}
