//===- QTrainAttrs.cpp - qtrain attributes and enums ------------*- C++ -*-===//
//
// Verifiers and custom syntax of the qtrain attributes.
//
//===----------------------------------------------------------------------===//

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::qtrain;

#include "QTrain/QTrainEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "QTrain/QTrainAttrs.cpp.inc"

void QTrainDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "QTrain/QTrainAttrs.cpp.inc"
      >();
}

bool mlir::qtrain::isScheduleAttr(Attribute attr) {
  return isa<CyclicScheduleAttr, StaticScheduleAttr, LearnedScheduleAttr>(attr);
}

/// Largest bitwidth of an integer grid: 16-bit operands are the widest integer
/// kernels qtrain emits.
static constexpr unsigned kMaxGridBits = 16;

//===----------------------------------------------------------------------===//
// GranularityAttr
//===----------------------------------------------------------------------===//

LogicalResult
GranularityAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        GranularityKind kind, std::optional<int64_t> axis) {
  if (kind == GranularityKind::PerTensor && axis)
    return emitError() << "per_tensor granularity takes no axis";
  if (kind == GranularityKind::PerChannel && !axis)
    return emitError() << "per_channel granularity requires an axis";
  if (axis && *axis < 0)
    return emitError() << "channel axis must be non-negative, got " << *axis;
  return success();
}

//===----------------------------------------------------------------------===//
// IntGridAttr
//===----------------------------------------------------------------------===//

LogicalResult IntGridAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  unsigned bits) {
  if (bits < 1 || bits > kMaxGridBits)
    return emitError() << "integer grid bitwidth must be in [1, "
                       << kMaxGridBits << "], got " << bits;
  return success();
}

//===----------------------------------------------------------------------===//
// FloatFormatAttr
//===----------------------------------------------------------------------===//

// f32's exponent range: every value of a format must be an f32 value.
static constexpr int kF32MaxExponent = 127;
static constexpr int kF32MinSubnormalExponent = -149;

int FloatFormatAttr::getMaxExponent() const {
  // With e < 8 the top exponent field holds finite values; with e = 8 it is
  // reserved for inf/NaN as in IEEE.
  unsigned topField = (1u << getExponent()) - (getExponent() < 8 ? 1 : 2);
  return int(topField) - getFullBias();
}

LogicalResult
FloatFormatAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        unsigned exponent, unsigned mantissa, int bias,
                        bool saturate) {
  if (exponent < 1 || exponent > 8)
    return emitError() << "exponent bits must be in [1, 8], got " << exponent;
  if (mantissa > 23)
    return emitError() << "mantissa bits must be in [0, 23], got " << mantissa;
  int fullBias = (1 << (exponent - 1)) - 1 + bias;
  unsigned topField = (1u << exponent) - (exponent < 8 ? 1 : 2);
  int maxExponent = int(topField) - fullBias;
  int minSubnormalExponent = 1 - fullBias - int(mantissa);
  if (maxExponent > kF32MaxExponent ||
      minSubnormalExponent < kF32MinSubnormalExponent)
    return emitError() << "format with " << exponent << " exponent bits and "
                       << "bias " << bias << " spans 2^" << minSubnormalExponent
                       << " to 2^" << maxExponent
                       << ", outside the range of f32 (2^-149 to 2^127)";
  return success();
}

/// Syntax: `<` e `,` m `,` bias (`,` `saturate`)? `>`.
Attribute FloatFormatAttr::parse(AsmParser &parser, Type) {
  unsigned exponent = 0, mantissa = 0;
  int bias = 0;
  bool saturate = false;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseInteger(exponent) ||
      parser.parseComma() || parser.parseInteger(mantissa) ||
      parser.parseComma() || parser.parseInteger(bias))
    return {};
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("saturate"))
      return {};
    saturate = true;
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<FloatFormatAttr>(loc, parser.getContext(), exponent,
                                            mantissa, bias, saturate);
}

void FloatFormatAttr::print(AsmPrinter &printer) const {
  printer << '<' << getExponent() << ", " << getMantissa() << ", " << getBias();
  if (getSaturate())
    printer << ", saturate";
  printer << '>';
}

//===----------------------------------------------------------------------===//
// VariantAttr
//===----------------------------------------------------------------------===//

/// Widest codes of an i8 kernel.
static constexpr unsigned kMaxI8CodeBits = 8;

LogicalResult VariantAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t site, ProductKind product,
                                  unsigned bits, unsigned gradBits,
                                  std::optional<KernelKind> kernel) {
  if (site < 0)
    return emitError() << "variant site must be non-negative, got " << site;
  if (bits > kMaxGridBits || gradBits > kMaxGridBits)
    return emitError() << "variant bits must be in [0, " << kMaxGridBits
                       << "] (0 = fp32), got bits = " << bits
                       << ", grad_bits = " << gradBits;
  // A forward product reads no error, so one variant serves every
  // backward precision.
  if (product == ProductKind::Forward && gradBits != 0)
    return emitError() << "a forward variant has grad_bits = 0, got "
                       << gradBits;
  if (kernel != KernelKind::I8 && kernel != KernelKind::I16)
    return success();
  if (bits == 0)
    return emitError() << "the full-precision variant has no "
                       << stringifyKernelKind(*kernel) << " kernel";
  if (kernel == KernelKind::I8 &&
      (bits > kMaxI8CodeBits || gradBits > kMaxI8CodeBits))
    return emitError() << "an i8 kernel takes codes of at most "
                       << kMaxI8CodeBits << " bits, got bits = " << bits
                       << ", grad_bits = " << gradBits;
  return success();
}

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

/// Checks the bounds shared by every schedule.
static LogicalResult
verifyBitRange(function_ref<InFlightDiagnostic()> emitError, unsigned min,
               unsigned max) {
  if (min < 1 || max > kMaxGridBits)
    return emitError() << "schedule bits must be in [1, " << kMaxGridBits
                       << "], got min = " << min << ", max = " << max;
  if (min > max)
    return emitError() << "schedule min (" << min << ") exceeds max (" << max
                       << ")";
  return success();
}

LogicalResult
CyclicScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           ShapeKind shape, CycleMode mode, Flip flip,
                           unsigned min, unsigned max, unsigned cycles,
                           PeriodConvention period) {
  if (failed(verifyBitRange(emitError, min, max)))
    return failure();
  if (cycles < 1)
    return emitError() << "a cyclic schedule needs at least one cycle";
  bool mirrored = shape == ShapeKind::Exponential || shape == ShapeKind::Rex;
  bool triangular = mode == CycleMode::Triangular;
  if (mirrored && triangular && flip == Flip::None)
    return emitError() << "triangular " << stringifyShapeKind(shape)
                       << " schedules need flip = vertical or horizontal";
  if ((!mirrored || !triangular) && flip != Flip::None)
    return emitError() << "flip applies only to triangular exponential and "
                          "rex schedules";
  return success();
}

LogicalResult
StaticScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           unsigned bits) {
  if (bits > kMaxGridBits)
    return emitError() << "static precision must be in [1, " << kMaxGridBits
                       << "] bits or fp32, got " << bits;
  return success();
}

/// Syntax: `<` (integer | `fp32`) `>`.
Attribute StaticScheduleAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  unsigned bits = 0;
  if (failed(parser.parseOptionalKeyword("fp32"))) {
    SMLoc bitsLoc = parser.getCurrentLocation();
    if (parser.parseInteger(bits))
      return {};
    if (bits == 0) {
      parser.emitError(bitsLoc, "write full precision as 'fp32', not 0 bits");
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<StaticScheduleAttr>(loc, parser.getContext(), bits);
}

void StaticScheduleAttr::print(AsmPrinter &printer) const {
  printer << '<';
  if (isFullPrecision())
    printer << "fp32";
  else
    printer << getBits();
  printer << '>';
}

LogicalResult
LearnedScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            unsigned min, unsigned max) {
  return verifyBitRange(emitError, min, max);
}
