//===- FloatFormats.cpp - Reduced float formats as linalg -------*- C++ -*-===//
//
// qtrain.round_float, encode_float, decode_float and count_overflow as
// linalg on tensors, bit for bit as runtime/include/qtrain/runtime/
// FloatFormat.h, in integer and f32 arithmetic that LLVM vectorizes.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Conversion/FloatFormatArith.h"

#include "Lowerings.h"

#include "qtrain/runtime/FloatFormat.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cstring>

using namespace mlir;
using namespace mlir::qtrain;
using namespace mlir::qtrain::tolinalg;

/// The runtime's description of `format` (its derived values).
static ::qtrain::rt::FloatFormat toRuntime(FloatFormatAttr format) {
  return {int(format.getExponent()), int(format.getMantissa()),
          format.getBias()};
}

/// Rounds an f32 value to `format`, bit for bit as roundToFormat of
/// runtime/include/qtrain/runtime/FloatFormat.h, in integer and f32
/// arithmetic that LLVM vectorizes. With a = |x| and E its unbiased
/// exponent:
///  * E >= the format's smallest normal exponent: round the f32 significand
///    to m bits, half to even, on the bits (a carry into the exponent field
///    is the next binade, as it should be);
///  * below it (subnormals of the format, f32 subnormals, zero): the quantum
///    is the fixed 2^(Emin - m); (a + C) - C with C = 2^(Emin - m + 23)
///    rounds a to a multiple of it, half to even, since a < C and C's ulp
///    is the quantum (f32 addition rounds to nearest even);
///  * a result beyond the largest finite value, inf included, becomes
///    +-maxFinite (saturate) or +-inf; NaN stays the same NaN; the sign is
///    x's (zero keeps it).
Value mlir::qtrain::buildRoundToFormat(OpBuilder &b, Location loc, Value x,
                                       FloatFormatAttr format) {
  Scalar s{b, loc};
  Type i32 = b.getI32Type();
  auto i32c = [&](int64_t v) { return s.i32(uint32_t(v)); };
  auto band = [&](Value v, int64_t mask) {
    return arith::AndIOp::create(b, loc, v, i32c(mask)).getResult();
  };
  int m = format.getMantissa();
  int minExponent = format.getMinNormalExponent();
  // The largest finite value, exact in f32 (m + 1 <= 24 bits).
  uint32_t maxFiniteBits, infBits = 0x7F800000u;
  float maxFiniteF = float(toRuntime(format).maxFinite());
  std::memcpy(&maxFiniteBits, &maxFiniteF, 4);

  Value bits = arith::BitcastOp::create(b, loc, i32, x);
  Value absBits = band(bits, 0x7FFFFFFF);
  Value sign = band(bits, int64_t(0x80000000u));
  // The normal range: round the low 23 - m bits away, half to even.
  Value normal = absBits;
  if (m < 23) {
    int shift = 23 - m;
    // Ties go to the even mantissa; with no mantissa bits (m = 0) every
    // normal significand is 1 and a tie goes up (the reference's "even
    // multiple of the lower binade's quantum").
    Value lsb = m == 0
                    ? i32c(1)
                    : band(arith::ShRUIOp::create(b, loc, absBits, i32c(shift))
                               .getResult(),
                           1);
    Value biased = arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, absBits, i32c((1 << (shift - 1)) - 1)),
        lsb);
    normal = band(biased, ~((int64_t(1) << shift) - 1) & 0xFFFFFFFF);
  }
  // Below the smallest normal: a fixed quantum.
  Value a = arith::BitcastOp::create(b, loc, b.getF32Type(), absBits);
  Value magic = s.f32(std::ldexp(1.0, minExponent - m + 23));
  Value sub = arith::SubFOp::create(
      b, loc, arith::AddFOp::create(b, loc, a, magic), magic);
  Value subBits = arith::BitcastOp::create(b, loc, i32, sub);
  // E < Emin, as a comparison of the exponent fields.
  Value isSub =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, absBits,
                            i32c(int64_t(minExponent + 127) << 23));
  Value rounded = s.select(isSub, subBits, normal);
  Value overflow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                         rounded, i32c(maxFiniteBits));
  Value saturated = i32c(format.getSaturate() ? maxFiniteBits : infBits);
  Value magnitude = s.select(overflow, saturated, rounded);
  Value result = arith::OrIOp::create(b, loc, magnitude, sign);
  Value isNan = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                      absBits, i32c(infBits));
  return arith::BitcastOp::create(b, loc, b.getF32Type(),
                                  s.select(isNan, bits, result));
}

Value mlir::qtrain::buildScaledExponent(OpBuilder &b, Location loc, Value amax,
                                        float scaledMax) {
  Scalar s{b, loc};
  uint32_t mBits;
  std::memcpy(&mBits, &scaledMax, 4);
  Value a = arith::BitcastOp::create(b, loc, b.getI32Type(), amax);
  Value field = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, a, s.i32(23)), s.i32(0xFF));
  Value carry = arith::ExtUIOp::create(
      b, loc, b.getI32Type(),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                            arith::AndIOp::create(b, loc, a, s.i32(0x7FFFFF)),
                            s.i32(mBits & 0x7FFFFF)));
  Value k = arith::AddIOp::create(
      b, loc, arith::SubIOp::create(b, loc, field, s.i32((mBits >> 23) & 0xFF)),
      carry);
  return arith::MaxSIOp::create(b, loc,
                                arith::MinSIOp::create(b, loc, k, s.i32(100)),
                                s.i32(uint32_t(-100)));
}

Value mlir::qtrain::buildPowerOfTwo(OpBuilder &b, Location loc, Value k) {
  Scalar s{b, loc};
  Value bits = arith::ShLIOp::create(
      b, loc, arith::AddIOp::create(b, loc, k, s.i32(127)), s.i32(23));
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

namespace {

/// `input` rounded to `format`, elementwise; with `promoted` (an i1), to
/// `promotedFormat` where it is true. Both roundings are compiled into the
/// one loop and the flag selects: no region branch, so the result is one
/// buffer that buffer deallocation can free like any other.
static Value buildRounding(OpBuilder &b, Location loc, Value input,
                           FloatFormatAttr format, Value promoted = nullptr,
                           FloatFormatAttr promotedFormat = nullptr) {
  auto type = cast<RankedTensorType>(input.getType());
  unsigned rank = type.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{input}, ValueRange{init},
      ArrayRef<AffineMap>{id, id},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value result = buildRoundToFormat(nb, nl, args[0], format);
        if (promoted)
          result = arith::SelectOp::create(
              nb, nl, promoted,
              buildRoundToFormat(nb, nl, args[0], promotedFormat), result);
        linalg::YieldOp::create(nb, nl, result);
      });
  return generic.getResult(0);
}

/// `input` rounded to `format` with `scaled(M)`, bit for bit as
/// roundScaled of runtime/include/qtrain/runtime/FloatFormat.h: the
/// largest magnitude (a vectorized reduction, NaN propagating), then one
/// elementwise loop that derives k from its fields (a few integer ops per
/// element, so no scalar stage of its own: on the GPU no launch of one
/// thread) and rounds x * 2^-k, times 2^k.
static Value buildScaledRounding(OpBuilder &b, Location loc, Value input,
                                 FloatFormatAttr format, FloatAttr scaledMax) {
  auto type = cast<RankedTensorType>(input.getType());
  unsigned rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  Value amax = reduceElements(
      b, loc, input, std::nullopt, {b.getF32FloatAttr(0.0f)},
      [](OpBuilder &nb, Location nl, Value x, ValueRange acc) {
        Value a = math::AbsFOp::create(nb, nl, x);
        return SmallVector<Value>{
            arith::MaximumFOp::create(nb, nl, acc[0], a).getResult()};
      },
      [](OpBuilder &nb, Location nl, ValueRange x, ValueRange y) {
        return SmallVector<Value>{
            arith::MaximumFOp::create(nb, nl, x[0], y[0]).getResult()};
      })[0];
  float m = float(scaledMax.getValueAsDouble());
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap scalar = AffineMap::get(rank, 0, {}, ctx);
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{input, amax}, ValueRange{init},
      ArrayRef<AffineMap>{id, scalar, id},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value k = buildScaledExponent(nb, nl, args[1], m);
        Value down = buildPowerOfTwo(
            nb, nl, arith::SubIOp::create(nb, nl, Scalar{nb, nl}.i32(0), k));
        Value scaled = arith::MulFOp::create(nb, nl, args[0], down);
        Value rounded = buildRoundToFormat(nb, nl, scaled, format);
        linalg::YieldOp::create(
            nb, nl,
            arith::MulFOp::create(nb, nl, rounded, buildPowerOfTwo(nb, nl, k))
                .getResult());
      });
  return generic.getResult(0);
}

struct RoundFloatLowering : OpConversionPattern<RoundFloatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(RoundFloatOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto type = cast<RankedTensorType>(adaptor.getInput().getType());
    if (!type.hasStaticShape())
      return b.notifyMatchFailure(op, "dynamic shapes");
    FloatFormatAttr format = op.getFormat();
    if (!isLowerable(format) || !isLowerable(op.getPromotedFormatAttr()))
      return b.notifyMatchFailure(op, "normal range below fp32's");
    if (FloatAttr scaledMax = op.getScaledMaxAttr()) {
      b.replaceOp(op, buildScaledRounding(b, op.getLoc(), adaptor.getInput(),
                                          format, scaledMax));
      return success();
    }
    b.replaceOp(op, buildRounding(b, op.getLoc(), adaptor.getInput(), format,
                                  adaptor.getPromoted(),
                                  op.getPromotedFormatAttr()));
    return success();
  }
};

} // namespace

/// The code (in an i32) of `x`, a value of `format` (e < 8) or NaN: sign,
/// exponent field, mantissa. NaN takes the largest finite magnitude.
Value mlir::qtrain::buildEncodeFloat(OpBuilder &b, Location loc, Value x,
                                     FloatFormatAttr format) {
  Scalar s{b, loc};
  auto c = [&](int64_t v) { return s.i32(uint32_t(v)); };
  auto op2 = [&](auto tag, Value l, Value r) {
    return decltype(tag)::create(b, loc, l, r).getResult();
  };
  using And = arith::AndIOp;
  using Or = arith::OrIOp;
  using Shl = arith::ShLIOp;
  using Shr = arith::ShRUIOp;
  int e = format.getExponent(), m = format.getMantissa();
  int fullBias = format.getFullBias(),
      minExponent = format.getMinNormalExponent();
  int64_t mantissaMask = (int64_t(1) << m) - 1;
  int64_t maxCode = (((int64_t(1) << e) - 1) << m) | mantissaMask;
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), x);
  Value sign = op2(Shr{}, bits, c(31));
  Value a = op2(And{}, bits, c(0x7FFFFFFF));
  Value e32 = op2(Shr{}, a, c(23));
  // Normal in the format: rebias the exponent, keep the top m bits.
  Value normal = op2(
      Or{},
      op2(Shl{}, arith::AddIOp::create(b, loc, e32, c(fullBias - 127)), c(m)),
      op2(And{}, op2(Shr{}, a, c(23 - m)), c(mantissaMask)));
  // Below the smallest normal: value = S * 2^Eeff, code = S >> shift with
  // shift = (Emin - m) - Eeff, exact for a value of the format.
  Value isF32Sub =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, e32, c(0));
  Value f = op2(And{}, a, c(0x7FFFFF));
  Value significand = s.select(isF32Sub, f, op2(Or{}, f, c(1 << 23)));
  Value eEff =
      s.select(isF32Sub, c(-149), arith::SubIOp::create(b, loc, e32, c(150)));
  Value shift = arith::SubIOp::create(b, loc, c(minExponent - m), eEff);
  // In [0, 31]: the select below discards other lanes, but a shift out of
  // range would be poison.
  shift = arith::MaxSIOp::create(
      b, loc, arith::MinSIOp::create(b, loc, shift, c(31)), c(0));
  Value sub = op2(Shr{}, significand, shift);
  Value isSub = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, a,
                                      c(int64_t(minExponent + 127) << 23));
  Value magnitude = s.select(isSub, sub, normal);
  Value isNan = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, a,
                                      c(0x7F800000));
  magnitude = s.select(isNan, c(maxCode), magnitude);
  return op2(Or{}, op2(Shl{}, sign, c(e + m)), magnitude);
}

/// The f32 value of `code` (an i32 holding a code of `format`).
Value mlir::qtrain::buildDecodeFloat(OpBuilder &b, Location loc, Value code,
                                     FloatFormatAttr format) {
  Scalar s{b, loc};
  auto c = [&](int64_t v) { return s.i32(uint32_t(v)); };
  int e = format.getExponent(), m = format.getMantissa();
  int fullBias = format.getFullBias(),
      minExponent = format.getMinNormalExponent();
  Value sign = arith::ShLIOp::create(
      b, loc,
      arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, code, c(e + m)), c(1)),
      c(31));
  Value field = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, code, c(m)), c((1 << e) - 1));
  Value mantissa = arith::AndIOp::create(b, loc, code, c((1 << m) - 1));
  Value normal = arith::OrIOp::create(
      b, loc,
      arith::ShLIOp::create(
          b, loc, arith::AddIOp::create(b, loc, field, c(127 - fullBias)),
          c(23)),
      arith::ShLIOp::create(b, loc, mantissa, c(23 - m)));
  // Subnormal codes: mantissa * 2^(Emin - m), exact in f32.
  Value scaled = arith::MulFOp::create(
      b, loc, arith::SIToFPOp::create(b, loc, b.getF32Type(), mantissa),
      s.f32(std::ldexp(1.0, minExponent - m)));
  Value sub = arith::BitcastOp::create(b, loc, b.getI32Type(), scaled);
  Value isSub =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, field, c(0));
  Value magnitude = s.select(isSub, sub, normal);
  return arith::BitcastOp::create(
      b, loc, b.getF32Type(), arith::OrIOp::create(b, loc, magnitude, sign));
}

namespace {

/// encode_float and decode_float: one elementwise generic; with a promoted
/// format both codecs are compiled and the flag selects.
template <typename OpTy, bool Encode>
struct CodecLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    auto outType = cast<RankedTensorType>(op.getResult().getType());
    if (!inType.hasStaticShape())
      return b.notifyMatchFailure(op, "dynamic shapes");
    for (FloatFormatAttr f : {op.getFormat(), op.getPromotedFormatAttr()})
      if (f && f.getMinNormalExponent() < -126)
        return b.notifyMatchFailure(op, "normal range below fp32's");
    Location loc = op.getLoc();
    unsigned rank = inType.getRank();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
    Value init = tensor::EmptyOp::create(b, loc, outType.getShape(),
                                         outType.getElementType());
    Value promoted = adaptor.getPromoted();
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{outType}, ValueRange{adaptor.getInput()},
        ValueRange{init}, ArrayRef<AffineMap>{id, id},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Scalar sc{nb, nl};
          auto one = [&](FloatFormatAttr f) -> Value {
            if (Encode)
              return buildEncodeFloat(nb, nl, args[0], f);
            Value code =
                arith::ExtUIOp::create(nb, nl, nb.getI32Type(), args[0]);
            return buildDecodeFloat(nb, nl, code, f);
          };
          Value result = one(op.getFormat());
          if (promoted)
            result =
                sc.select(promoted, one(op.getPromotedFormatAttr()), result);
          if (Encode)
            result = arith::TruncIOp::create(nb, nl, outType.getElementType(),
                                             result);
          linalg::YieldOp::create(nb, nl, result);
        });
    if (!Encode)
      generic->setAttr(kDecodeAttrName, b.getUnitAttr());
    b.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// The count of elements at or beyond the overflow threshold, as a
/// vectorizable reduction: |x| >= threshold compares the magnitude bits
/// with those of the first f32 at or above the threshold; NaN bits are
/// above +inf's and do not count.
struct CountOverflowLowering : OpConversionPattern<CountOverflowOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(CountOverflowOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto type = cast<RankedTensorType>(adaptor.getInput().getType());
    if (!type.hasStaticShape())
      return b.notifyMatchFailure(op, "dynamic shapes");
    double threshold = toRuntime(op.getFormat()).overflowThreshold();
    float first = float(threshold);
    if (double(first) < threshold)
      first = std::nextafter(first, INFINITY);
    uint32_t firstBits;
    std::memcpy(&firstBits, &first, 4);
    Location loc = op.getLoc();
    Value count = reduceElements(
        b, loc, adaptor.getInput(), std::nullopt, {b.getI64IntegerAttr(0)},
        [&](OpBuilder &nb, Location nl, Value x, ValueRange acc) {
          Scalar s{nb, nl};
          Value bits = arith::BitcastOp::create(nb, nl, nb.getI32Type(), x);
          Value magnitude =
              arith::AndIOp::create(nb, nl, bits, s.i32(0x7FFFFFFF));
          Value over = arith::AndIOp::create(
              nb, nl,
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::uge,
                                    magnitude, s.i32(firstBits)),
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ule,
                                    magnitude, s.i32(0x7F800000u)));
          Value one = arith::ExtUIOp::create(nb, nl, nb.getI64Type(), over);
          return SmallVector<Value>{
              arith::AddIOp::create(nb, nl, acc[0], one).getResult()};
        },
        [](OpBuilder &nb, Location nl, ValueRange x, ValueRange y) {
          return SmallVector<Value>{
              arith::AddIOp::create(nb, nl, x[0], y[0]).getResult()};
        })[0];
    b.replaceOpWithNewOp<tensor::ExtractOp>(op, count, ValueRange{});
    return success();
  }
};

} // namespace

bool tolinalg::isLowerable(FloatFormatAttr format) {
  return !format ||
         (format.getMinNormalExponent() >= -126 &&
          format.getMinNormalExponent() - int(format.getMantissa()) + 23 <=
              127);
}

void tolinalg::populateFloatFormatPatterns(RewritePatternSet &patterns) {
  patterns.add<RoundFloatLowering, CountOverflowLowering,
               CodecLowering<EncodeFloatOp, true>,
               CodecLowering<DecodeFloatOp, false>>(patterns.getContext());
}
