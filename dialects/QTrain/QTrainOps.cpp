//===- QTrainOps.cpp - qtrain operations ------------------------*- C++ -*-===//
//
// Verifiers and folders of the qtrain operations.
//
//===----------------------------------------------------------------------===//

#include "QTrain/QTrainOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>
#include <cstdint>

using namespace mlir;
using namespace mlir::qtrain;

#define GET_OP_CLASSES
#include "QTrain/QTrainOps.cpp.inc"

/// Widest integer grid a fake_quant accepts; 0 means full precision.
static constexpr int64_t kMaxFakeQuantBits = 16;

//===----------------------------------------------------------------------===//
// FakeQuantOp
//===----------------------------------------------------------------------===//

std::optional<int64_t> FakeQuantOp::getConstantBits() {
  APInt bits;
  if (!matchPattern(getBits(), m_ConstantInt(&bits)))
    return std::nullopt;
  return bits.getSExtValue();
}

/// Checks what fake_quant and grad_quant share: a constant bitwidth in
/// range, and a seed exactly when rounding is stochastic.
static LogicalResult verifyQuantizer(Operation *op, Value bitsValue,
                                     Rounding rounding, bool hasSeed,
                                     bool hasStep) {
  APInt bits;
  if (matchPattern(bitsValue, m_ConstantInt(&bits)) &&
      (bits.getSExtValue() < 0 || bits.getSExtValue() > kMaxFakeQuantBits))
    return op->emitOpError("bits must be in [0, ")
           << kMaxFakeQuantBits << "] (0 = full precision), got "
           << bits.getSExtValue();
  if (hasSeed != hasStep)
    return op->emitOpError("seed and step go together");
  bool stochastic = rounding == Rounding::Stochastic;
  if (stochastic && !hasSeed)
    return op->emitOpError("stochastic rounding requires a seed");
  if (!stochastic && hasSeed)
    return op->emitOpError("a seed is only used by stochastic rounding");
  return success();
}

/// Checks the channel axis against the input's rank, and that an explicit
/// range has the shape of the statistics it replaces.
static LogicalResult verifyGranularityAndRange(Operation *op, Value input,
                                               GranularityAttr granularity,
                                               Value min, Value max,
                                               bool width) {
  if (bool(min) != bool(max))
    return op->emitOpError("a range needs both min and max");
  if (width && !min)
    return op->emitOpError("'width' needs an explicit range(%min, %width)");
  auto inputType = cast<RankedTensorType>(input.getType());
  if (granularity.isPerChannel() &&
      *granularity.getAxis() >= inputType.getRank())
    return op->emitOpError("channel axis ")
           << *granularity.getAxis() << " is out of range for a tensor of rank "
           << inputType.getRank();

  if (!min)
    return success();
  for (Value bound : {min, max}) {
    Type type = bound.getType();
    if (!granularity.isPerChannel()) {
      if (!type.isF32())
        return op->emitOpError("a per-tensor range must be f32 scalars, got ")
               << type;
      continue;
    }
    auto rangeType = dyn_cast<RankedTensorType>(type);
    if (!rangeType)
      return op->emitOpError("a per-channel range must be 1-D tensors, got ")
             << type;
    int64_t channels = inputType.getDimSize(*granularity.getAxis());
    int64_t entries = rangeType.getDimSize(0);
    if (!ShapedType::isDynamic(channels) && !ShapedType::isDynamic(entries) &&
        channels != entries)
      return op->emitOpError("a per-channel range needs one entry per "
                             "channel (")
             << channels << "), got " << entries;
  }
  return success();
}

LogicalResult FakeQuantOp::verify() {
  if (failed(verifyQuantizer(*this, getBits(), getRounding(), bool(getSeed()),
                             bool(getStep()))))
    return failure();

  return verifyGranularityAndRange(*this, getInput(), getGranularity(),
                                   getMin(), getMax(), getWidth());
}

OpFoldResult FakeQuantOp::fold(FoldAdaptor adaptor) {
  // Zero bits is full precision: the op returns its input exactly.
  if (auto bits = dyn_cast_if_present<IntegerAttr>(adaptor.getBits());
      bits && bits.getValue().isZero())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  if (bool(getSeed()) != bool(getStep()))
    return emitOpError("seed and step go together");
  bool stochastic = getRounding() == Rounding::Stochastic;
  if (stochastic != bool(getSeed()))
    return emitOpError(stochastic ? "stochastic rounding requires a seed"
                                  : "a seed is only used by stochastic "
                                    "rounding");
  if (failed(verifyGranularityAndRange(*this, getInput(), getGranularity(),
                                       getMin(), getMax(), getWidth())))
    return failure();
  auto inputType = cast<RankedTensorType>(getInput().getType());
  auto codesType = getCodes().getType();
  int64_t bits = getBits();
  Type codeType = getCodeType(getContext(), bits);
  if (codesType.getShape() != inputType.getShape() ||
      codesType.getElementType() != codeType)
    return emitOpError("codes of a ")
           << bits << "-bit grid must be "
           << RankedTensorType::get(inputType.getShape(), codeType) << ", got "
           << codesType;
  SmallVector<int64_t> statShape;
  if (std::optional<int64_t> axis = getGranularity().getAxis())
    statShape.push_back(inputType.getDimSize(*axis));
  auto statType =
      RankedTensorType::get(statShape, Float32Type::get(getContext()));
  if (getScale().getType() != statType)
    return emitOpError("scale and low must be ")
           << statType << " for this granularity, got " << getScale().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// GradQuantOp
//===----------------------------------------------------------------------===//

LogicalResult GradQuantOp::verify() {
  return verifyQuantizer(*this, getBits(), getRounding(), bool(getSeed()),
                         bool(getStep()));
}

//===----------------------------------------------------------------------===//
// RangeEmaOp
//===----------------------------------------------------------------------===//

LogicalResult RangeEmaOp::verify() {
  if (getState().getType() != getStateType(getContext()) ||
      getResult().getType() != getStateType(getContext()))
    return emitOpError("state must be tensor<2xf32> ([min, range]), got ")
           << getState().getType();
  double m = getMomentum().convertToDouble();
  if (!(m >= 0.0 && m < 1.0))
    return emitOpError("momentum must be in [0, 1), got ") << m;
  return success();
}

//===----------------------------------------------------------------------===//
// RunningStatOp
//===----------------------------------------------------------------------===//

LogicalResult RunningStatOp::verify() {
  double m = getMomentum().convertToDouble();
  if (!(m > 0.0 && m <= 1.0))
    return emitOpError("momentum must be in (0, 1], got ") << m;
  double c = getCorrection().convertToDouble();
  if (!(c >= 1.0 && std::isfinite(c)))
    return emitOpError("correction must be finite and at least 1, got ") << c;
  return success();
}

//===----------------------------------------------------------------------===//
// DropoutOp
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::verify() {
  double p = getP().convertToDouble();
  if (!(p >= 0.0 && p < 1.0))
    return emitOpError("p must be in [0, 1), got ") << p;
  int64_t stream = getStream();
  if (stream < 0 || stream > int64_t(UINT32_MAX))
    return emitOpError("stream must be a 32-bit unsigned id, got ") << stream;
  return success();
}

//===----------------------------------------------------------------------===//
// LearnedBitsOp
//===----------------------------------------------------------------------===//

LogicalResult LearnedBitsOp::verify() {
  int32_t lo = getMinBits(), hi = getMaxBits();
  if (lo < 1 || lo > hi || hi > 16)
    return emitOpError("needs 1 <= min <= max <= 16, got ")
           << lo << " to " << hi;
  return success();
}

//===----------------------------------------------------------------------===//
// RoundFloatOp
//===----------------------------------------------------------------------===//

/// Checks the formats and types of encode_float / decode_float: `floats` is
/// the f32 side, `codes` the integer side.
static LogicalResult verifyCodec(Operation *op, Type floats, Type codes,
                                 FloatFormatAttr format, Value promoted,
                                 FloatFormatAttr promotedFormat) {
  if (bool(promoted) != bool(promotedFormat))
    return op->emitOpError("a promoted format and its flag come together");
  auto f = cast<RankedTensorType>(floats);
  auto c = cast<RankedTensorType>(codes);
  if (f.getShape() != c.getShape())
    return op->emitOpError("codes and values must have the same shape, got ")
           << codes << " and " << floats;
  unsigned width = c.getElementTypeBitWidth();
  for (FloatFormatAttr fmt : {format, promotedFormat}) {
    if (!fmt)
      continue;
    if (fmt.getExponent() >= 8)
      return op->emitOpError("cannot encode ")
             << fmt << ": 8 exponent bits reserve inf/NaN codes";
    if (!fmt.getSaturate())
      return op->emitOpError("cannot encode ")
             << fmt
             << ": without saturation it produces inf, which has no code";
    if (fmt.getWidth() > width)
      return op->emitOpError() << fmt << " needs " << fmt.getWidth()
                               << " bits, more than " << codes;
  }
  return success();
}

LogicalResult EncodeFloatOp::verify() {
  return verifyCodec(*this, getInput().getType(), getResult().getType(),
                     getFormat(), getPromoted(), getPromotedFormatAttr());
}

LogicalResult DecodeFloatOp::verify() {
  return verifyCodec(*this, getResult().getType(), getInput().getType(),
                     getFormat(), getPromoted(), getPromotedFormatAttr());
}

/// Checks the `scaled(M)` of a rounding: M a positive normal value of
/// `format`.
static LogicalResult verifyScaledMax(Operation *op, FloatFormatAttr format,
                                     FloatAttr scaledMax) {
  if (!scaledMax)
    return success();
  double m = scaledMax.getValueAsDouble();
  int exponent = 0;
  double fraction = std::isfinite(m) && m > 0 ? std::frexp(m, &exponent) : 0;
  // m = fraction * 2^exponent, fraction in [0.5, 1): a value of the format
  // when its unbiased exponent (exponent - 1) lies in the normal binades
  // and its significand has at most `mantissa` bits after the point.
  double significand = std::ldexp(fraction, format.getMantissa() + 1);
  if (fraction == 0 || exponent - 1 < format.getMinNormalExponent() ||
      exponent - 1 > format.getMaxExponent() ||
      significand != std::floor(significand))
    return op->emitOpError("scaled(")
           << m << ") must be a positive normal value of " << format;
  return success();
}

LogicalResult RoundFloatOp::verify() {
  if (bool(getPromoted()) != bool(getPromotedFormat()))
    return emitOpError("a promoted format and its flag come together");
  if (getScaledMaxAttr() && getPromoted())
    return emitOpError("a scaled rounding cannot be promoted");
  return verifyScaledMax(*this, getFormat(), getScaledMaxAttr());
}

LogicalResult GradRoundFloatOp::verify() {
  return verifyScaledMax(*this, getFormat(), getScaledMaxAttr());
}

OpFoldResult RoundFloatOp::fold(FoldAdaptor adaptor) {
  FloatFormatAttr format = getFormat();
  if (getPromoted())
    return {};
  // Rounding a value of the format to the format returns it unchanged.
  if (auto producer = getInput().getDefiningOp<RoundFloatOp>();
      producer && !producer.getPromoted() && producer.getFormat() == format &&
      producer.getScaledMaxAttr() == getScaledMaxAttr())
    return getInput();
  // FP(8, 23, 0) is f32: without saturation every f32 value, inf included,
  // is already in the format.
  if (format.getExponent() == 8 && format.getMantissa() == 23 &&
      format.getBias() == 0 && !format.getSaturate() && !getScaledMaxAttr())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

Operation *KernelOp::getProductOp() {
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  if (yield.getNumOperands() != 1)
    return nullptr;
  return yield.getValues()[0].getDefiningOp();
}

LogicalResult KernelOp::verify() {
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ")
           << yield.getValues().getTypes() << " but its results are "
           << getResultTypes();
  Operation *product = getProductOp();
  if (getNumResults() != 1 || !product ||
      product->getParentRegion() != &getBody() ||
      !isa<linalg::LinalgOp>(product))
    return emitOpError("must yield one result of a linalg op in its body "
                       "(the product)");
  if (!symbolizeProductKind(getProduct()))
    return emitOpError("product must be forward, input_grad or weight_grad, "
                       "got '")
           << getProduct() << "'";
  if (getSite() < 0)
    return emitOpError("site must be non-negative, got ") << getSite();
  return success();
}
