//===- ConvAsGemm.cpp - 2-D convolutions as one GEMM ------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Analysis/ConvAsGemm.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::qtrain;

FailureOr<ConvGemmShape> ConvGemmShape::of(linalg::Conv2DNchwFchwOp conv) {
  auto x = dyn_cast<RankedTensorType>(conv.getInputs()[0].getType());
  auto w = dyn_cast<RankedTensorType>(conv.getInputs()[1].getType());
  auto y = dyn_cast<RankedTensorType>(conv.getOutputs()[0].getType());
  if (!x || !w || !y || !x.hasStaticShape() || !w.hasStaticShape() ||
      !y.hasStaticShape())
    return failure();
  ConvGemmShape s;
  s.n = y.getDimSize(0);
  s.f = y.getDimSize(1);
  s.oh = y.getDimSize(2);
  s.ow = y.getDimSize(3);
  s.c = w.getDimSize(1);
  s.kh = w.getDimSize(2);
  s.kw = w.getDimSize(3);
  s.stride.assign(conv.getStrides().getValues<int64_t>().begin(),
                  conv.getStrides().getValues<int64_t>().end());
  s.dilation.assign(conv.getDilations().getValues<int64_t>().begin(),
                    conv.getDilations().getValues<int64_t>().end());
  return s;
}

Value mlir::qtrain::im2col(OpBuilder &b, Location loc, Value x,
                           const ConvGemmShape &s) {
  MLIRContext *ctx = b.getContext();
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  // (c, kh, kw, n, oh, ow) <- x[n, c, oh*s0 + kh*d0, ow*s1 + kw*d1]: the
  // innermost loop (ow) walks both x and the patches contiguously.
  AffineExpr d[6];
  for (unsigned i = 0; i < 6; ++i)
    d[i] = getAffineDimExpr(i, ctx);
  AffineMap patchMap =
      AffineMap::get(6, 0,
                     {d[3], d[0], d[4] * s.stride[0] + d[1] * s.dilation[0],
                      d[5] * s.stride[1] + d[2] * s.dilation[1]},
                     ctx);
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{s.c, s.kh, s.kw, s.n, s.oh, s.ow}, element);
  Value cols =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{x}, ValueRange{init},
          ArrayRef<AffineMap>{patchMap,
                              AffineMap::getMultiDimIdentityMap(6, ctx)},
          SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
          [](OpBuilder &nb, Location nl, ValueRange a) {
            linalg::YieldOp::create(nb, nl, a[0]);
          })
          .getResult(0);
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({s.depth(), s.rows()}, element), cols,
      ArrayRef<ReassociationIndices>{{0, 1, 2}, {3, 4, 5}});
}

Value mlir::qtrain::filterAsFByDepth(OpBuilder &b, Location loc, Value w,
                                     const ConvGemmShape &s) {
  Type element = cast<RankedTensorType>(w.getType()).getElementType();
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({s.f, s.depth()}, element), w,
      ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
}

Value mlir::qtrain::nchwAsFByRows(OpBuilder &b, Location loc, Value y,
                                  const ConvGemmShape &s) {
  Type element = cast<RankedTensorType>(y.getType()).getElementType();
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{s.f, s.n, s.oh, s.ow}, element);
  Value fnhw = linalg::TransposeOp::create(b, loc, y, init,
                                           ArrayRef<int64_t>{1, 0, 2, 3})
                   ->getResult(0);
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({s.f, s.rows()}, element), fnhw,
      ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
}

Value mlir::qtrain::fByRowsAsNchw(OpBuilder &b, Location loc, Value rows,
                                  const ConvGemmShape &s) {
  Type element = cast<RankedTensorType>(rows.getType()).getElementType();
  Value fnhw = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({s.f, s.n, s.oh, s.ow}, element), rows,
      ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{s.n, s.f, s.oh, s.ow}, element);
  return linalg::TransposeOp::create(b, loc, fnhw, init,
                                     ArrayRef<int64_t>{1, 0, 2, 3})
      ->getResult(0);
}

FailureOr<GemmLoops> GemmLoops::of(ArrayRef<AffineMap> maps,
                                   ArrayRef<int64_t> ranges) {
  GemmLoops loops;
  for (unsigned d = 0; d < ranges.size(); ++d) {
    bool inX = maps[0].isFunctionOfDim(d), inY = maps[1].isFunctionOfDim(d),
         inOut = maps[2].isFunctionOfDim(d);
    if (ShapedType::isDynamic(ranges[d]))
      return failure();
    if (inX && inOut && !inY)
      loops.m.push_back(d);
    else if (inY && inOut && !inX)
      loops.n.push_back(d);
    else if (inX && inY && !inOut)
      loops.k.push_back(d);
    else
      return failure();
  }
  if (loops.m.empty() || loops.n.empty() || loops.k.empty())
    return failure();
  return loops;
}

Value mlir::qtrain::gatherRowsByK(OpBuilder &b, Location loc, Value v,
                                  AffineMap map, ArrayRef<unsigned> rows,
                                  ArrayRef<unsigned> k,
                                  ArrayRef<int64_t> ranges) {
  MLIRContext *ctx = b.getContext();
  SmallVector<unsigned> axes(rows);
  axes.append(k.begin(), k.end());
  SmallVector<AffineExpr> replacements(ranges.size(),
                                       getAffineConstantExpr(0, ctx));
  SmallVector<int64_t> shape;
  for (auto [pos, d] : llvm::enumerate(axes)) {
    replacements[d] = getAffineDimExpr(pos, ctx);
    shape.push_back(ranges[d]);
  }
  AffineMap readMap =
      map.replaceDimsAndSymbols(replacements, {}, axes.size(), 0);
  Type element = cast<RankedTensorType>(v.getType()).getElementType();
  Value init = tensor::EmptyOp::create(b, loc, shape, element);
  Value copy =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{v}, ValueRange{init},
          ArrayRef<AffineMap>{
              readMap, AffineMap::getMultiDimIdentityMap(axes.size(), ctx)},
          SmallVector<utils::IteratorType>(axes.size(),
                                           utils::IteratorType::parallel),
          [](OpBuilder &nb, Location nl, ValueRange a) {
            linalg::YieldOp::create(nb, nl, a[0]);
          })
          .getResult(0);
  int64_t rowSize = 1, kSize = 1;
  ReassociationIndices rowGroup, kGroup;
  for (unsigned p = 0; p < axes.size(); ++p) {
    if (p < rows.size()) {
      rowSize *= shape[p];
      rowGroup.push_back(p);
    } else {
      kSize *= shape[p];
      kGroup.push_back(p);
    }
  }
  return tensor::CollapseShapeOp::create(
             b, loc, RankedTensorType::get({rowSize, kSize}, element), copy,
             ArrayRef<ReassociationIndices>{rowGroup, kGroup})
      .getResult();
}

namespace {
/// The (m..., n...) loop order of a GEMM over `loops`, its shape, its
/// [m, n] grouping, and the permutation from it to the output's order.
struct MNOrder {
  SmallVector<int64_t> shape, toOut, outShape;
  ReassociationIndices mGroup, nGroup;
  MNOrder(AffineMap out, const GemmLoops &loops, ArrayRef<int64_t> ranges) {
    SmallVector<unsigned> mn(loops.m);
    mn.append(loops.n.begin(), loops.n.end());
    for (auto [p, d] : llvm::enumerate(mn)) {
      shape.push_back(ranges[d]);
      (p < loops.m.size() ? mGroup : nGroup).push_back(p);
    }
    for (AffineExpr e : out.getResults()) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      toOut.push_back(llvm::find(mn, d) - mn.begin());
      outShape.push_back(ranges[d]);
    }
  }
};
} // namespace

Value mlir::qtrain::outputAsGemm(OpBuilder &b, Location loc, Value y,
                                 AffineMap out, const GemmLoops &loops,
                                 ArrayRef<int64_t> ranges) {
  MNOrder order(out, loops, ranges);
  Type element = cast<RankedTensorType>(y.getType()).getElementType();
  SmallVector<int64_t> fromOut(order.toOut.size());
  for (auto [outPos, mnPos] : llvm::enumerate(order.toOut))
    fromOut[mnPos] = int64_t(outPos);
  Value init = tensor::EmptyOp::create(b, loc, order.shape, element);
  Value mn =
      linalg::TransposeOp::create(b, loc, y, init, fromOut)->getResult(0);
  int64_t rows = 1, cols = 1;
  for (int64_t p : order.mGroup)
    rows *= order.shape[p];
  for (int64_t p : order.nGroup)
    cols *= order.shape[p];
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({rows, cols}, element), mn,
      ArrayRef<ReassociationIndices>{order.mGroup, order.nGroup});
}

Value mlir::qtrain::gemmAsOutput(OpBuilder &b, Location loc, Value c,
                                 AffineMap out, const GemmLoops &loops,
                                 ArrayRef<int64_t> ranges) {
  MNOrder order(out, loops, ranges);
  Type element = cast<RankedTensorType>(c.getType()).getElementType();
  Value expanded = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(order.shape, element), c,
      ArrayRef<ReassociationIndices>{order.mGroup, order.nGroup});
  Value init = tensor::EmptyOp::create(b, loc, order.outShape, element);
  return linalg::TransposeOp::create(b, loc, expanded, init, order.toOut)
      ->getResult(0);
}
