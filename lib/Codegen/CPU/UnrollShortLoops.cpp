//===- UnrollShortLoops.cpp - Fully unroll innermost loops of <= 4 --------===//
//
// qtrain-unroll-short-loops: fully unrolls every innermost scf.for with a
// constant trip count of at most `max-trip-count` (default 4) that does not
// accumulate into memory (those stay loops for
// qtrain-promote-accumulators). The copies
// of a body then share whatever they compute from the outer loops only,
// which canonicalization and LLVM merge: the Philox block of stochastic
// rounding, computed once for its four elements instead of four times.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_UNROLLSHORTLOOPSPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {
struct UnrollShortLoopsPass
    : mlir::qtrain::impl::UnrollShortLoopsPassBase<UnrollShortLoopsPass> {
  using UnrollShortLoopsPassBase::UnrollShortLoopsPassBase;
  void runOnOperation() override;
};
} // namespace

/// Whether `loop`'s body stores to a buffer it also loads from (a
/// reduction into memory, which qtrain-promote-accumulators keeps in a
/// register only while it is a loop).
static bool accumulatesInMemory(scf::ForOp loop) {
  llvm::SmallPtrSet<Value, 4> loaded;
  loop.getBody()->walk(
      [&](memref::LoadOp load) { loaded.insert(load.getMemRef()); });
  bool found = false;
  loop.getBody()->walk([&](memref::StoreOp store) {
    found |= loaded.contains(store.getMemRef());
  });
  return found;
}

void UnrollShortLoopsPass::runOnOperation() {
  if (maxTripCount < 1) {
    getOperation()->emitError()
        << "qtrain-unroll-short-loops: max-trip-count must be at least 1, got "
        << int64_t(maxTripCount);
    return signalPassFailure();
  }
  SmallVector<scf::ForOp> loops;
  getOperation()->walk([&](scf::ForOp loop) {
    bool innermost = true;
    loop.getBody()->walk([&](scf::ForOp) { innermost = false; });
    if (accumulatesInMemory(loop))
      return;
    std::optional<APInt> trips = loop.getStaticTripCount();
    if (innermost && trips && trips->getSExtValue() >= 1 &&
        trips->getSExtValue() <= maxTripCount)
      loops.push_back(loop);
  });
  for (scf::ForOp loop : loops) {
    if (failed(loopUnrollFull(loop)))
      return signalPassFailure();
    ++numUnrolled;
  }
}
