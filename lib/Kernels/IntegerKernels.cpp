//===- IntegerKernels.cpp - Integer products of quantized operands --------===//
//
// qtrain-integer-kernels: in each kernel variant, the product of two
// operands quantized on integer grids becomes an exact integer contraction
// of their codes plus zero-point corrections, evaluated in f64 (see the
// pass description in Passes.td and docs/passes/integer-kernels.md).
//
//===----------------------------------------------------------------------===//

#include "qtrain/Kernels/Passes.h"

#include "qtrain/Analysis/ConvAsGemm.h"
#include "qtrain/Analysis/QuantizedOperand.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"

#include "mlir/IR/Remarks.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

#include <cmath>
#include <set>

namespace mlir::qtrain {
#define GEN_PASS_DEF_INTEGERKERNELSPASS
#include "qtrain/Kernels/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

/// One factor of a product: a quantizer and the zero paddings and
/// transposes between it and the product, in program order.
struct Factor {
  FakeQuantOp quant;
  int64_t bits = 0;
  SmallVector<Operation *> chain;
  /// The position of the factor's channel axis in the product's operand.
  std::optional<int64_t> channelPosition;
  /// The product's loop that indexes the channel, and its output position.
  int64_t channelLoop = -1, channelOutput = -1;
};

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

/// Traces `v` back through zero paddings and transposes to a quantizer of
/// constant bitwidth.
static FailureOr<Factor> traceFactor(Value v) {
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

/// The positions of the product operand each chain op pads.
static llvm::SmallBitVector paddedPositions(const Factor &f, unsigned rank) {
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

/// Rebuilds `f`'s chain on `source` (codes or a mask), whose element type is
/// an integer; zero padding pads with integer 0.
static Value replayChain(OpBuilder &b, Location loc, const Factor &f,
                         Value source) {
  Type element = cast<RankedTensorType>(source.getType()).getElementType();
  Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(element, 0));
  Value v = source;
  for (Operation *op : f.chain) {
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

/// An integer contraction term over the product's loops.
struct Term {
  Value value;
  /// Output positions collapsed to one iteration.
  llvm::SmallBitVector collapsed;
  /// The op that computes the sum (the value may be a reshape of it).
  Operation *sum = nullptr;
  /// Whether the sum's first operand is the second factor's codes.
  bool swapped = false;
};

struct Rewriter {
  OpBuilder &b;
  Location loc;
  linalg::LinalgOp op;
  SmallVector<AffineMap> maps;
  SmallVector<utils::IteratorType> iterators;
  SmallVector<int64_t> ranges;
  /// Accumulate every term in i64 (the plain reference form).
  bool wideSums = false;

  /// The loops only `mine` indexes, each only as a whole unpadded position.
  llvm::SmallBitVector privateLoops(unsigned mine, const Factor &f) {
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

  /// The positions of `map`'s results that are loops in `loops`.
  static llvm::SmallBitVector positionsOf(AffineMap map,
                                          const llvm::SmallBitVector &loops) {
    llvm::SmallBitVector positions(map.getNumResults());
    for (auto [i, e] : llvm::enumerate(map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(e);
          dim && loops.test(dim.getPosition()))
        positions.set(i);
    return positions;
  }

  static SmallVector<int64_t> collapse(ArrayRef<int64_t> shape,
                                       const llvm::SmallBitVector &positions) {
    SmallVector<int64_t> s(shape);
    for (unsigned i = 0; i < s.size(); ++i)
      if (positions.test(i))
        s[i] = 1;
    return s;
  }

  /// The 0/1 mask of factor `f` (operand `index`) with the positions in
  /// `ones` collapsed, as i8.
  Value mask(unsigned index, const Factor &f,
             const llvm::SmallBitVector &positions) {
    auto shape =
        cast<RankedTensorType>(op->getOperand(index).getType()).getShape();
    SmallVector<int64_t> src = sourceShape(f, shape, positions);
    Value one = arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(1));
    Value empty = tensor::EmptyOp::create(b, loc, src, b.getI8Type());
    Value ones = linalg::FillOp::create(b, loc, one, empty).getResult(0);
    return replayChain(b, loc, f, ones);
  }

  /// The reduction loops along which the mask of operand `mine` is
  /// constant (absent from it, or a whole unpadded position of it) and that
  /// the other operand indexes only as whole positions: the other operand
  /// can be summed over them before the term, which then runs them once.
  llvm::SmallBitVector foldableReductions(unsigned mine, const Factor &f) {
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

  /// `y` (operand `index`) summed over `loops`, as `acc`, with those
  /// positions kept as unit dimensions.
  Value presum(Value y, unsigned index, const llvm::SmallBitVector &loops,
               Type acc) {
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

  /// A zero-filled accumulator tensor.
  Value zeros(ArrayRef<int64_t> shape, Type acc) {
    Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(acc, 0));
    Value empty = tensor::EmptyOp::create(b, loc, shape, acc);
    return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  }

  /// init + x * y over `loops` with integer operands widened to `acc`
  /// (operands already of type `acc` are used as they are).
  linalg::GenericOp
  multiplyAccumulate(Value x, Value y, Value init, ArrayRef<AffineMap> loopMaps,
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

  /// The maps of C[m, n] += A[m, k] * B[k, n] (or B[n, k]) over (m, n, k).
  SmallVector<AffineMap> gemmMaps(bool rhsTransposed) {
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
  static SmallVector<utils::IteratorType> gemmIterators() {
    return {utils::IteratorType::parallel, utils::IteratorType::parallel,
            utils::IteratorType::reduction};
  }

  /// The accumulator for sums of `length` terms each at most `bound`.
  FailureOr<Type> accumulator(int64_t bound) {
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

  /// T1 of a 2-D NCHW/FCHW convolution as a GEMM: the input's codes laid
  /// out as (N*OH*OW) x (C*KH*KW) patches (im2col), times the filter's codes
  /// transposed to (C*KH*KW) x F, and the result put back to N x F x OH x OW.
  /// A GEMM's inner loop runs over F, where the short rows of the direct
  /// convolution (OW = 10) ran as scalar code.
  ///
  /// With `implicit` (8-bit codes the VNNI kernel serves) and 32-bit sums,
  /// T1 stays a convolution of the codes instead, which qtrain-microkernels
  /// runs as an implicit GEMM (no patch buffer).
  FailureOr<Term> convAsGemm(linalg::Conv2DNchwFchwOp conv, Value x, Value w,
                             int64_t bound, bool implicit) {
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
    linalg::GenericOp gemm = multiplyAccumulate(
        filter, patches, init, gemmMaps(/*rhsTransposed=*/false),
        gemmIterators(), *acc);
    Value t1 = fByRowsAsNchw(b, loc, gemm.getResult(0), *shape);
    return Term{t1, llvm::SmallBitVector(4), gemm, /*swapped=*/true};
  }

  /// T1 of a generic contraction whose operand reads windows (a
  /// convolution's weight gradient: x[n, c, oh + kh, ow + kw] times
  /// e[n, f, oh, ow]) as a GEMM C[m, n] = sum_k A[m, k] B[n, k]: each operand
  /// gathered by one copy into (its output loops, the reduction loops)
  /// order (im2col for the windowed one), the reduction innermost and
  /// contiguous in both, then C put back in the output's order. Fails (the
  /// caller keeps the direct form) on batch loops or reductions over one
  /// operand only.
  FailureOr<Term> windowsAsGemm(Value x, Value y, int64_t bound) {
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

  /// sum over the reduction loops of x * y, in an integer wide enough for
  /// `bound` (the largest |x * y|) times the reduction length. When
  /// `maskSide` names the operand that is a mask (of factor `f`), the other
  /// one is first summed over the reductions the mask is constant along.
  FailureOr<Term> contract(Value x, Value y, const llvm::SmallBitVector &loops,
                           int64_t bound, int maskSide = -1,
                           const Factor *f = nullptr) {
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
            b, loc, RankedTensorType::get(sizes, maskType.getElementType()),
            mask, ValueRange{}, ValueRange{}, ValueRange{},
            b.getDenseI64ArrayAttr(offsets), b.getDenseI64ArrayAttr(sizes),
            b.getDenseI64ArrayAttr(strides));
      }
    }
    llvm::SmallBitVector positions = positionsOf(maps[2], loops);
    auto outShape =
        collapse(cast<RankedTensorType>(op->getResult(0).getType()).getShape(),
                 positions);
    Value init = zeros(outShape, acc);
    linalg::GenericOp term =
        multiplyAccumulate(x, y, init, maps, iterators, acc);
    return Term{term.getResult(0), positions, term};
  }
};

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
  Rewriter r{b,
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
    codes[i] = replayChain(b, loc, f, quantize.getCodes());
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
    return Rewriter::positionsOf(maps[i], loops);
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
  t1->sum->setAttr(
      kCodeBitsAttrName,
      DenseI32ArrayAttr::get(t1->sum->getContext(), {first, second}));
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
  std::set<std::pair<int64_t, std::string>> reported;
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto variant = fn->getAttrOfType<DictionaryAttr>(kVariantAttrName);
    // Variants already specialized (they carry `kernel`) stay as they are.
    if (!variant || variant.get("kernel"))
      continue;
    auto bits = variant.getAs<IntegerAttr>("bits");
    SmallVector<linalg::LinalgOp> products;
    fn.walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(kProductAttrName))
        products.push_back(op);
    });
    int64_t codeBits = 0;
    bool anyFloat = false;
    if (f64Reference) {
      for (linalg::LinalgOp op : products) {
        if (!widenToF64(op)) {
          op->emitError("qtrain-integer-kernels: f64-reference: the product "
                        "is not a multiply-accumulate of two operands with a "
                        "static shape");
          return signalPassFailure();
        }
      }
      NamedAttrList attrs(variant);
      attrs.set("kernel", StringAttr::get(&getContext(), "f64"));
      fn->setAttr(kVariantAttrName, attrs.getDictionary(&getContext()));
      continue;
    }
    for (linalg::LinalgOp op : products) {
      auto site = op->getAttrOfType<IntegerAttr>(kLayerAttrName);
      auto product = op->getAttrOfType<StringAttr>(kProductAttrName);
      FailureOr<Reason> reason = rewrite(op, codeBits);
      if (failed(reason))
        return signalPassFailure();
      if (!*reason) {
        ++numInteger;
        continue;
      }
      ++numFloat;
      anyFloat = true;
      // The full-precision variant is f32 by design.
      if (bits && bits.getInt() == 0)
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
    StringRef kernel = anyFloat || codeBits == 0 ? "f32"
                       : codeBits == 8           ? "i8"
                                                 : "i16";
    NamedAttrList attrs(variant);
    attrs.set("kernel", StringAttr::get(&getContext(), kernel));
    fn->setAttr(kVariantAttrName, attrs.getDictionary(&getContext()));
  }
}
