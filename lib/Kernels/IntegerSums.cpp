//===- IntegerSums.cpp - Integer sums of a quantized product ----*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "IntegerSums.h"

#include "qtrain/Analysis/ConvAsGemm.h"
#include "qtrain/Analysis/QuantizedOperand.h"

#include <cmath>

using namespace mlir;
using namespace mlir::qtrain;
using namespace mlir::qtrain::intkernels;

FailureOr<Factor> intkernels::traceFactor(Value v) {
  DataMovementOptions options;
  options.pads = DataMovementOptions::Pads::StaticZero;
  QuantizedOperand traced = traceQuantizedOperand(v, options);
  FakeQuantOp quant = traced.quant;
  if (!quant)
    return failure();
  std::optional<int64_t> bits = quant.getConstantBits();
  if (!bits || *bits < 1 ||
      !cast<RankedTensorType>(quant.getType()).hasStaticShape())
    return failure();
  Factor f;
  f.quant = quant;
  f.bits = *bits;
  // Where the channel axis lands in the product's operand.
  if (std::optional<int64_t> axis = quant.getGranularity().getAxis())
    f.channelPosition = traced.tracedPosition(*axis);
  f.chain = std::move(traced.chain);
  return f;
}

llvm::SmallBitVector intkernels::paddedPositions(const Factor &f,
                                                 unsigned rank) {
  // Walk the chain forward, moving the set through transposes.
  llvm::SmallBitVector padded(rank);
  for (Operation *op : f.chain) {
    if (auto pad = dyn_cast<tensor::PadOp>(op)) {
      for (unsigned i = 0; i < rank; ++i)
        if (pad.getStaticLow()[i] != 0 || pad.getStaticHigh()[i] != 0)
          padded.set(i);
      continue;
    }
    auto perm = cast<linalg::TransposeOp>(op).getPermutation();
    llvm::SmallBitVector moved(rank);
    for (unsigned i = 0; i < rank; ++i)
      if (padded.test(perm[i]))
        moved.set(i);
    padded = moved;
  }
  return padded;
}

Value intkernels::replayChain(OpBuilder &b, Location loc,
                              ArrayRef<Operation *> chain, Value source) {
  Type element = cast<RankedTensorType>(source.getType()).getElementType();
  Value zero = arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getZeroAttr(element)));
  Value v = source;
  for (Operation *op : chain) {
    auto shape =
        llvm::to_vector(cast<RankedTensorType>(v.getType()).getShape());
    if (auto pad = dyn_cast<tensor::PadOp>(op)) {
      for (auto [i, size] : llvm::enumerate(shape))
        size += pad.getStaticLow()[i] + pad.getStaticHigh()[i];
      v = tensor::PadOp::create(b, loc, RankedTensorType::get(shape, element),
                                v, pad.getMixedLowPad(), pad.getMixedHighPad(),
                                zero);
      continue;
    }
    auto perm = cast<linalg::TransposeOp>(op).getPermutation();
    SmallVector<int64_t> out;
    for (int64_t p : perm)
      out.push_back(shape[p]);
    Value init = tensor::EmptyOp::create(b, loc, out, element);
    v = linalg::TransposeOp::create(b, loc, v, init, perm)->getResult(0);
  }
  return v;
}

/// The shape of `f`'s source tensor for a product operand of `shape`
/// (undoing the chain), with the operand positions in `ones` set to 1.
static SmallVector<int64_t> sourceShape(const Factor &f,
                                        ArrayRef<int64_t> shape,
                                        const llvm::SmallBitVector &ones) {
  SmallVector<int64_t> s(shape);
  for (unsigned i = 0; i < s.size(); ++i)
    if (ones.test(i))
      s[i] = 1;
  llvm::SmallBitVector collapsed = ones;
  for (Operation *op : llvm::reverse(f.chain)) {
    if (auto pad = dyn_cast<tensor::PadOp>(op)) {
      for (unsigned i = 0; i < s.size(); ++i)
        if (!collapsed.test(i))
          s[i] -= pad.getStaticLow()[i] + pad.getStaticHigh()[i];
      continue;
    }
    auto perm = cast<linalg::TransposeOp>(op).getPermutation();
    SmallVector<int64_t> in(s.size());
    llvm::SmallBitVector inCollapsed(s.size());
    for (unsigned i = 0; i < s.size(); ++i) {
      in[perm[i]] = s[i];
      if (collapsed.test(i))
        inCollapsed.set(perm[i]);
    }
    s = in;
    collapsed = inCollapsed;
  }
  return s;
}

llvm::SmallBitVector IntegerSums::privateLoops(unsigned mine, const Factor &f) {
  unsigned numLoops = ranges.size();
  llvm::SmallBitVector loops(numLoops);
  AffineMap map = maps[mine], other = maps[1 - mine], out = maps[2];
  auto shape =
      cast<RankedTensorType>(op->getOperand(mine).getType()).getShape();
  llvm::SmallBitVector padded = paddedPositions(f, shape.size());
  for (unsigned d = 0; d < numLoops; ++d) {
    if (iterators[d] != utils::IteratorType::parallel ||
        other.isFunctionOfDim(d) || !out.isFunctionOfDim(d))
      continue;
    bool whole = true;
    for (auto [i, e] : llvm::enumerate(map.getResults()))
      if (e.isFunctionOfDim(d) && (!isa<AffineDimExpr>(e) || padded.test(i)))
        whole = false;
    if (whole)
      loops.set(d);
  }
  return loops;
}

llvm::SmallBitVector
IntegerSums::positionsOf(AffineMap map, const llvm::SmallBitVector &loops) {
  llvm::SmallBitVector positions(map.getNumResults());
  for (auto [i, e] : llvm::enumerate(map.getResults()))
    if (auto dim = dyn_cast<AffineDimExpr>(e);
        dim && loops.test(dim.getPosition()))
      positions.set(i);
  return positions;
}

SmallVector<int64_t>
IntegerSums::collapse(ArrayRef<int64_t> shape,
                      const llvm::SmallBitVector &positions) {
  SmallVector<int64_t> s(shape);
  for (unsigned i = 0; i < s.size(); ++i)
    if (positions.test(i))
      s[i] = 1;
  return s;
}

Value IntegerSums::mask(unsigned index, const Factor &f,
                        const llvm::SmallBitVector &positions) {
  auto shape =
      cast<RankedTensorType>(op->getOperand(index).getType()).getShape();
  SmallVector<int64_t> src = sourceShape(f, shape, positions);
  Value one = arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(1));
  Value empty = tensor::EmptyOp::create(b, loc, src, b.getI8Type());
  Value ones = linalg::FillOp::create(b, loc, one, empty).getResult(0);
  return replayChain(b, loc, f.chain, ones);
}

llvm::SmallBitVector IntegerSums::foldableReductions(unsigned mine,
                                                     const Factor &f) {
  unsigned numLoops = ranges.size();
  llvm::SmallBitVector loops(numLoops);
  AffineMap map = maps[mine], other = maps[1 - mine];
  auto shape =
      cast<RankedTensorType>(op->getOperand(mine).getType()).getShape();
  llvm::SmallBitVector padded = paddedPositions(f, shape.size());
  auto whole = [&](AffineMap m, unsigned d, const llvm::SmallBitVector *pad) {
    for (auto [i, e] : llvm::enumerate(m.getResults()))
      if (e.isFunctionOfDim(d) &&
          (!isa<AffineDimExpr>(e) || (pad && pad->test(i))))
        return false;
    return true;
  };
  for (unsigned d = 0; d < numLoops; ++d)
    if (iterators[d] == utils::IteratorType::reduction &&
        other.isFunctionOfDim(d) && whole(map, d, &padded) &&
        whole(other, d, nullptr))
      loops.set(d);
  return loops;
}

Value IntegerSums::presum(Value y, unsigned index,
                          const llvm::SmallBitVector &loops, Type acc) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(y.getType());
  unsigned rank = type.getRank();
  llvm::SmallBitVector reduced = positionsOf(maps[index], loops);
  SmallVector<int64_t> kept;
  SmallVector<AffineExpr> keptExprs;
  SmallVector<utils::IteratorType> its;
  for (unsigned i = 0; i < rank; ++i) {
    its.push_back(reduced.test(i) ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
    if (!reduced.test(i)) {
      kept.push_back(type.getDimSize(i));
      keptExprs.push_back(getAffineDimExpr(i, ctx));
    }
  }
  Value init = zeros(kept, acc);
  auto sum = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{y}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                          AffineMap::get(rank, 0, keptExprs, ctx)},
      its, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value v = arith::ExtSIOp::create(nb, nl, acc, a[0]);
        linalg::YieldOp::create(
            nb, nl, arith::AddIOp::create(nb, nl, a[1], v).getResult());
      });
  // Back to y's rank: each unit dimension joins the next kept one (or the
  // last group when none follows).
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (unsigned i = 0; i < rank; ++i) {
    pending.push_back(i);
    if (!reduced.test(i)) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (!pending.empty() && !groups.empty())
    groups.back().append(pending.begin(), pending.end());
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(collapse(type.getShape(), reduced), acc),
      sum.getResult(0), groups);
}

Value IntegerSums::zeros(ArrayRef<int64_t> shape, Type acc) {
  Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(acc, 0));
  Value empty = tensor::EmptyOp::create(b, loc, shape, acc);
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

linalg::GenericOp IntegerSums::multiplyAccumulate(
    Value x, Value y, Value init, ArrayRef<AffineMap> loopMaps,
    ArrayRef<utils::IteratorType> loopIterators, Type acc) {
  return linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{x, y}, ValueRange{init},
      loopMaps, loopIterators, [&](OpBuilder &nb, Location nl, ValueRange a) {
        auto widen = [&](Value v) {
          return v.getType() == acc
                     ? v
                     : arith::ExtSIOp::create(nb, nl, acc, v).getResult();
        };
        Value p = arith::MulIOp::create(nb, nl, widen(a[0]), widen(a[1]));
        linalg::YieldOp::create(
            nb, nl, arith::AddIOp::create(nb, nl, a[2], p).getResult());
      });
}

SmallVector<AffineMap> IntegerSums::gemmMaps(bool rhsTransposed) {
  MLIRContext *ctx = b.getContext();
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  return {AffineMap::get(3, 0, {m, k}, ctx),
          AffineMap::get(3, 0,
                         rhsTransposed ? ArrayRef<AffineExpr>{n, k}
                                       : ArrayRef<AffineExpr>{k, n},
                         ctx),
          AffineMap::get(3, 0, {m, n}, ctx)};
}

SmallVector<utils::IteratorType> IntegerSums::gemmIterators() {
  return {utils::IteratorType::parallel, utils::IteratorType::parallel,
          utils::IteratorType::reduction};
}

FailureOr<Type> IntegerSums::accumulator(int64_t bound) {
  int64_t length = 1;
  for (auto [d, it] : llvm::enumerate(iterators))
    if (it == utils::IteratorType::reduction)
      length *= ranges[d];
  double worst = double(length) * double(bound);
  if (worst >= std::ldexp(1.0, 63))
    return failure();
  return worst < std::ldexp(1.0, 31) && !wideSums ? b.getI32Type()
                                                  : b.getI64Type();
}

FailureOr<Term> IntegerSums::convAsGemm(linalg::Conv2DNchwFchwOp conv, Value x,
                                        Value w, int64_t bound, bool implicit) {
  FailureOr<Type> acc = accumulator(bound);
  if (failed(acc))
    return failure();
  FailureOr<ConvGemmShape> shape = ConvGemmShape::of(conv);
  if (failed(shape))
    return failure();
  if (implicit && acc->isInteger(32)) {
    Value init = zeros({shape->n, shape->f, shape->oh, shape->ow}, *acc);
    auto codesConv = linalg::Conv2DNchwFchwOp::create(
        b, loc, TypeRange{init.getType()}, ValueRange{x, w}, ValueRange{init},
        conv.getStridesAttr(), conv.getDilationsAttr());
    return Term{codesConv.getResult(0), llvm::SmallBitVector(4), codesConv};
  }
  Value patches = im2col(b, loc, x, *shape);
  Value filter = filterAsFByDepth(b, loc, w, *shape);
  Value init = zeros({shape->f, shape->rows()}, *acc);
  // The filter's codes are the GEMM's first operand.
  linalg::GenericOp gemm = multiplyAccumulate(filter, patches, init,
                                              gemmMaps(/*rhsTransposed=*/false),
                                              gemmIterators(), *acc);
  Value t1 = fByRowsAsNchw(b, loc, gemm.getResult(0), *shape);
  return Term{t1, llvm::SmallBitVector(4), gemm, /*swapped=*/true};
}

FailureOr<Term> IntegerSums::windowsAsGemm(Value x, Value y, int64_t bound) {
  FailureOr<Type> acc = accumulator(bound);
  if (failed(acc))
    return failure();
  FailureOr<GemmLoops> loops = GemmLoops::of(maps, ranges);
  if (failed(loops))
    return failure();
  AffineMap out = maps[2];
  Value a = gatherRowsByK(b, loc, x, maps[0], loops->m, loops->k, ranges);
  Value bt = gatherRowsByK(b, loc, y, maps[1], loops->n, loops->k, ranges);
  int64_t mSize = cast<RankedTensorType>(a.getType()).getDimSize(0);
  int64_t nSize = cast<RankedTensorType>(bt.getType()).getDimSize(0);
  Value init = zeros({mSize, nSize}, *acc);
  linalg::GenericOp gemm = multiplyAccumulate(
      a, bt, init, gemmMaps(/*rhsTransposed=*/true), gemmIterators(), *acc);
  Value t1 = gemmAsOutput(b, loc, gemm.getResult(0), out, *loops, ranges);
  return Term{t1, llvm::SmallBitVector(out.getNumResults()), gemm};
}

FailureOr<Term> IntegerSums::contract(Value x, Value y,
                                      const llvm::SmallBitVector &loops,
                                      int64_t bound, int maskSide,
                                      const Factor *f) {
  FailureOr<Type> accOr = accumulator(bound);
  if (failed(accOr))
    return failure();
  Type acc = *accOr;
  if (maskSide >= 0 && !wideSums) {
    llvm::SmallBitVector folded = foldableReductions(maskSide, *f);
    if (folded.any()) {
      Value &summed = maskSide == 0 ? y : x;
      Value &mask = maskSide == 0 ? x : y;
      summed = presum(summed, 1 - maskSide, folded, acc);
      // The mask is constant along the folded loops: keep one slice.
      auto maskType = cast<RankedTensorType>(mask.getType());
      llvm::SmallBitVector at = positionsOf(maps[maskSide], folded);
      SmallVector<int64_t> offsets(maskType.getRank(), 0),
          strides(maskType.getRank(), 1);
      SmallVector<int64_t> sizes = collapse(maskType.getShape(), at);
      mask = tensor::ExtractSliceOp::create(
          b, loc, RankedTensorType::get(sizes, maskType.getElementType()), mask,
          ValueRange{}, ValueRange{}, ValueRange{},
          b.getDenseI64ArrayAttr(offsets), b.getDenseI64ArrayAttr(sizes),
          b.getDenseI64ArrayAttr(strides));
    }
  }
  llvm::SmallBitVector positions = positionsOf(maps[2], loops);
  auto outShape = collapse(
      cast<RankedTensorType>(op->getResult(0).getType()).getShape(), positions);
  Value init = zeros(outShape, acc);
  linalg::GenericOp term = multiplyAccumulate(x, y, init, maps, iterators, acc);
  return Term{term.getResult(0), positions, term};
}
