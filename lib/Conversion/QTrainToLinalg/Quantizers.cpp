//===- Quantizers.cpp - fake_quant and quantize as linalg -------*- C++ -*-===//
//
// qtrain.fake_quant and qtrain.quantize as linalg on tensors, bit-exact
// with the reference quantizer (runtime/include/qtrain/runtime/Quantize.h)
// and its Philox noise (runtime/include/qtrain/runtime/Philox.h).
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cfloat>
#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::qtrain;
using namespace mlir::qtrain::tolinalg;

namespace {

/// Philox4x32-10 of (counter, key), all i32 values; returns the four words.
static std::array<Value, 4> philox(OpBuilder &b, Location loc,
                                   std::array<Value, 4> c,
                                   std::array<Value, 2> k) {
  Scalar s{b, loc};
  Value m0 = s.i32(0xD2511F53u), m1 = s.i32(0xCD9E8D57u);
  Value w0 = s.i32(0x9E3779B9u), w1 = s.i32(0xBB67AE85u);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] = arith::AddIOp::create(b, loc, k[0], w0);
      k[1] = arith::AddIOp::create(b, loc, k[1], w1);
    }
    auto p0 = arith::MulUIExtendedOp::create(b, loc, m0, c[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, m1, c[2]);
    Value n0 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p1.getHigh(), c[1]), k[0]);
    Value n2 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p0.getHigh(), c[3]), k[1]);
    c = {n0, p1.getLow(), n2, p0.getLow()};
  }
  return c;
}

/// The operands fake_quant and quantize share.
struct Quantizer {
  Value input, bits, min, max, seed, step;
  Rounding rounding;
  std::optional<int64_t> axis;
  int64_t stream;
  /// `max` is the range's width (the op's `width`).
  bool width;

  /// The operands of `op` as the conversion remapped them (`adaptor`).
  template <typename OpT>
  static Quantizer of(OpT op, typename OpT::Adaptor adaptor, Value bits) {
    return {adaptor.getInput(),
            bits,
            adaptor.getMin(),
            adaptor.getMax(),
            adaptor.getSeed(),
            adaptor.getStep(),
            op.getRounding(),
            op.getGranularity().getAxis(),
            static_cast<int64_t>(op.getStream()),
            op.getWidth()};
  }
};

} // namespace

/// The noise of the current element: its row-major index i selects word
/// i % 4 of Philox block i / 4.
///
/// On a [N / 4, 4] view (`quads`) the block is loop 0 and the word loop 1,
/// so the block's words depend on the outer loop only: once the inner loop
/// of 4 is unrolled (qtrain-unroll-short-loops), one Philox serves four
/// elements.
std::pair<Value, Value> tolinalg::splitSeed(OpBuilder &b, Location loc,
                                            Value seed) {
  Type i32 = b.getI32Type();
  Value shifted = arith::ShRUIOp::create(
      b, loc, seed, arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32)));
  return {arith::TruncIOp::create(b, loc, i32, seed),
          arith::TruncIOp::create(b, loc, i32, shifted)};
}

Value tolinalg::philoxNoise(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                            bool quads, Value seedLo, Value seedHi,
                            Value stream, Value step) {
  Type i64 = b.getI64Type(), i32 = b.getI32Type();
  auto loop = [&](unsigned d) {
    return arith::IndexCastOp::create(b, loc, i64,
                                      linalg::IndexOp::create(b, loc, d))
        .getResult();
  };
  Value block, lane;
  if (quads) {
    block = loop(0);
    lane = arith::TruncIOp::create(b, loc, i32, loop(1));
  } else {
    Value index = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
    for (auto [d, size] : llvm::enumerate(shape)) {
      Value sz = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(size));
      index = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, index, sz), loop(d));
    }
    Value two = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(2));
    block = arith::ShRUIOp::create(b, loc, index, two);
    lane = arith::TruncIOp::create(
        b, loc, i32,
        arith::AndIOp::create(
            b, loc, index,
            arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(3))));
  }
  Value thirtyTwo = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32));
  Value blockLo = arith::TruncIOp::create(b, loc, i32, block);
  Value blockHi = arith::TruncIOp::create(
      b, loc, i32, arith::ShRUIOp::create(b, loc, block, thirtyTwo));
  auto words =
      philox(b, loc, {blockLo, blockHi, stream, step}, {seedLo, seedHi});
  Scalar s{b, loc};
  auto is = [&](uint32_t k) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                 s.i32(k));
  };
  Value word =
      s.select(is(0), words[0],
               s.select(is(1), words[1], s.select(is(2), words[2], words[3])));
  Value top24 = arith::ShRUIOp::create(b, loc, word, s.i32(8));
  Value f = arith::UIToFPOp::create(b, loc, b.getF32Type(), top24);
  Value unit = arith::MulFOp::create(b, loc, f, s.f32(1.0 / 16777216.0));
  return arith::SubFOp::create(b, loc, unit, s.f32(0.5));
}

namespace {

/// The grid of a quantizer and how each element lands on it, built once
/// outside the linalg bodies and then per element inside them.
class GridBuilder {
public:
  GridBuilder(OpBuilder &b, Location loc, const Quantizer &q) : q(q) {
    auto type = cast<RankedTensorType>(q.input.getType());
    buildView(type);
    mn = q.min;
    mx = q.max;
    if (!mn) {
      FiniteRange range = buildRange(b, loc, q.input, q.axis);
      mn = range.min;
      mx = range.max;
      anyNan = range.anyNan;
    }
    // Scalars of an explicit per-tensor range become 0-d tensors.
    for (Value *v : {&mn, &mx})
      if (!isa<RankedTensorType>(v->getType()))
        *v = tensor::FromElementsOp::create(
            b, loc, RankedTensorType::get({}, b.getF32Type()), ValueRange{*v});
    // L = 2^bits - 1 as f32.
    Scalar s{b, loc};
    Value one = s.i32(1);
    Value levelsInt = arith::SubIOp::create(
        b, loc, arith::ShLIOp::create(b, loc, one, q.bits), one);
    levels = arith::UIToFPOp::create(b, loc, b.getF32Type(), levelsInt);
    if (q.rounding == Rounding::Stochastic) {
      std::tie(seedLo, seedHi) = splitSeed(b, loc, q.seed);
      stream = s.i32(uint32_t(q.stream));
    }
  }

  /// The map from the view's loops to its statistics (0-d or the axis).
  AffineMap statMap(MLIRContext *ctx) const {
    unsigned rank = shape.size();
    return axis ? AffineMap::get(rank, 0, getAffineDimExpr(*axis, ctx), ctx)
                : AffineMap::get(rank, 0, {}, ctx);
  }

  /// `t` (shaped like the input) as the view; the view's row-major order
  /// is the input's, so element indices (the noise's counter) agree.
  Value view(OpBuilder &b, Location loc, Value t) const {
    auto type = cast<RankedTensorType>(t.getType());
    if (!groups.empty())
      t = tensor::CollapseShapeOp::create(
          b, loc, RankedTensorType::get(flat, type.getElementType()), t,
          groups);
    if (quads)
      t = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get(shape, type.getElementType()), t,
          ArrayRef<ReassociationIndices>{{0, 1}});
    return t;
  }

  /// A result computed on the view, back in the input's shape.
  Value unview(OpBuilder &b, Location loc, Value t,
               RankedTensorType type) const {
    if (quads)
      t = tensor::CollapseShapeOp::create(
          b, loc, RankedTensorType::get(flat, type.getElementType()), t,
          ArrayRef<ReassociationIndices>{{0, 1}});
    if (groups.empty())
      return t;
    return tensor::ExpandShapeOp::create(b, loc, type, t, groups);
  }

  /// The grid step of range [lo, hi] (reference: gridOf), or with
  /// `width` of the range starting at lo that is `hi` wide (reference:
  /// makeQuantGridFromRange; an infinite width, which the reference
  /// refuses, gives FLT_MAX as an infinite max - min does).
  Value scale(Scalar &e, Value lo, Value hi) const {
    OpBuilder &nb = e.b;
    Location nl = e.loc;
    Value scale;
    if (q.width) {
      scale = arith::DivFOp::create(nb, nl, hi, levels);
      Value inf = e.cmp(arith::CmpFPredicate::OEQ, scale,
                        e.f32(std::numeric_limits<float>::infinity()));
      scale = e.select(inf, e.f32(FLT_MAX), scale);
    } else {
      Value width = arith::SubFOp::create(nb, nl, hi, lo);
      Value plain = arith::DivFOp::create(nb, nl, width, levels);
      Value split = arith::SubFOp::create(
          nb, nl, arith::DivFOp::create(nb, nl, hi, levels),
          arith::DivFOp::create(nb, nl, lo, levels));
      split = e.select(e.isFinite(split), split, e.f32(FLT_MAX));
      scale = e.select(e.isFinite(width), plain, split);
    }
    Value minScale = e.f32(1e-8);
    return e.select(e.cmp(arith::CmpFPredicate::OLT, scale, minScale), minScale,
                    scale);
  }

  /// The grid index q of `x`, an f32 integer in [0, L].
  Value index(Scalar &e, Value x, Value lo, Value scale) const {
    OpBuilder &nb = e.b;
    Location nl = e.loc;
    Value v = arith::DivFOp::create(
        nb, nl, arith::SubFOp::create(nb, nl, x, lo), scale);
    if (q.rounding == Rounding::Stochastic)
      v = arith::AddFOp::create(
          nb, nl, v,
          philoxNoise(nb, nl, shape, quads, seedLo, seedHi, stream, q.step));
    // Clamp to [0, L], then round half to even.
    Value zero = e.f32(0.0);
    v = e.select(e.cmp(arith::CmpFPredicate::OGT, v, levels), levels, v);
    v = e.select(e.cmp(arith::CmpFPredicate::OLT, v, zero), zero, v);
    return math::RoundEvenOp::create(nb, nl, v);
  }

  const Quantizer &q;
  /// The loops of the elementwise generics: the input's dimensions merged
  /// into [N] per tensor and [pre, C, post] per channel (pre and post only
  /// where present), so the innermost loop is as long as the layout allows
  /// and vectorizes. `groups` is empty when the view is the input itself
  /// (`flat` is the merged shape). Stochastic rounding per tensor runs on
  /// [N / 4, 4] (`quads`): the four elements of one Philox block are one
  /// inner loop of 4, which LLVM unrolls and computes the block once for.
  SmallVector<int64_t> shape, flat;
  SmallVector<ReassociationIndices> groups;
  std::optional<int64_t> axis;
  bool quads = false;
  Value mn, mx, levels, seedLo, seedHi, stream;
  /// Set when the range was reduced from the input (the same pass found
  /// NaNs); null for an explicit range.
  Value anyNan;

private:
  void buildView(RankedTensorType type) {
    int64_t rank = type.getRank();
    auto group = [&](int64_t from, int64_t to) {
      ReassociationIndices g;
      int64_t size = 1;
      for (int64_t d = from; d < to; ++d) {
        g.push_back(d);
        size *= type.getDimSize(d);
      }
      groups.push_back(g);
      shape.push_back(size);
    };
    if (!q.axis) {
      group(0, rank);
    } else {
      int64_t a = *q.axis;
      if (a > 0)
        group(0, a);
      axis = int64_t(groups.size());
      group(a, a + 1);
      if (a + 1 < rank)
        group(a + 1, rank);
    }
    if (rank == 0 || int64_t(groups.size()) == rank) {
      groups.clear();
      shape = llvm::to_vector(type.getShape());
      axis = q.axis;
    }
    flat = shape;
    if (q.rounding == Rounding::Stochastic && !q.axis && shape.size() == 1 &&
        shape[0] % 4 == 0 && shape[0] > 4) {
      quads = true;
      shape = {shape[0] / 4, 4};
    }
  }
};

struct FakeQuantLowering : OpConversionPattern<FakeQuantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(FakeQuantOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto type = cast<RankedTensorType>(adaptor.getInput().getType());
    if (!type.hasStaticShape())
      return b.notifyMatchFailure(op, "dynamic shapes");
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Quantizer q = Quantizer::of(op, adaptor, adaptor.getBits());
    GridBuilder grid(b, loc, q);
    Scalar s{b, loc};
    Value fullPrecision = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, adaptor.getBits(), s.i32(0));
    unsigned rank = grid.shape.size();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap statMap = grid.statMap(ctx);
    auto viewType = RankedTensorType::get(grid.shape, type.getElementType());
    Value init =
        tensor::EmptyOp::create(b, loc, grid.shape, type.getElementType());
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{viewType},
        ValueRange{grid.view(b, loc, adaptor.getInput()), grid.mn, grid.mx},
        ValueRange{init}, ArrayRef<AffineMap>{id, statMap, statMap, id},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Scalar e{nb, nl};
          Value x = a[0], lo = a[1];
          Value scale = grid.scale(e, lo, a[2]);
          Value index = grid.index(e, x, lo, scale);
          Value y = arith::AddFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, index, scale), lo);
          // NaN stays NaN; 0 bits is full precision.
          Value isNan = e.cmp(arith::CmpFPredicate::UNO, x, x);
          Value keep = arith::OrIOp::create(nb, nl, isNan, fullPrecision);
          linalg::YieldOp::create(nb, nl, e.select(keep, x, y));
        });
    b.replaceOp(op, grid.unview(b, loc, generic.getResult(0), type));
    return success();
  }
};

struct QuantizeLowering : OpConversionPattern<QuantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(QuantizeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto type = cast<RankedTensorType>(adaptor.getInput().getType());
    if (!type.hasStaticShape())
      return b.notifyMatchFailure(op, "dynamic shapes");
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Scalar s{b, loc};
    int64_t bits = op.getBits();
    Quantizer q = Quantizer::of(op, adaptor, s.i32(uint32_t(bits)));
    GridBuilder grid(b, loc, q);
    auto statType = op.getScale().getType();
    unsigned statRank = statType.getRank();
    AffineMap statId = AffineMap::getMultiDimIdentityMap(statRank, ctx);
    SmallVector<utils::IteratorType> statPar(statRank,
                                             utils::IteratorType::parallel);

    unsigned rank = grid.shape.size();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);

    // Any NaN element poisons `low` (the range reduction found them when
    // it ran; an explicit range needs a pass of its own).
    Value anyNan = grid.anyNan;
    if (!anyNan)
      anyNan = reduceElements(
          b, loc, adaptor.getInput(), std::nullopt, {b.getI8IntegerAttr(0)},
          [&](OpBuilder &nb, Location nl, Value x, ValueRange acc) {
            return orFlags(nb, nl, acc, ValueRange{nanFlag(nb, nl, x)});
          },
          orFlags)[0];

    // The grid: scale and low per statistic.
    auto gridOp = linalg::GenericOp::create(
        b, loc, TypeRange{statType, statType},
        ValueRange{grid.mn, grid.mx, anyNan},
        ValueRange{tensor::EmptyOp::create(b, loc, statType.getShape(),
                                           b.getF32Type()),
                   tensor::EmptyOp::create(b, loc, statType.getShape(),
                                           b.getF32Type())},
        ArrayRef<AffineMap>{statId, statId,
                            AffineMap::get(statRank, 0, {}, ctx), statId,
                            statId},
        statPar, [&](OpBuilder &nb, Location nl, ValueRange a) {
          Scalar e{nb, nl};
          Value scale = grid.scale(e, a[0], a[1]);
          Value nan = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::ne, a[2],
              arith::ConstantOp::create(nb, nl, nb.getI8IntegerAttr(0)));
          Value low = e.select(nan, e.f32(NAN), a[0]);
          linalg::YieldOp::create(nb, nl, ValueRange{scale, low});
        });
    Value scale = gridOp.getResult(0);

    // The codes: q - 2^(b-1), 0 for NaN.
    auto codesType = op.getCodes().getType();
    Type codeType = codesType.getElementType();
    AffineMap statMap = grid.statMap(ctx);
    auto codes = linalg::GenericOp::create(
        b, loc, TypeRange{RankedTensorType::get(grid.shape, codeType)},
        ValueRange{grid.view(b, loc, adaptor.getInput()), grid.mn, scale},
        ValueRange{tensor::EmptyOp::create(b, loc, grid.shape, codeType)},
        ArrayRef<AffineMap>{id, statMap, statMap, id},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Scalar e{nb, nl};
          Value x = a[0];
          Value index = grid.index(e, x, a[1], a[2]);
          Value q = arith::FPToSIOp::create(nb, nl, nb.getI32Type(), index);
          Value code = arith::SubIOp::create(nb, nl, q,
                                             e.i32(uint32_t(1) << (bits - 1)));
          Value isNan = e.cmp(arith::CmpFPredicate::UNO, x, x);
          code = e.select(isNan, e.i32(0), code);
          linalg::YieldOp::create(
              nb, nl,
              arith::TruncIOp::create(nb, nl, codeType, code).getResult());
        });
    b.replaceOp(op,
                ValueRange{grid.unview(b, loc, codes.getResult(0), codesType),
                           scale, gridOp.getResult(1)});
    return success();
  }
};

} // namespace

void tolinalg::populateQuantizerPatterns(RewritePatternSet &patterns) {
  patterns.add<FakeQuantLowering, QuantizeLowering>(patterns.getContext());
}
