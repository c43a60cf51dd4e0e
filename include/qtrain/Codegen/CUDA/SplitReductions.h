//===- SplitReductions.h - Reductions over many GPU threads -----*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// qtrain-map-step-to-gpu gives every output element of a linalg op one GPU
/// thread, which runs the op's reductions as a loop. A reduction with few
/// outputs and many elements (a quantizer's range: one output, every
/// element of a tensor; a bias gradient: one output per channel) would then
/// run on a handful of threads. This library lowers such an op to levels
/// that reduce in blocks of threads instead (each thread combines at most
/// `fanIn` values, then the block combines its threads' results in shared
/// memory), in a fixed order, so the result does not depend on how threads
/// are scheduled.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_CODEGEN_CUDA_SPLITREDUCTIONS_H
#define QTRAIN_CODEGEN_CUDA_SPLITREDUCTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::qtrain {

/// When a reduction is split.
struct ReductionSplitOptions {
  /// The most elements one thread of a split reduction combines; below 2
  /// nothing is split.
  int64_t fanIn = 32;
  /// Ops with at least this many output elements (parallel iterations) are
  /// left as they are: they give the GPU enough threads already.
  int64_t parallelBelow = 65536;
  /// Threads of a block that reduces in shared memory (rounded down to a
  /// power of two).
  int64_t threadsPerBlock = 256;
  /// Whether the block that finishes last combines the partial values of
  /// the last level itself (counting the blocks in device memory, between
  /// fences), instead of a launch of one thread per output after it.
  bool lastBlockCombines = true;
};

/// Whether `op` is a reduction the split serves: a generic on buffers with
/// static loops, its parallel loops first, every output written through a
/// permutation of the parallel loops and combined by one associative and
/// commutative op (add, mul, min, max, and, or, xor) of the output's value
/// and a value that does not read the outputs, no input sharing memory with
/// an output, fewer than `parallelBelow` parallel iterations and more than
/// four times `fanIn` reduced elements per output element.
bool isSplittableReduction(linalg::GenericOp op,
                           const ReductionSplitOptions &options);

/// Replaces `op` (isSplittableReduction) with levels of launches: each
/// block of `threadsPerBlock` threads T of the first combines up to
/// T x `fanIn` of an output element's values (thread t of block b the
/// values b T + t, b T + t + B T, ..., so that neighbouring threads read
/// neighbouring elements; then the block's threads' results in shared
/// memory, by halves), one partial value per block; while more than 4 x
/// `fanIn` partial values per output element are left, a level reduces them
/// the same way. The output's initial value (its element of `fills`, if the
/// output has one, else what the output holds) combined with the last
/// level's partial values in order is stored by the block of that level
/// that finishes last (`lastBlockCombines`: the blocks count themselves in
/// a zero-initialized global of the module, `qtrain_reduction_counters`,
/// between fences), or else by an scf.parallel (for qtrain-map-step-to-gpu
/// to map) of a thread per output element after it. The order of every
/// combination is fixed by the indices, not by scheduling. The partial
/// values live in buffers allocated before their level and freed after the
/// level that reads them.
void splitReductionToLoops(RewriterBase &rewriter, linalg::GenericOp op,
                           ArrayRef<std::pair<unsigned, Value>> fills,
                           const ReductionSplitOptions &options);

} // namespace mlir::qtrain

#endif // QTRAIN_CODEGEN_CUDA_SPLITREDUCTIONS_H
