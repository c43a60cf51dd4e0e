//===- Parallelize.cpp - Split big loop nests into parallel chunks --------===//
//
// qtrain-parallelize: tiles the outermost parallel loop of every bufferized
// linalg op with enough work into an scf.parallel over fixed chunks, which
// convert-scf-to-openmp turns into a worksharing loop on the OpenMP thread
// pool that the microkernels use as well. Only parallel loops are split, so
// every element is computed by one thread in the order the loop form
// computes it: results do not depend on the number of threads, and the
// chunks depend only on the shapes.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/Passes.h"

#include "qtrain/Analysis/BufferAliasing.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_PARALLELIZEPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {
struct ParallelizePass
    : mlir::qtrain::impl::ParallelizePassBase<ParallelizePass> {
  using ParallelizePassBase::ParallelizePassBase;
  void runOnOperation() override;
};
} // namespace

/// Whether splitting `op`'s loops across threads could let one chunk read
/// what another writes. Buffers one-shot bufferization made in place read
/// each element only in the iteration that writes it (it shares an input's
/// buffer with an output only for such accesses), which shows here as the
/// same value under the same indexing map; any other pair of operands on
/// the same buffer inside the function is refused. Function arguments are
/// taken as distinct, as bufferization's function-boundary analysis
/// guarantees for the step's own calls.
static bool mayRace(linalg::LinalgOp op) {
  for (OpOperand &init : op.getDpsInitsMutable()) {
    Value out = init.get();
    Value outRoot = rootOf(out);
    for (OpOperand &other : op->getOpOperands()) {
      if (&other == &init || !isa<MemRefType>(other.get().getType()))
        continue;
      Value otherRoot = rootOf(other.get());
      if (otherRoot != outRoot)
        continue;
      if (other.get() != out ||
          op.getMatchingIndexingMap(&other) != op.getMatchingIndexingMap(&init))
        return true;
    }
  }
  return false;
}

/// The loop to split: the outermost parallel loop of static extent >= 2 that
/// every output indexes with that loop alone in one of its dimensions (so
/// that chunks write disjoint parts of each output).
static std::optional<unsigned> splitLoop(linalg::LinalgOp op,
                                         ArrayRef<int64_t> ranges) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < iterators.size(); ++d) {
    if (iterators[d] != utils::IteratorType::parallel || ranges[d] < 2)
      continue;
    bool indexedByAll =
        llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &o) {
          AffineMap map = op.getMatchingIndexingMap(&o);
          return llvm::any_of(map.getResults(), [&](AffineExpr e) {
            auto dim = dyn_cast<AffineDimExpr>(e);
            return dim && dim.getPosition() == d;
          });
        });
    if (indexedByAll)
      return d;
  }
  return std::nullopt;
}

/// The chunk length for `chunks` chunks of `extent` iterations: a multiple
/// of `align`, and preferably one that divides the extent, so that every
/// chunk has the same static trip count (LLVM vectorizes a loop of unknown
/// trip count only without run-time alias checks, which the chunk bodies,
/// outlined by the OpenMP translation, need).
static int64_t chunkSize(int64_t extent, int64_t chunks, int64_t align) {
  int64_t smallest = llvm::alignTo(llvm::divideCeil(extent, chunks), align);
  for (int64_t t = smallest; t <= extent / 2; t += align)
    if (extent % t == 0)
      return t;
  return smallest;
}

void ParallelizePass::runOnOperation() {
  if (grain < 1 || maxChunks < 2) {
    getOperation()->emitError()
        << "qtrain-parallelize: grain must be at least 1 and max-chunks at "
           "least 2, got "
        << int64_t(grain) << " and " << int64_t(maxChunks);
    return signalPassFailure();
  }
  SmallVector<linalg::LinalgOp> candidates;
  getOperation()->walk([&](linalg::LinalgOp op) {
    if (op.hasPureBufferSemantics() && !op->getParentOfType<scf::ParallelOp>())
      candidates.push_back(op);
  });

  IRRewriter rewriter(&getContext());
  for (linalg::LinalgOp op : candidates) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic))
      continue;
    int64_t work = 1;
    for (int64_t r : ranges)
      work *= r;
    std::optional<unsigned> d = splitLoop(op, ranges);
    if (!d || mayRace(op))
      continue;
    int64_t extent = ranges[*d];
    // The innermost loop is the one LLVM vectorizes: split, it keeps at
    // least four vectors of f32 per chunk (a range reduction [rows, 256]
    // splits its 256 columns in 4, not in 64 strips of 4), starting on a
    // cache line. A loop that is the whole (collapsed) nest is the same.
    constexpr int64_t kLine = 16, kInnermostChunk = 4 * kLine;
    bool innermost = *d + 1 == ranges.size();
    int64_t chunks = std::min<int64_t>({work / grain, maxChunks, extent});
    if (innermost)
      chunks = std::min(chunks, extent / kInnermostChunk);
    if (chunks < 2)
      continue;
    int64_t align =
        innermost || (work / extent < kLine && extent >= kLine * chunks) ? kLine
                                                                         : 1;
    int64_t tile = chunkSize(extent, chunks, align);
    if (llvm::divideCeil(extent, tile) < 2)
      continue;

    SmallVector<int64_t> tileSizes(ranges.size(), 0);
    tileSizes[*d] = tile;
    linalg::LinalgTilingOptions options;
    options.setTileSizes(tileSizes).setLoopType(
        linalg::LinalgTilingLoopType::ParallelLoops);
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::TiledLinalgOp> tiled =
        linalg::tileLinalgOp(rewriter, op, options);
    if (failed(tiled)) {
      op->emitError("qtrain-parallelize: cannot split this op's loop ")
          << *d << " into chunks of " << tile;
      return signalPassFailure();
    }
    rewriter.eraseOp(op);
    ++numSplit;
  }
}
