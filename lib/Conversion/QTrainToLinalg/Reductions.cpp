//===- Reductions.cpp - Vectorizable reductions over a tensor ---*- C++ -*-===//
//
// The reductions the lowerings share: one pass over a tensor into
// per-tensor or per-slice statistics, laid out so that LLVM vectorizes it;
// the range of the finite elements with the NaN flag.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::qtrain;
using namespace mlir::qtrain::tolinalg;

Value tolinalg::nanFlag(OpBuilder &b, Location loc, Value x) {
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  return arith::ExtUIOp::create(b, loc, b.getI8Type(), isNan);
}

SmallVector<Value> tolinalg::orFlags(OpBuilder &b, Location loc, ValueRange x,
                                     ValueRange y) {
  return {arith::OrIOp::create(b, loc, x[0], y[0])};
}

SmallVector<Value> tolinalg::reduceElements(
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
  // One op for all the statistics (one loop, one GPU launch): each
  // accumulator combines its own lanes.
  SmallVector<AffineMap> maps(partial.size(),
                              AffineMap::getMultiDimIdentityMap(loops2, ctx));
  maps.append(partial.size(), AffineMap::get(loops2, 0, outExprs2, ctx));
  size_t count = partial.size();
  ResultRange combined =
      linalg::GenericOp::create(
          b, loc, resultTypes(statShape), ValueRange(partial),
          filled(statShape), maps, iterators2,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            linalg::YieldOp::create(
                nb, nl,
                combine(nb, nl, a.drop_front(count), a.take_front(count)));
          })
          .getResults();
  SmallVector<Value> results(combined.begin(), combined.end());
  return results;
}

FiniteRange tolinalg::buildRange(OpBuilder &b, Location loc, Value input,
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
