//===- LoopOrder.cpp - Unit-stride innermost loops for reductions ---------===//
//
// qtrain-loop-order: reorders the loops of linalg reductions (GEMMs,
// convolutions, the integer contractions of qtrain-integer-kernels) so that
// the innermost loop walks the output's last dimension, when that makes
// every operand unit-stride or invariant in it. Loops lowered from linalg
// run in the order of the op's dimensions; a GEMM written (m, n, k) then
// strides its right operand in the inner loop and accumulates into one
// scalar, which LLVM cannot vectorize for floats without reassociation.
// Moving n innermost gives unit-stride loads and stores that vectorize, and
// keeps every output element's sum in the same order (the reduction loops
// keep their relative order), so results are bit for bit the same.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/Passes.h"

#include "qtrain/Analysis/ConvAsGemm.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_LOOPORDERPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {
struct LoopOrderPass : mlir::qtrain::impl::LoopOrderPassBase<LoopOrderPass> {
  void runOnOperation() override;
};
} // namespace

/// The loop order for `op`, or nothing when it should stay as it is.
static std::optional<SmallVector<unsigned>>
innermostOutputOrder(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      op.getNumLoops() < 2)
    return std::nullopt;
  // An NCHW convolution on f32, or on i8 codes summed in i32, with static
  // shapes and at least qtrain-microkernels' default min-flops (4096) of
  // multiply-adds stays a named op: that pass runs it as an implicit GEMM
  // after bufferization. Smaller ones are reordered like any reduction.
  if (isa<linalg::Conv2DNchwFchwOp>(op.getOperation()) &&
      !op.hasDynamicShape()) {
    SmallVector<Type> types;
    for (Type t : op->getOperandTypes())
      types.push_back(getElementTypeOrSelf(t));
    int64_t macs = 1;
    for (int64_t range : op.getStaticLoopRanges())
      macs *= range;
    if (hasImplicitGemmKernel(types[0], types[1], types[2]) && macs >= 4096)
      return std::nullopt;
  }
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!out.isProjectedPermutation() || out.getNumResults() == 0)
    return std::nullopt;
  unsigned inner = cast<AffineDimExpr>(out.getResults().back()).getPosition();
  unsigned numLoops = op.getNumLoops();
  if (inner == numLoops - 1)
    return std::nullopt;
  // Every input must be invariant in `inner` or walk it in its last
  // dimension (possibly with another loop added, as a convolution's
  // input ow + kw).
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    for (auto [i, e] : llvm::enumerate(map.getResults()))
      if (e.isFunctionOfDim(inner) && i + 1 != map.getNumResults())
        return std::nullopt;
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (unsigned d = 0; d < numLoops; ++d)
    if (d != inner && iterators[d] == utils::IteratorType::parallel)
      order.push_back(d);
  for (unsigned d = 0; d < numLoops; ++d)
    if (iterators[d] != utils::IteratorType::parallel)
      order.push_back(d);
  order.push_back(inner);
  return order;
}

/// For an integer reduction whose innermost loop strides an input (a row
/// sum of a matrix read transposed) and that has a reduction loop every
/// input walks in its last dimension or ignores: that loop innermost. The
/// sum then reads contiguously into one accumulator, which
/// qtrain-promote-accumulators keeps in a register and LLVM vectorizes
/// (integer sums reassociate exactly; float ones are left alone).
static std::optional<SmallVector<unsigned>>
contiguousReductionOrder(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return std::nullopt;
  if (!llvm::all_of(op->getOperandTypes(), [](Type t) {
        return isa<IntegerType>(getElementTypeOrSelf(t));
      }))
    return std::nullopt;
  // The body must fold each element into the output with one commutative,
  // associative operation that is the output's only use (out = out + f(x),
  // min, max, and, or, xor), so any visiting order gives the same bits.
  Block *body = op.getBlock();
  BlockArgument out = body->getArguments().back();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Operation *combine = yield.getValues().front().getDefiningOp();
  if (!out.hasOneUse() || !combine || *out.getUsers().begin() != combine ||
      !isa<arith::AddIOp, arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp,
           arith::MinUIOp, arith::AndIOp, arith::OrIOp, arith::XOrIOp>(combine))
    return std::nullopt;
  unsigned numLoops = op.getNumLoops();
  auto walksInLast = [&](unsigned d) {
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      for (auto [i, e] : llvm::enumerate(map.getResults()))
        if (e.isFunctionOfDim(d) && i + 1 != map.getNumResults())
          return false;
    }
    return true;
  };
  if (walksInLast(numLoops - 1))
    return std::nullopt; // already contiguous
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned r = numLoops; r-- > 0;) {
    if (iterators[r] != utils::IteratorType::reduction || !walksInLast(r))
      continue;
    SmallVector<unsigned> order;
    for (unsigned d = 0; d < numLoops; ++d)
      if (d != r)
        order.push_back(d);
    order.push_back(r);
    return order;
  }
  return std::nullopt;
}

void LoopOrderPass::runOnOperation() {
  SmallVector<linalg::LinalgOp> ops;
  getOperation()->walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() &&
        (innermostOutputOrder(op) || contiguousReductionOrder(op)))
      ops.push_back(op);
  });
  IRRewriter rewriter(&getContext());
  for (linalg::LinalgOp op : ops) {
    std::optional<SmallVector<unsigned>> preferred = innermostOutputOrder(op);
    SmallVector<unsigned> order =
        preferred ? *preferred : *contiguousReductionOrder(op);
    rewriter.setInsertionPoint(op);
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      DictionaryAttr hints = op->getDiscardableAttrDictionary();
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        continue;
      generic = *generalized;
      // Lowering hints (qtrain.float_operands) stay with the product.
      generic->setDiscardableAttrs(hints);
    }
    if (succeeded(linalg::interchangeGenericOp(rewriter, generic, order)))
      ++numReordered;
  }
}
