//===- Passes.td - qtrain CPU codegen ----------------------*- tablegen -*-===//
//
// CPU code generation on tensors, buffers and loops: the passes that
// qtrain-lower-cpu runs around upstream bufferization and the conversions to
// the LLVM dialect (lib/Pipelines).
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_CODEGEN_CPU_PASSES_TD
#define QTRAIN_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseDecodesPass : Pass<"qtrain-fuse-decodes"> {
  let summary = "Decode saved float codes inside the elementwise loops that read them";
  let description = [{
    `convert-qtrain-to-linalg` lowers `qtrain.decode_float` to an
    elementwise `linalg.generic` marked `qtrain.decode`, which materializes
    a whole f32 tensor for its reader. This pass fuses each such loop into
    every elementwise `linalg.generic` that reads it
    (`linalg::fuseElementwiseOps`), so the values are decoded as they are
    read and the f32 tensor is never stored (the backward pass of a ReLU
    reads its saved input's codes directly). Readers with reductions (the
    weight-gradient contractions, which `qtrain-conv-to-gemm` turns into
    GEMMs) keep the decoded tensor. A strided slice of a decoded tensor
    (the windows a pooling gradient reads) becomes the decode of the slice
    of the codes, so only the slice is decoded. A decode left without
    readers is erased. Part of `qtrain-lower-cpu`, right after the
    conversion.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def DropAnnotationsPass : Pass<"qtrain-drop-annotations", "::mlir::ModuleOp"> {
  let summary = "Remove qtrain's discardable attributes before lowering";
  let description = [{
    Removes every `qtrain.*` discardable attribute from ops, function
    arguments and results, except `qtrain.code_bits` (a lowering hint that
    qtrain-microkernels consumes). Once the manifest has been read and the variants
    materialized, the annotations have done their job; some are tied to
    tensor types (`qtrain.init`) that bufferization changes, and LLVM IR has
    no place for any of them. First pass of `qtrain-lower-cpu`.
  }];
}

def ShareFunctionsPass : Pass<"qtrain-share-functions", "::mlir::ModuleOp"> {
  let summary = "One body for private functions equal up to scalar constants";
  let description = [{
    `qtrain-materialize-variants` writes one function per (site, product,
    bitwidth); after `convert-qtrain-to-linalg` the bitwidths of a site's
    variants differ only in a few scalar constants (the largest code, the
    zero point), and sites of the same shapes (the blocks of a ResNet stage)
    have the same variants. This pass groups the private, call-free
    functions whose bodies are equal up to the values of integer (wider than
    i1) and float `arith.constant`s, makes one `NAME_shared` function per
    group that takes the constants that differ as trailing arguments, calls
    it from every call of a member with the member's values, and erases the
    members. Index constants (loop bounds, offsets) must be equal, and so
    must every other attribute, except that `qtrain.code_bits` hints are
    equal when neither selects the bit-serial GEMM (the only kernel that
    reads them). A function referenced other than by `func.call` keeps its
    body. The results are the same bits: the constants become values, and
    nothing folds floating-point arithmetic differently for a value. Part of
    `qtrain-lower-cpu`, after the first canonicalization, so that the rest
    of the lowering and LLVM compile each body once (docs/performance.md,
    Compile time).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect"
  ];
  let statistics = [
    Statistic<"numShared", "shared", "Shared functions made">,
    Statistic<"numMerged", "merged", "Functions replaced by a shared one">,
    Statistic<"numArguments", "arguments", "Constants passed as arguments">,
  ];
}

def ConvToGemmPass : Pass<"qtrain-conv-to-gemm"> {
  let summary = "Run f32 windowed contractions (weight gradients) as GEMMs, "
                "large padded convolutions in batch chunks";
  let description = [{
    Rewrites each f32 multiply-accumulate `linalg.generic` on static tensors
    that reads windows of an operand (a convolution's weight gradient,
    x[n, c, oh + kh, ow + kw] * e[n, f, oh, ow]) and whose loops are each an
    M, N or K loop: both operands gathered into (rows, K) order by one copy
    each, one GEMM C[m, n] += A[m, k] B[n, k], the result put back in the
    output's order. The GEMM is what qtrain-microkernels serves; the direct
    loops run over rows as short as OW. Results differ from the direct form
    only by summation order. Part of `qtrain-lower-cpu`, before
    `qtrain-loop-order`.

    When a K loop is a batch (the first dimension of both operands) and the
    two gathered operands would exceed `max-gathered` elements, the batch
    is split into chunks (halving it until they fit): an `scf.for` over the
    chunks gathers each chunk's patches and accumulates its GEMM into C.
    The patch buffer then holds one chunk instead of the whole batch:
    convnet's conv2 weight gradient gathered 26 M floats (104 MB) at once.

    f32 convolutions (`linalg.conv_2d_nchw_fchw`) are left as they are:
    qtrain-microkernels runs them as implicit GEMMs after bufferization,
    which needs no patch buffer (an explicit im2col of convnet's conv2
    input gradient is 50 M floats). But a convolution of a zero-padded
    input (an input gradient: the output gradient padded by the kernel
    extent) whose padded input exceeds `max-gathered` elements runs in
    batch chunks the same way: each chunk pads its own slice and
    convolves it into its slice of the result, so the padded copy of the
    whole batch (convnet's conv2: 25.7 MB) never exists. Images are
    independent, so the results are the same bit for bit.
  }];
  let options = [
    Option<"maxGathered", "max-gathered", "int64_t", /*default=*/"1048576",
           "Most elements the two gathered operands of one GEMM may hold "
           "before the batch is split into chunks (0: never split)">,
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FoldTransposesPass : Pass<"qtrain-fold-transposes"> {
  let summary = "Read transposed tensors in place through permuted maps";
  let description = [{
    A `linalg.generic` input that is the result of a `linalg.transpose` (on
    tensors) is replaced by the transpose's input, read through the
    permuted indexing map; the transpose is removed once nothing else reads
    it. The integer products' GEMMs read their weights' codes this way (the
    codes of W for y = x W^T): the microkernels take any strides. A sum of
    a single input is folded only when the original is still read
    contiguously in the innermost loop (a strided reduction would gather
    every element); elementwise ops always fold. Part
    of `qtrain-lower-cpu`, before `qtrain-loop-order`. The values read are
    the same, so results are bit for bit unchanged.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def CollapseDimsPass : Pass<"qtrain-collapse-dims"> {
  let summary = "Merge the contiguous loops of linalg.generic into one";
  let description = [{
    Merges each run of two or more adjacent loops of a `linalg.generic` on
    statically shaped tensors into one loop, when the loops have the same
    iterator type and every indexing map keeps the run adjacent and in
    order (so every operand is contiguous along it). The operands are
    reshaped with `tensor.collapse_shape`, the results back with
    `tensor.expand_shape`. Generics using `linalg.index` are left alone.

    Elementwise code then runs as one long loop (a ReLU over
    [128, 32, 26, 26] as 2768896 elements) and reductions over several
    dimensions read long rows, which LLVM vectorizes at full width with no
    short remainder loops. The merged loops keep their row-major order, so
    reductions keep theirs and the results are the same bit for bit.
    `qtrain-lower-cpu` runs it before `qtrain-loop-order`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LoopOrderPass : Pass<"qtrain-loop-order"> {
  let summary = "Put the output's last dimension innermost in reductions";
  let description = [{
    Lowered linalg ops run their loops in the order of their dimensions. In
    a GEMM written (m, n, k) or a convolution (n, f, oh, ow, c, kh, kw) the
    innermost loop is a reduction: it strides one operand and accumulates
    into a scalar, which LLVM cannot vectorize for floats (that would
    reassociate the sum). This pass reorders the loops of every linalg op
    with reductions to: the other parallel loops, the reduction loops (in
    their order), then the loop of the output's last dimension, provided
    every input is invariant in that loop or walks it in its own last
    dimension. Named ops that it reorders become linalg.generic.

    Each output element's sum keeps its order (the reduction loops keep
    theirs), so the results are the same bit for bit; only the traversal
    changes, to unit-stride loads and stores that vectorize.
    `qtrain-lower-cpu` runs it before bufferization.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numReordered", "reordered", "Linalg ops whose loops moved">,
  ];
}

def ReassociateSumsPass : Pass<"qtrain-reassociate-sums"> {
  let summary = "Let the f32 sums of linalg reductions vectorize";
  let description = [{
    Marks `reassoc` the f32 `arith.addf` that folds each element into the
    accumulator of a `linalg.generic` reduction (`acc + x`, the output's
    block argument used only there, the sum yielded), so that LLVM may keep
    vector partial sums where the reduction loop is innermost: a bias
    gradient summing 576 contiguous elements per row becomes 16-wide adds
    instead of a chain of dependent scalar additions. The results stay
    deterministic but are no longer summed in loop order (ulp-level
    differences). Integer sums (exact) and f64 epilogues are not touched.
    `qtrain-lower-cpu` runs it after `qtrain-loop-order`; f32 GEMMs and
    convolutions, which the microkernels run, are not affected.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numReassociated", "reassociated", "Sums marked reassoc">,
  ];
}

def ReuseDyingInputsPass : Pass<"qtrain-reuse-dying-inputs"> {
  let summary = "Write elementwise results into the buffer of a dying input";
  let description = [{
    For each all-parallel `linalg.generic` on tensors whose init is a
    `tensor.empty` (possibly reshaped) that the body does not read: if an
    input has the result's type, is read through the identity map and is an
    op's result that only this generic reads (looking through reshapes), it
    becomes the init too. One-shot bufferization then writes the result
    into the input's buffer instead of allocating a second one while the
    input is still alive. The computation does not change.
    `qtrain-lower-cpu` runs it right before bufferization.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ElideResultCopiesPass
    : Pass<"qtrain-elide-result-copies", "::mlir::func::FuncOp"> {
  let summary = "Let a call write a function's out-parameter directly";
  let description = [{
    After `buffer-results-to-out-params`, a function that returns what a
    call computed allocates a buffer for the call's out-parameter, then
    copies it into its own:

    ```mlir
    func.func @site0_forward_b3(%x: memref<8x16xf32>, %out: memref<8x16xf32>) {
      %cst = arith.constant 7.0 : f32
      %alloc = memref.alloc() : memref<8x16xf32>
      call @site0_forward_shared(%x, %cst, %alloc) : (...) -> ()
      memref.copy %alloc, %out : memref<8x16xf32> to memref<8x16xf32>
      return
    }
    ```

    This pass passes `%out` to the call instead and drops the buffer and
    the copy. Every public variant that `qtrain-share-functions` turned into
    a call of its shared body has that shape, and its copy, a parallel loop
    after `qtrain-copies-to-linalg` and `qtrain-parallelize`, was a fifth of
    a ResNet's LLVM code generation (docs/performance.md, Compile time).

    It applies when the copy's target is an argument of the function used by
    nothing else, its source a `memref.alloc` of the same type, and every
    other use of that buffer is an operand of a `func.call` before the copy
    in the same block (calls return no memref here, so no alias of it
    outlives the copy). Buffers that code of the function itself writes keep
    their copy: LLVM knows a fresh allocation aliases nothing, an argument
    may alias the others, and the vectorized reassociated sums would round
    differently. The exception are the step's entry points, `@train_step`
    and `@eval_step`: the step ABI never lets their buffers overlap where
    written, so the pass marks their buffer arguments `llvm.noalias`, which
    LLVM treats as it treats fresh allocations, and their own code may then
    write an out-parameter (the new parameters, momentum and state). Function arguments are taken not
    to alias each other, as One-Shot Bufferize takes them at function
    boundaries; the bundle's ABI passes distinct buffers
    (docs/bundle.md). Runs before the deallocation pipeline, which then has
    fewer buffers to free.

    With `elementwise-writers` (the CUDA step, where every linalg op and
    every copy is a kernel launch), the buffer may instead be written by
    one elementwise `linalg.generic` right before the copy (only ops
    without memory effects between them) that does not read its output:
    the generic then writes the out-parameter. Each of its other inputs
    must be a buffer that cannot be the out-parameter (an allocation of
    the function) or be read with the output's indexing map, element for
    element, so that even an input that is the out-parameter's memory is
    read at each element before that element is written, by the same
    iteration.
  }];
  let options = [
    Option<"elementwiseWriters", "elementwise-writers", "bool",
           /*default=*/"false",
           "Also let an elementwise linalg.generic right before the copy "
           "write the out-parameter">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numElided", "elided", "Copies into out-parameters elided">,
  ];
}

def FreeEarlyPass : Pass<"qtrain-free-early"> {
  let summary = "Free each buffer right after its last use, allocate it "
                "right before its first";
  let description = [{
    MLIR's ownership-based buffer deallocation frees the buffers allocated
    in a block at the end of that block: a training step, one block, holds
    every buffer it allocates until it returns, so its peak memory is the
    sum of all of them. This pass moves each `memref.dealloc` to right
    after the last op of its block that uses the buffer or any alias of it
    (views, and values it flows to through region branches, by
    `BufferViewFlowAnalysis`); an op with regions that uses it inside counts
    as a use. A buffer used outside the block, or reached through one of the
    block's arguments, keeps its dealloc where it is; so do deallocs inside
    ownership guards (`scf.if`) for buffers defined outside them.

    ```mlir
    %a = memref.alloc() : memref<4xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
    linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
    %b = memref.alloc() : memref<4xf32>
    ...
    memref.dealloc %a : memref<4xf32>   // moves to right after linalg.copy
    ```

    Each `memref.alloc` moves the other way, to right before the first op
    of its block that uses it (bufferization allocates a `tensor.empty`'s
    buffer where the empty tensor is defined, which can be long before the
    op that fills it). Every view of the buffer is made by such a user, and
    its size operands are defined before it, so the move is safe.
  }];
  let statistics = [
    Statistic<"numMoved", "moved-deallocs", "Deallocations moved earlier">,
    Statistic<"numSunk", "moved-allocs", "Allocations moved later">,
  ];
}

def CopiesToLinalgPass : Pass<"qtrain-copies-to-linalg"> {
  let summary = "Rewrite memref.copy as linalg.copy";
  let description = [{
    After bufferization, strided copies (the dilated adjoint of a strided
    convolution, the window offsets of pooling gradients) are `memref.copy`
    ops, which the LLVM lowering turns into calls to `memrefCopy` from MLIR's
    C runner utilities. As `linalg.copy` they become loops like every other
    kernel, so a bundle's shared object needs no MLIR library at run time.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def MicrokernelsPass : Pass<"qtrain-microkernels", "::mlir::ModuleOp"> {
  let summary = "Run bufferized GEMMs on qtrain's CPU microkernels";
  let description = [{
    Rewrites each bufferized linalg contraction that is one GEMM (exactly one
    M, N and K loop, no batch loop, a multiply-accumulate body) and whose
    element types a microkernel of `runtime/include/qtrain/microkernels.h`
    serves into a call to it:

    | operands | accumulator | body | call |
    |---|---|---|---|
    | f32, f32 | f32 | mulf, addf | `qtrain_mk_gemm_f32` |
    | i8, i8 (sign-extended) | i32 | extsi, muli, addi | `qtrain_mk_gemm_s8s8s32` |
    | same, `qtrain.code_bits = [a, b]` with a * b <= 4 | i32 | same | `qtrain_mk_gemm_bitserial` |
    | i16, i16 (sign-extended) | i32 | extsi, muli, addi | `qtrain_mk_gemm_s16s16s32` |
    | f32 convolution (NCHW, FCHW) | f32 | named op | `qtrain_mk_conv2d_nchw_f32` |

    `qtrain.code_bits` is the hint qtrain-integer-kernels leaves on an
    integer product's main contraction: its codes are centred a-bit and
    b-bit integers. With at most 4 bit-plane pairs (1x1 ... 2x2, 1x4) the
    bit-serial kernel (AND + popcount) is faster than 8-bit VNNI, so 1- and
    2-bit products get cheaper as bits fall. The pass removes the hint from
    every op.

    Operands keep their layout: each is passed as its base pointer, offset
    and the strides of its M/K, K/N or M/N dimensions (taken with
    `memref.extract_strided_metadata`), so transposed views and subviews are
    served without a copy. An input that is a fresh buffer filled by a 2-D
    `linalg.transpose` only for this GEMM (the `W^T` of a linear layer, the
    transposed filter of an im2col convolution) is read from the
    transpose's source with its strides permuted, and the transpose and
    its buffer are removed, when nothing writes the source in between. The kernels accumulate into the output buffer,
    as the contraction does into its init. Integer results are bit-identical
    to the loop form (both wrap in 32 bits and are exact whenever the sum
    fits, which qtrain-integer-kernels guarantees when it picks i32); f32
    results differ by summation order (FMA, K-blocked).

    A bufferized f32 `linalg.conv_2d_nchw_fchw` (static shapes) becomes
    `qtrain_mk_conv2d_nchw_f32`: an implicit GEMM per image, the patches
    packed from the input straight into the kernel's panels, with no im2col
    buffer (each operand passed as base, offset and its four strides).

    Products below `min-flops` multiply-adds stay loops (the call and the
    packing cost more than they save). The bundle's model.so links the
    kernels' static library.
  }];
  let options = [
    Option<"minFlops", "min-flops", "int64_t", /*default=*/"4096",
           "Smallest M*N*K rewritten into a call">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect", "::mlir::qtrain::QTrainDialect"
  ];
  let statistics = [
    Statistic<"numCalls", "microkernel-calls", "GEMMs rewritten into calls">,
    Statistic<"numFoldedTransposes", "folded-transposes",
              "Transposed copies of inputs read in place instead">,
  ];
}

def UnrollShortLoopsPass : Pass<"qtrain-unroll-short-loops"> {
  let summary = "Fully unroll innermost scf.for loops of at most 4 iterations";
  let description = [{
    Fully unrolls every innermost `scf.for` whose trip count is a constant
    between 1 and `max-trip-count`. The copies of the body then share what
    they compute from the outer loops only, which canonicalization and LLVM
    merge. `convert-qtrain-to-linalg` lays stochastic rounding out as
    [N / 4, 4] with the Philox block a function of the outer loop, so after
    this pass one Philox4x32-10 serves four elements instead of being
    recomputed for each. `qtrain-lower-cpu` runs it after
    `convert-linalg-to-loops`.
  }];
  let options = [
    Option<"maxTripCount", "max-trip-count", "int64_t", /*default=*/"4",
           "Largest trip count unrolled">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numUnrolled", "unrolled", "Loops fully unrolled">,
  ];
}

def PromoteAccumulatorsPass : Pass<"qtrain-promote-accumulators"> {
  let summary = "Carry loop-invariant accumulators in registers";
  let description = [{
    After `convert-linalg-to-loops` a reduction loads and stores its output
    element on every iteration; LLVM does not move such an accumulator into
    a register for these loops (its loop vectorizer reports "write to a loop
    invariant address"), so integer sums and min/max stay scalar and every
    sum pays a store-to-load round trip. In an `scf.for` that loads and
    stores the same element of a loop-invariant memref at loop-invariant
    indices, directly in its body, when nothing else in the loop touches
    memory that element could be part of (distinct allocations and function
    arguments do not alias; anything unknown counts as touching it), the
    element becomes an iter_arg: loaded before the loop, stored after it.
    Innermost loops first, then outward while the pair stays invariant.
    The same values are added in the same order: results are bit for bit
    unchanged. Part of `qtrain-lower-cpu`, after the loops are made.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numPromoted", "promoted-accumulators", "Accumulators carried in registers">,
  ];
}

def ParallelizePass : Pass<"qtrain-parallelize"> {
  let summary = "Split the loops of big bufferized linalg ops into parallel chunks";
  let description = [{
    Tiles the outermost parallel loop of each bufferized linalg op (static
    loop ranges, at least `grain` iterations in all) into an `scf.parallel`
    over at most `max-chunks` chunks of that loop (`linalg::tileLinalgOp`
    with parallel loops), which `convert-scf-to-openmp` later turns into a
    worksharing loop on the OpenMP thread pool the microkernels run on. The
    loop split is one that indexes a dimension of every output by itself, so
    chunks write disjoint parts; reduction loops are never split, so every
    element is computed by one thread in the order of the loop form, and the
    chunks depend only on the shapes: results are bit for bit those of one
    thread, at any thread count. The innermost loop (the vectorized one)
    keeps at least 64 elements per chunk, and it and a loop that is the
    whole nest are cut at multiples of 16; chunk lengths divide the extent
    where they can, so that chunk bodies have static trip counts. Ops that
    read a buffer they write other than element by element (an input on
    the output's buffer under another map or through another view) stay
    sequential. Part of `qtrain-lower-cpu`, after `qtrain-microkernels`.
  }];
  let options = [
    Option<"grain", "grain", "int64_t", /*default=*/"32768",
           "Loop iterations per chunk below which an op is not split further">,
    Option<"maxChunks", "max-chunks", "int64_t", /*default=*/"64",
           "Most chunks one op is split into">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
  let statistics = [
    Statistic<"numSplit", "split-ops", "Ops split into parallel chunks">,
  ];
}

#endif // QTRAIN_CODEGEN_CPU_PASSES_TD
