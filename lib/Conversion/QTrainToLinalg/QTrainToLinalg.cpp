//===- QTrainToLinalg.cpp - Lower quantizers to linalg ----------*- C++ -*-===//
//
// qtrain.fake_quant as linalg on tensors, bit-exact with the reference
// quantizer (runtime/include/qtrain/runtime/Quantize.h) and its Philox noise
// (runtime/include/qtrain/runtime/Philox.h).
//
//===----------------------------------------------------------------------===//

#include "qtrain/Conversion/Passes.h"

#include "QTrain/QTrainDialect.h"
#include "QTrain/QTrainOps.h"
#include "qtrain/runtime/FloatFormat.h"

#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

namespace mlir::qtrain {
#define GEN_PASS_DEF_CONVERTQTRAINTOLINALGPASS
#include "qtrain/Conversion/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

/// Scalar arithmetic inside a linalg body.
struct Scalar {
  OpBuilder &b;
  Location loc;

  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(v)));
  }
  Value i32(uint32_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(int32_t(v)));
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value isFinite(Value x) {
    Value inf = f32(INFINITY);
    return cmp(arith::CmpFPredicate::ONE, math::AbsFOp::create(b, loc, x), inf);
  }
};

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

/// The min/max of the finite elements of `input`, per tensor (0-d tensors)
/// or per slice along `axis` (1-D), with 0/0 where no element is finite.
/// 1 (i8) when x is NaN: flags are i8 because i1 memory does not vectorize.
static Value nanFlag(OpBuilder &b, Location loc, Value x) {
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  return arith::ExtUIOp::create(b, loc, b.getI8Type(), isNan);
}

static SmallVector<Value> orFlags(OpBuilder &b, Location loc, ValueRange x,
                                  ValueRange y) {
  return {arith::OrIOp::create(b, loc, x[0], y[0])};
}

/// The min/max of a tensor's finite elements, and whether any is NaN.
struct Range {
  Value min, max;
  /// An i8 0-d tensor, non-zero when some element is NaN.
  Value anyNan;
};
static Range buildRange(OpBuilder &b, Location loc, Value input,
                        std::optional<int64_t> axis);

/// Reduces `input` over all dimensions, or all but `axis`, into one
/// statistic per tensor (0-d results) or per slice (1-D) for each of
/// `inits` (the neutral values): `step` folds an element into the
/// accumulators, `combine` merges two sets of accumulators.
///
/// Written so that LLVM vectorizes it: the innermost loop of a reduction
/// into memory does not vectorize (its accumulator is a store to one
/// address), so when the reduced elements of a statistic are a multiple of
/// L = 256, 64 or 16 in row-major order (per tensor, or per slice along
/// axis 0) they are viewed as [rows, L] and reduced over the rows into L
/// partial accumulators (an elementwise innermost loop), which a second,
/// small reduction combines.
static SmallVector<Value> reduceElements(
    OpBuilder &b, Location loc, Value input, std::optional<int64_t> axis,
    ArrayRef<TypedAttr> inits,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)>
        step,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange,
                                    ValueRange)>
        combine) {
  auto type = cast<RankedTensorType>(input.getType());
  MLIRContext *ctx = b.getContext();
  unsigned rank = type.getRank();
  SmallVector<int64_t> statShape;
  if (axis)
    statShape.push_back(type.getDimSize(*axis));
  auto filled = [&](ArrayRef<int64_t> shape) {
    SmallVector<Value> out;
    for (TypedAttr init : inits) {
      Value e = tensor::EmptyOp::create(b, loc, shape, init.getType());
      Value c = arith::ConstantOp::create(b, loc, init);
      out.push_back(linalg::FillOp::create(b, loc, c, e).getResult(0));
    }
    return out;
  };
  auto resultTypes = [&](ArrayRef<int64_t> shape) {
    SmallVector<Type> types;
    for (TypedAttr init : inits)
      types.push_back(RankedTensorType::get(shape, init.getType()));
    return types;
  };
  // The elements of `in` folded into the accumulators by `step`.
  auto generic = [&](Value in, unsigned loops, ArrayRef<AffineExpr> outExprs,
                     ArrayRef<utils::IteratorType> iterators,
                     ArrayRef<int64_t> outShape) {
    SmallVector<AffineMap> maps(1,
                                AffineMap::getMultiDimIdentityMap(loops, ctx));
    maps.append(inits.size(), AffineMap::get(loops, 0, outExprs, ctx));
    return linalg::GenericOp::create(
               b, loc, resultTypes(outShape), ValueRange{in}, filled(outShape),
               maps, iterators,
               [&](OpBuilder &nb, Location nl, ValueRange a) {
                 linalg::YieldOp::create(nb, nl,
                                         step(nb, nl, a[0], a.drop_front(1)));
               })
        .getResults();
  };
  int64_t slice = type.hasStaticShape()
                      ? type.getNumElements() / (axis ? statShape[0] : 1)
                      : 0;
  // Wide rows (an inner loop LLVM vectorizes rather than unrolls), as wide
  // as divide the slice into at least two.
  int64_t kLanes = 0;
  for (int64_t lanes : axis ? std::initializer_list<int64_t>{64, 16}
                            : std::initializer_list<int64_t>{256, 64, 16})
    if (!kLanes && slice > 0 && slice % lanes == 0 && slice / lanes > 1)
      kLanes = lanes;
  bool split = kLanes && (!axis || *axis == 0);
  if (!split) {
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::reduction);
    SmallVector<AffineExpr> outExprs;
    if (axis) {
      iterators[*axis] = utils::IteratorType::parallel;
      outExprs.push_back(b.getAffineDimExpr(*axis));
    }
    ResultRange r = generic(input, rank, outExprs, iterators, statShape);
    return SmallVector<Value>(r.begin(), r.end());
  }
  // [stat..., slice / 16, 16]
  SmallVector<ReassociationIndices> collapse;
  if (axis)
    collapse.push_back({0});
  ReassociationIndices rest;
  for (unsigned d = axis ? 1 : 0; d < rank; ++d)
    rest.push_back(d);
  collapse.push_back(rest);
  SmallVector<int64_t> flat(statShape);
  flat.push_back(slice);
  Value view = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(flat, type.getElementType()), input,
      collapse);
  SmallVector<int64_t> rows(statShape);
  rows.append({slice / kLanes, kLanes});
  SmallVector<ReassociationIndices> expand;
  if (axis)
    expand.push_back({0});
  expand.push_back({int64_t(statShape.size()), int64_t(statShape.size()) + 1});
  view = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(rows, type.getElementType()), view, expand);
  unsigned loops = rows.size();
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::parallel);
  iterators[loops - 2] = utils::IteratorType::reduction;
  SmallVector<AffineExpr> outExprs;
  if (axis)
    outExprs.push_back(b.getAffineDimExpr(0));
  outExprs.push_back(b.getAffineDimExpr(loops - 1));
  SmallVector<int64_t> partialShape(statShape);
  partialShape.push_back(kLanes);
  ResultRange partial = generic(view, loops, outExprs, iterators, partialShape);
  // Combine the 16 lanes: [stat..., 16] -> [stat...].
  unsigned loops2 = partialShape.size();
  SmallVector<utils::IteratorType> iterators2(loops2,
                                              utils::IteratorType::parallel);
  iterators2.back() = utils::IteratorType::reduction;
  SmallVector<AffineExpr> outExprs2;
  if (axis)
    outExprs2.push_back(b.getAffineDimExpr(0));
  SmallVector<Value> results;
  for (auto [index, lanes] : llvm::enumerate(partial)) {
    TypedAttr init = inits[index];
    SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(loops2, ctx),
                                AffineMap::get(loops2, 0, outExprs2, ctx)};
    Value e = tensor::EmptyOp::create(b, loc, statShape, init.getType());
    Value c = arith::ConstantOp::create(b, loc, init);
    Value acc = linalg::FillOp::create(b, loc, c, e).getResult(0);
    size_t which = index;
    results.push_back(
        linalg::GenericOp::create(
            b, loc, TypeRange{acc.getType()}, ValueRange{lanes},
            ValueRange{acc}, maps, iterators2,
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              // combine() on a set where only this accumulator matters.
              SmallVector<Value> lhs, rhs;
              for (size_t k = 0; k < inits.size(); ++k) {
                Value neutral = arith::ConstantOp::create(nb, nl, inits[k]);
                lhs.push_back(k == which ? a[0] : neutral);
                rhs.push_back(k == which ? a[1] : neutral);
              }
              linalg::YieldOp::create(nb, nl, combine(nb, nl, rhs, lhs)[which]);
            })
            .getResult(0));
  }
  return results;
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

/// The noise of the current element: its row-major index i selects word
/// i % 4 of Philox block i / 4.
///
/// On a [N / 4, 4] view (`quads`) the block is loop 0 and the word loop 1,
/// so the block's words depend on the outer loop only: once the inner loop
/// of 4 is unrolled (qtrain-unroll-short-loops), one Philox serves four
/// elements.
static Value noise(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   bool quads, Value seedLo, Value seedHi, Value stream,
                   Value step) {
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
      Range range = buildRange(b, loc, q.input, q.axis);
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
      Type i32 = b.getI32Type();
      seedLo = arith::TruncIOp::create(b, loc, i32, q.seed);
      Value shifted = arith::ShRUIOp::create(
          b, loc, q.seed,
          arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32)));
      seedHi = arith::TruncIOp::create(b, loc, i32, shifted);
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
          noise(nb, nl, shape, quads, seedLo, seedHi, stream, q.step));
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

struct RangeEmaLowering : OpConversionPattern<RangeEmaOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(RangeEmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!cast<RankedTensorType>(adaptor.getInput().getType()).hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shapes");
    Location loc = op.getLoc();
    Range range = buildRange(rewriter, loc, adaptor.getInput(), std::nullopt);
    Value mnTensor = range.min, mxTensor = range.max;
    Scalar s{rewriter, loc};
    double m = op.getMomentum().convertToDouble();
    Value momentum = s.f32(m), weight = s.f32(1.0 - m);
    auto fold = [&](Value running, Value batch) {
      Value kept = arith::MulFOp::create(rewriter, loc, running, momentum);
      Value added = arith::MulFOp::create(rewriter, loc, batch, weight);
      return arith::AddFOp::create(rewriter, loc, kept, added).getResult();
    };
    auto at = [&](int64_t i) {
      Value index = arith::ConstantIndexOp::create(rewriter, loc, i);
      return tensor::ExtractOp::create(rewriter, loc, adaptor.getState(),
                                       index);
    };
    Value mn = tensor::ExtractOp::create(rewriter, loc, mnTensor, ValueRange{});
    Value mx = tensor::ExtractOp::create(rewriter, loc, mxTensor, ValueRange{});
    // The state is [min, range], as the reference (RangeEma::update) keeps
    // it: the batch's width first, then each entry folded on its own.
    Value width = arith::SubFOp::create(rewriter, loc, mx, mn);
    Value updated = tensor::FromElementsOp::create(
        rewriter, loc, op.getType(),
        ValueRange{fold(at(0), mn), fold(at(1), width)});
    rewriter.replaceOp(op, updated);
    return success();
  }
};

/// b = clamp(rint(p * (max - min) + min), min, max) in f32, NaN -> min:
/// the runtime's ldpBits, operation for operation.
struct LearnedBitsLowering : OpConversionPattern<LearnedBitsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LearnedBitsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Scalar s{rewriter, loc};
    Value p = tensor::ExtractOp::create(rewriter, loc, adaptor.getPrecision(),
                                        ValueRange{});
    float lo = float(op.getMinBits()), hi = float(op.getMaxBits());
    Value scaled = arith::MulFOp::create(rewriter, loc, p, s.f32(hi - lo));
    Value value = arith::AddFOp::create(rewriter, loc, scaled, s.f32(lo));
    Value rounded = math::RoundEvenOp::create(rewriter, loc, value);
    // Ordered comparisons: NaN is neither above min nor below max.
    Value aboveMin = s.cmp(arith::CmpFPredicate::OGT, value, s.f32(lo));
    Value belowMax = s.cmp(arith::CmpFPredicate::OLT, value, s.f32(hi));
    Value clamped = s.select(belowMax, rounded, s.f32(hi));
    Value bits = s.select(aboveMin, clamped, s.f32(lo));
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, op.getType(),
                                                        ValueRange{bits});
    return success();
  }
};

static Range buildRange(OpBuilder &b, Location loc, Value input,
                        std::optional<int64_t> axis) {
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> statShape;
  if (axis)
    statShape.push_back(
        cast<RankedTensorType>(input.getType()).getDimSize(*axis));
  auto statType = RankedTensorType::get(statShape, b.getF32Type());
  // The reduction runs on integer keys that order like the floats
  // (key = bits, with the magnitude bits flipped for negative numbers; the
  // map is its own inverse), so it is a plain signed min/max reduction;
  // non-finite elements take the neutral key.
  auto orderKey = [](Scalar &s, Value bits) {
    Value sign = arith::ShRSIOp::create(s.b, s.loc, bits, s.i32(31));
    Value flip = arith::AndIOp::create(s.b, s.loc, sign, s.i32(0x7fffffff));
    return arith::XOrIOp::create(s.b, s.loc, bits, flip).getResult();
  };
  // Min key, max key and the NaN flag in one pass over the input.
  auto combine = [](OpBuilder &nb, Location nl, ValueRange x, ValueRange y) {
    return SmallVector<Value>{arith::MinSIOp::create(nb, nl, x[0], y[0]),
                              arith::MaxSIOp::create(nb, nl, x[1], y[1]),
                              arith::OrIOp::create(nb, nl, x[2], y[2])};
  };
  SmallVector<Value> keys = reduceElements(
      b, loc, input, axis,
      {b.getI32IntegerAttr(INT32_MAX), b.getI32IntegerAttr(INT32_MIN),
       b.getI8IntegerAttr(0)},
      [&](OpBuilder &nb, Location nl, Value x, ValueRange acc) {
        Scalar s{nb, nl};
        Value finite = s.isFinite(x);
        Value key =
            orderKey(s, arith::BitcastOp::create(nb, nl, nb.getI32Type(), x));
        Value forMin = s.select(finite, key, s.i32(uint32_t(INT32_MAX)));
        Value forMax = s.select(finite, key, s.i32(uint32_t(INT32_MIN)));
        return combine(nb, nl, acc,
                       ValueRange{forMin, forMax, nanFlag(nb, nl, x)});
      },
      combine);
  // Per-channel flags: any channel.
  Value anyNan = keys[2];
  if (axis) {
    Value e =
        tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, b.getI8Type());
    Value zero = arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0));
    Value init = linalg::FillOp::create(b, loc, zero, e).getResult(0);
    anyNan = linalg::GenericOp::create(
                 b, loc, TypeRange{init.getType()}, ValueRange{keys[2]},
                 ValueRange{init},
                 ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(1, ctx),
                                     AffineMap::get(1, 0, {}, ctx)},
                 utils::IteratorType::reduction,
                 [](OpBuilder &nb, Location nl, ValueRange a) {
                   linalg::YieldOp::create(nb, nl, orFlags(nb, nl, a[0], a[1]));
                 })
                 .getResult(0);
  }
  keys.pop_back();
  // Back to floats; no finite element: the range is [0, 0].
  AffineMap id = AffineMap::getMultiDimIdentityMap(statShape.size(), ctx);
  SmallVector<utils::IteratorType> par(statShape.size(),
                                       utils::IteratorType::parallel);
  Value e0 = tensor::EmptyOp::create(b, loc, statShape, b.getF32Type());
  Value e1 = tensor::EmptyOp::create(b, loc, statShape, b.getF32Type());
  auto fixed = linalg::GenericOp::create(
      b, loc, TypeRange{statType, statType}, ValueRange(keys),
      ValueRange{e0, e1}, SmallVector<AffineMap>(4, id), par,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Scalar s{nb, nl};
        Value none = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sgt,
                                           a[0], a[1]);
        Value zero = s.f32(0.0);
        auto toFloat = [&](Value key) {
          return arith::BitcastOp::create(nb, nl, nb.getF32Type(),
                                          orderKey(s, key))
              .getResult();
        };
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{s.select(none, zero, toFloat(a[0])),
                       s.select(none, zero, toFloat(a[1]))});
      });
  return {fixed.getResult(0), fixed.getResult(1), anyNan};
}

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
static Value roundToFormat(OpBuilder &b, Location loc, Value x,
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
        Value result = roundToFormat(nb, nl, args[0], format);
        if (promoted)
          result = arith::SelectOp::create(
              nb, nl, promoted, roundToFormat(nb, nl, args[0], promotedFormat),
              result);
        linalg::YieldOp::create(nb, nl, result);
      });
  return generic.getResult(0);
}

/// Whether `format` can be lowered: its normal range is within fp32's, and
/// the constant 2^(Emin - m + 23) of the subnormal rounding is finite.
static bool isLowerable(FloatFormatAttr format) {
  return !format ||
         (format.getMinNormalExponent() >= -126 &&
          format.getMinNormalExponent() - int(format.getMantissa()) + 23 <=
              127);
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
    b.replaceOp(op, buildRounding(b, op.getLoc(), adaptor.getInput(), format,
                                  adaptor.getPromoted(),
                                  op.getPromotedFormatAttr()));
    return success();
  }
};

/// The code (in an i32) of `x`, a value of `format` (e < 8) or NaN: sign,
/// exponent field, mantissa. NaN takes the largest finite magnitude.
static Value encodeScalar(OpBuilder &b, Location loc, Value x,
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
static Value decodeScalar(OpBuilder &b, Location loc, Value code,
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
              return encodeScalar(nb, nl, args[0], f);
            Value code =
                arith::ExtUIOp::create(nb, nl, nb.getI32Type(), args[0]);
            return decodeScalar(nb, nl, code, f);
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

/// Emits the error of an op that the patterns cannot lower, with the
/// reason, and fails; succeeds on every other op. Checked before the
/// conversion, whose own error ("failed to legalize") does not say why.
static LogicalResult checkLowerable(Operation *op) {
  if (isa<GradQuantOp, GradRoundFloatOp>(op))
    return op->emitError()
           << op->getName()
           << " is not supported by convert-qtrain-to-linalg: run "
              "qtrain-autodiff first, which moves its effect into the "
              "backward pass";
  if (auto round = dyn_cast<RoundFloatOp>(op)) {
    if (!isLowerable(round.getPromotedFormatAttr()))
      return op->emitError()
             << "qtrain.round_float to " << round.getPromotedFormatAttr()
             << " could not be lowered: its range is beyond fp32's";
    if (!isLowerable(round.getFormat()))
      return op->emitError()
             << "qtrain.round_float to " << round.getFormat()
             << " could not be lowered: its range is beyond fp32's "
                "(smallest normal exponent "
             << round.getFormat().getMinNormalExponent()
             << ", at least -126 and at most "
             << 104 + int(round.getFormat().getMantissa())
             << " for its mantissa)";
  }
  if (isa<EncodeFloatOp, DecodeFloatOp>(op)) {
    auto format = op->getAttrOfType<FloatFormatAttr>("format");
    auto promoted = op->getAttrOfType<FloatFormatAttr>("promotedFormat");
    for (FloatFormatAttr f : {format, promoted})
      if (f && f.getMinNormalExponent() < -126)
        return op->emitError()
               << op->getName() << " of " << f
               << " could not be lowered: its normal range is below fp32's";
  }
  if (isa<FakeQuantOp, QuantizeOp, RangeEmaOp, RoundFloatOp, CountOverflowOp,
          EncodeFloatOp, DecodeFloatOp>(op) &&
      !cast<RankedTensorType>(op->getOperand(0).getType()).hasStaticShape())
    return op->emitError() << op->getName()
                           << " could not be lowered (dynamic shapes are not "
                              "supported)";
  return success();
}

struct ConvertQTrainToLinalgPass
    : mlir::qtrain::impl::ConvertQTrainToLinalgPassBase<
          ConvertQTrainToLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool unlowerable = false;
    module.walk([&](Operation *op) {
      if (failed(checkLowerable(op)))
        unlowerable = true;
    });
    if (unlowerable)
      return signalPassFailure();
    // Every qtrain op is lowered: none may survive into the CPU lowering
    // (qtrain.kernel and qtrain.yield are gone after
    // qtrain-materialize-variants; an op without a pattern is an error).
    ConversionTarget target(getContext());
    target.addIllegalDialect<QTrainDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect>();
    RewritePatternSet patterns(&getContext());
    populateQTrainToLinalgConversionPatterns(patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    // Fold what the lowering built: its constants, uniqued at the top of
    // each function, and the arithmetic on them.
    if (failed(applyPatternsGreedily(module, FrozenRewritePatternSet())))
      return signalPassFailure();
  }
};

} // namespace

void mlir::qtrain::populateQTrainToLinalgConversionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FakeQuantLowering, QuantizeLowering, RangeEmaLowering,
               LearnedBitsLowering, RoundFloatLowering, CountOverflowLowering,
               CodecLowering<EncodeFloatOp, true>,
               CodecLowering<DecodeFloatOp, false>>(patterns.getContext());
}
