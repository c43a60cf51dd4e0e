//===- Passes.td - qtrain CUDA codegen ---------------------*- tablegen -*-===//
//
// The CUDA target's code generation (docs/cuda.md): GPU kernels per kernel
// site and precision, which qtrain-compile --target=cuda:CHIP lowers through
// NVVM to PTX and ptxas to a cubin.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_CODEGEN_CUDA_PASSES_TD
#define QTRAIN_CODEGEN_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def CudaGemmKernelsPass
    : Pass<"qtrain-cuda-gemm-kernels", "::mlir::ModuleOp"> {
  let summary = "A GPU GEMM kernel per kernel site, product and precision";
  let description = [{
    For every product of every kernel site (each `qtrain.kernel`, so this
    runs after `qtrain-form-kernels`), appends to the `gpu.module
    @qtrain_cuda` (created with the `#nvvm.target` of `chip`) one kernel per
    kind of `kinds`: the product as the dense GEMM
    `C[b, i, j] = sum_k A[b, i, k] B[b, j, k]` (`lib/Codegen/CUDA/GemmKernel.h`),
    with m the loops of the first operand and the result, n those of the
    second operand and the result, k the loops of both operands (a
    convolution's channels and window, the batch of a weight gradient) and
    batch the loops of all three. A convolution's operands are then its
    patches (im2col), gathered K-contiguous like the CPU's GEMMs gather
    them.

    ```mlir
    gpu.module @qtrain_cuda [#nvvm.target<chip = "sm_90", features = "+ptx86">] {
      gpu.func @qtrain_gemm_bf16_b1_m128_n120_k400(
          %a: memref<51200xi16>, %b: memref<48000xi16>, %c: memref<15360xf32>)
          kernel attributes {known_block_size = array<i32: 128, 1, 1>,
            qtrain.gemm = {kind = "bf16", a = "bf16", b = "bf16", c = "f32",
                           batch = 1, m = 128, n = 120, k = 400,
                           grid = [4, 2, 1], block = [128, 1, 1]}} {
        ... nvvm.mma.sync ... {shape = #nvvm.shape<m = 16, n = 8, k = 16>} ...
      }
    }
    ```

    Shapes and kinds that coincide share one kernel. fp8 kernels read
    e4m3, and e5m2 for the operand that is an error (the quantizer of role
    `error` behind it): e4m3 x e4m3 forward, e5m2 x e4m3 backward. i8
    kernels read centred 8-bit codes and sum them exactly in s32, which
    holds fewer than 2^17 terms; a longer product gets no i8 kernel (a
    warning). The `gpu.module` lists what each product got in
    `qtrain.sites` (`[{site, product, kernels = {kind = name}}]`), which
    `qtrain-compile` writes to the manifest. A product that is not a
    contraction of two operands with static loops is an error. Every kind
    gets a remark with its kernel count.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "The NVIDIA architecture of the kernels (sm_80 and newer; fp8 "
           "needs sm_89)">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx86\"",
           "PTX features of the NVVM target">,
    Option<"kinds", "kinds", "std::string",
           /*default=*/"\"f32,tf32,bf16,fp8,i8\"",
           "The kernel kinds to generate, comma-separated">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def FloatOperandsPass : Pass<"qtrain-float-operands", "::mlir::ModuleOp"> {
  let summary = "Mark the step's products whose operands hold fp8-sized "
                "float formats";
  let description = [{
    For the CUDA step of the float-format method (PAPERS.md section 4):
    marks each f32 product on tensors (a linalg op with two inputs, one
    init, reduction loops and a `c + a * b` body) whose two operands hold
    values of reduced float formats with
    `qtrain.float_operands = [#qtrain.float<A>, #qtrain.float<B>]`, where
    each format has an fp8 form (`getFp8Operand` of
    `include/qtrain/Codegen/CUDA/GemmKernel.h`: FP(4, 3, x) on e4m3,
    FP(5, 2, x) on e5m2) or holds only bf16 values (`isBf16Exact`).
    `qtrain-gpu-gemms` then runs the product on an fp8 or bf16 kernel.

    An operand holds a format when a `qtrain.round_float` or
    `qtrain.decode_float` made its values, seen through ops that only move
    values: `tensor.collapse_shape`, `expand_shape`, `extract_slice`,
    `insert_slice` (both sides), `pad` with 0.0, `linalg.transpose`, a
    `linalg.generic` that copies its one input, and zero fills (0 is in
    every format).

    A rounding or decoding that can be promoted at run time (`or <high> if
    %promoted`) holds the high format once promoted, which has no fp8 form.
    Such a product becomes `scf.if` on the disjunction of its operands'
    flags: the f32 product when some operand is promoted, the marked one
    otherwise. The flags are host values of the step, so the choice costs
    no wait on the device.

    `qtrain-lower-cuda-step` runs it first, on the materialized step,
    before the qtrain ops are lowered.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::qtrain::QTrainDialect"
  ];
}

def Fp8ErrorProductsPass : Pass<"qtrain-fp8-error-products",
                                "::mlir::ModuleOp"> {
  let summary = "Products of fp8 errors and fixed-point factors on fp8 or "
                "bf16 tensor cores";
  let description = [{
    For the CUDA step of a bundle with fp8 errors (`--grad-format=e5m2`):
    a product (a linalg op on tensors with two inputs, one init, reduction
    loops and a `c + a * b` f32 body) of an e5m2 error (the result of a
    `qtrain.round_float ... <5, 2, 0> scaled(M)`, M <= 57344, directly or
    as an argument of a function whose every call passes one) and a
    fixed-point factor of 1 to 8 bits quantized per tensor and seen through
    transposes (the activation of a weight gradient, dW = sum E * A)
    becomes

        y = init + 2^k * (s * T1 + l' * T3)
        T1 = sum v * c        (marked qtrain.float_operands)
        T3 = sum v            (over the reductions)

    with v = E * 2^-k (k from the error's largest magnitude, as the
    rounding computes it: v are e5m2 values), c the factor's centred codes
    (`qtrain.quantize`, as f32) and s, l' = low + 2^(b-1) s its scale and
    offset. T1 carries the formats `qtrain-gpu-gemms` runs it with: the
    codes as FP(4, 3, 1) (e4m3 values) up to 5 bits, FP(4, 7, 0) (bf16
    values) above; v as the FP(5, 2, x) whose fp8 form under `fp8-scale`
    is e5m2 unscaled. So a weight gradient runs on the fp8 tensor cores
    (e5m2 x e4m3) up to 5 bits and on the bf16 ones up to 8, on exact
    operands with f32 sums, instead of f32 FMAs.

    `qtrain-lower-cuda-step` runs it first, on the materialized step.
    Products whose other factor is quantized per channel (the input
    gradients), padded, or not a fixed-point quantizer stay f32, with a
    remark.
  }];
  let options = [
    Option<"fp8Scale", "fp8-scale", "std::string", /*default=*/"\"fit\"",
           "The step's fp8 scale (qtrain-gpu-gemms): fit or exact">
  ];
  let statistics = [
    Statistic<"numRewritten", "rewritten", "Products of fp8 errors rewritten">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::mlir::qtrain::QTrainDialect"
  ];
}

def HoistArgumentReadsPass : Pass<"qtrain-hoist-argument-reads",
                                  "::mlir::ModuleOp"> {
  let summary = "Host reads of arguments nothing writes, at the start of "
                "the function";
  let description = [{
    In the CUDA step's host code (after `qtrain-map-step-to-gpu`): a
    `memref.load` at constant indices, at the top level of a function, of
    an entry argument whose every use is a `memref.load` (in host code or
    in a kernel: nothing writes it, so it holds its entry values
    throughout) moves to the start of the function. The float-format
    method's promotion flags are such reads, one before each promotable
    rounding. `qtrain-cuda-host-calls` makes the host wait for the device
    before each of its own memory accesses when a kernel was launched since
    the last wait; at the start nothing has been launched, so the hoisted
    reads cost no wait (the MLP's float-format train step: 8 waits fewer,
    LeNet's 23).
  }];
  let statistics = [
    Statistic<"numHoisted", "hoisted", "Reads moved to the function's start">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ScalarsToDevicePass : Pass<"qtrain-scalars-to-device", "::mlir::ModuleOp"> {
  let summary = "Host updates of buffers from scalars kernels computed, on "
                "the device";
  let description = [{
    In the bufferized CUDA step (`qtrain-lower-cuda-step` runs it just
    before `qtrain-map-step-to-gpu`): a `memref.store` in host code (a
    function's body, or a branch of its `scf.if` or `scf.index_switch`)
    whose value or indices are made of reads of buffers the step made
    (allocations, constant globals) and scalar arithmetic, or that follows
    a loop nest, call or launch (which make the host wait before it), moves
    to the device, with those reads and that arithmetic: each run of such stores
    (only arithmetic, loads and deallocs between them) becomes one
    `scf.parallel` of one iteration at the last store, which
    `qtrain-map-step-to-gpu` launches on one thread. The quantizers' EMA of
    their ranges is such a run: the batch's min and max, which a reduction
    kernel left in step buffers, folded into the range argument.

    The host waits for the device before each of its own memory accesses
    (`qtrain-cuda-host-calls`); with the reads gone from the host, those
    waits go too, and the buffers stay device memory (not `host_shared`),
    the written arguments off the manifest's host-visible lists.

    A run moves only if nothing between its reads and its last store writes
    or frees what it reads (a dealloc of it moves after the new loop), and
    nothing in between reads or writes what it stores to; else each store
    is tried alone, and one that cannot move stays. Reads of arguments stay
    on the host, their values passed to the kernel (the runtime may keep an
    argument in host memory: the slots), as does anything that is not
    scalar arithmetic (a call's result). A store of host values alone with
    nothing before it that may run a kernel stays: it costs no wait. Stores
    target buffers the step made or function arguments.
  }];
  let statistics = [
    Statistic<"numUpdates", "updates", "Runs of stores moved to the device">,
    Statistic<"numStores", "stores", "Stores moved to the device">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def ArgumentsToDevicePass : Pass<"qtrain-arguments-to-device",
                                 "::mlir::ModuleOp"> {
  let summary = "The entry points' scalar arguments that kernels use, read "
                "from one device record instead of kernel parameters";
  let description = [{
    In the CUDA step's host code (`qtrain-lower-cuda-step` runs it last,
    after `qtrain-map-step-to-gpu`): every scalar argument of an entry
    point (a public function no other calls: `train_step`, `eval_step`)
    that a kernel uses, directly, through scalar arithmetic in the host
    code, or through the arguments of the functions it is passed to (the
    variant functions), gets a 64-bit slot of one record. The entry point
    stores the arguments to a host record (`memref.alloca`) at its start
    and copies it to a device record (`gpu.alloc`, `gpu.memcpy`, which
    `qtrain-cuda-host-calls` makes the runtime's stream-ordered upload);
    every launch that used them loads its slots instead (right before the
    top-level op of its body that uses them, so that nothing crosses a
    barrier) and recomputes the host arithmetic on them. A function called
    with recorded values, the same slot at every call site, takes its
    callers' record as a new last argument.

    The learning rate and the Philox step change every step; as kernel
    parameters, they changed the parameters of a CUDA graph's nodes every
    step (LeNet: 12 nodes at a fixed precision). Read from the record, a
    step's launches take the same parameters at every step of a precision,
    and a graph is launched again as it is. The host code keeps its own
    uses of the arguments (the slot dispatch).
  }];
  let statistics = [
    Statistic<"numLaunches", "launches", "Launches that read the record">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def DeferResultReadsPass : Pass<"qtrain-defer-result-reads",
                                "::mlir::ModuleOp"> {
  let summary = "Host reads of the step's results at the end of the "
                "function";
  let description = [{
    In the bufferized CUDA step (`qtrain-lower-cuda-step` runs it after
    `qtrain-scalars-to-device`, before `qtrain-map-step-to-gpu`): a
    `memref.load` at the top level of a function (of one block) from a
    buffer the step made, whose value reaches nothing but the function's
    `return` (through scalar arithmetic: the loss, through its scaling),
    moves to just before the return with that arithmetic, and a dealloc of
    its buffer with it. The host waits for the device before each of its
    own memory accesses (`qtrain-cuda-host-calls`): read where it is
    computed, the loss drained the device between the forward and the
    backward; read at the end, it shares the wait the step ends with.

    A read moves only if nothing between it and the return writes or frees
    what it reads (other than the dealloc that moves with it).
  }];
  let statistics = [
    Statistic<"numDeferred", "deferred", "Reads moved to the return">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def MergeLaunchesPass : Pass<"qtrain-merge-launches", "::mlir::ModuleOp"> {
  let summary = "Consecutive launches that can run as one, as one";
  let description = [{
    In the CUDA step's host code (`qtrain-lower-cuda-step` runs it after
    `qtrain-map-step-to-gpu`, once the launch sizes are constants): two
    consecutive `gpu.launch` ops with only device allocations and
    deallocations, views, constants and other pure ops on the host between
    them become one launch at the second that runs both bodies in order
    (the deallocations between them move after it) when that cannot change
    what they compute:

    - both run one block of one thread (the reductions of a quantizer's
      range to scalars, its scale, an EMA update): one thread ran them one
      after the other before, and still does;
    - both have the same constant grid and block, and neither reads or
      writes a buffer the other writes (distinct device allocations; two
      arguments may be the same memory): every thread runs its part of
      each, and no thread can see another's;
    - both run one block: the first's body, a barrier, the second's, in a
      block of the larger size; a body of fewer threads runs on its first
      threads, with its own block size, and holds no barrier;
    - both have the same block and one-dimensional grids of different
      sizes, and they are independent: the larger grid, the smaller body
      on its first blocks with its own grid size, holding no barrier.

    Runs merge one launch at a time (a merged launch is checked against the
    next as a whole). Launches with clusters, dynamic shared memory,
    attributions or async tokens, or a body with an op of unknown memory
    effects, are left alone. LeNet's CPT step: 639 launch sites to 534.
  }];
  let statistics = [
    Statistic<"numMerged", "merged", "Launches merged into the next one">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def FuseElementwisePass : Pass<"qtrain-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Chains of elementwise linalg ops on tensors as one op";
  let description = [{
    Fuses an elementwise linalg op on tensors (every loop parallel) into
    its user when that user is elementwise too and the only one
    (`linalg::populateElementwiseOpsFusionPatterns`), so that the CUDA
    step, where every linalg op is a kernel launch, launches one kernel for
    a chain such as a quantizer's scale, round and clamp. Each element's
    arithmetic is unchanged (the same ops in the same order), so the step's
    numerics are too. Products and other reductions are not fused into,
    which leaves their bodies for `qtrain-gpu-gemms`.
    `qtrain-lower-cuda-step` runs it on the tensors of the CPU lowering's
    buffer passes, before bufferization.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def GpuGemmsPass : Pass<"qtrain-gpu-gemms", "::mlir::ModuleOp"> {
  let summary = "The bufferized step's GEMMs on the GPU GEMM kernels";
  let description = [{
    The GPU analogue of `qtrain-microkernels`, run by
    `qtrain-lower-cuda-step` before `qtrain-map-step-to-gpu`. Every linalg
    contraction of the bufferized step whose body a GEMM kernel computes
    exactly (`qtrain/Analysis/MulAddBody.h`) and whose loops are static
    becomes, in place:

    1. two gathers (`linalg.generic`, mapped onto threads like any other
       op): A into a dense `[batch, m, k]` buffer and B into `[batch, n, k]`,
       K-contiguous in the kernel's encoding, with m the loops of the first
       operand and the init, n those of the second and the init, k those of
       both operands and batch those of all three. A convolution's first
       operand is thereby its patches (im2col);
    2. a `gpu.launch_func` of the GEMM kernel of `lib/Codegen/CUDA/GemmKernel.h`
       (`C = A B^T` per batch, in `gpu.module @qtrain_step_gemms`, described
       by `qtrain.gemm`), its grid and block from that description;
    3. an epilogue (`linalg.generic`) adding C to the init through the
       init's indexing map, as the contraction accumulates into it.

    With `library-calls` (the default) the launch is guarded by a call of
    the runtime's `qtrain_cuda_gemm` (`runtime/include/qtrain/runtime/CudaHostAbi.h`),
    which offers the same product (buffers, kind, encodings, shape) to
    cuBLASLt and returns 1 when it took it; the kernel runs when it
    returns 0 (no cuBLASLt, or none of its algorithms serves the product).

    The kernel's kind follows the variant's arithmetic, so each precision
    variant of a site runs its own kernel: sign-extended 8-bit codes (the
    3- to 8-bit fixed-point grids) on `i8` (`mma.sync` m16n8k32, exact s32
    sums, fewer than 2^17 terms), f32 operands marked
    `qtrain.bf16_operands` on `bf16` (exact: they hold bf16 values), f32
    operands marked `qtrain.float_operands` on `float-kind` (`fp8`: e4m3/e5m2
    bytes scaled by `fp8-scale`, the sums scaled back in the epilogue, where
    both formats have an fp8 form; `bf16` where both formats' values are
    bf16 values), and
    other f32 products on `f32-kind` (`f32`: FMA on the CUDA cores; `tf32`
    or `bf16`: tensor cores, operands rounded to nearest tf32 or bf16, the
    mixed-precision step that fixed-point steps are measured against). 16-bit codes, other
    bodies, dynamic loops, init maps that are not projected permutations,
    products below `min-flops` multiply-adds and those whose gathered
    operand would exceed `max-gather-mib` stay loop nests for
    `qtrain-map-step-to-gpu`.
  }];
  let options = [
    Option<"f32Kind", "f32-kind", "std::string", /*default=*/"\"f32\"",
           "The kernel of f32 products: f32 (CUDA cores), tf32 or bf16 "
           "(tensor cores, operands rounded to tf32 or bf16)">,
    Option<"minFlops", "min-flops", "int64_t", /*default=*/"32768",
           "Smallest product (multiply-adds) run on a GEMM kernel">,
    Option<"maxGatherMiB", "max-gather-mib", "int64_t", /*default=*/"512",
           "Largest gathered operand (MiB) of a product run on a GEMM "
           "kernel">,
    Option<"floatKind", "float-kind", "std::string", /*default=*/"\"fp8\"",
           "The kernel of qtrain.float_operands products: fp8 (where both "
           "formats have an fp8 form, else bf16 where both are bf16 "
           "values), bf16 (exact for such formats) or f32 (f32-kind)">,
    Option<"fp8Scale", "fp8-scale", "std::string", /*default=*/"\"fit\"",
           "How the values of a qtrain.float_operands product become fp8 "
           "(getFp8Operand): fit (no value overflows fp8; one bit less "
           "below exactFrom) or exact (every value exact; those beyond "
           "fp8's largest saturate to it)">,
    Option<"libraryCalls", "library-calls", "bool", /*default=*/"true",
           "Offer each product to the runtime's GEMM library (cuBLASLt) "
           "before launching its kernel">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect",
    "::mlir::qtrain::QTrainDialect"
  ];
}

def MapStepToGpuPass : Pass<"qtrain-map-step-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Every loop nest of the bufferized step as a GPU kernel launch";
  let description = [{
    Runs on the bufferized training module (`qtrain-lower-cuda-step` runs
    it after the buffer passes the CPU lowering shares). Every linalg op of
    every host function becomes one `gpu.launch`: its parallel loops first
    (reductions inside, in order, as `scf.for` run by each thread), collapsed
    to one dimension and tiled by `threads-per-block`, the tiles over
    `blockIdx.x` and the elements of a tile over `threadIdx.x`, with a guard
    for the last tile. A reduction with fewer output elements than
    `split-reductions-below` and more than 4 x `reduction-fan-in` elements
    each (a quantizer's range, a bias gradient) is split: blocks whose
    threads each combine at most `reduction-fan-in` values, then the
    block's threads' results in shared memory, in levels, in a fixed
    order; the block of the last level that finishes last combines the
    level's partial values (`last-block-combines`), so a reduction over up
    to 4 x `reduction-fan-in` blocks (1,048,576 values per output at the
    defaults) is one launch. Any
    other op without parallel loops runs on one thread. Every buffer the host code makes is device memory:
    `memref.alloc`/`dealloc`/`copy` become `gpu.alloc`/`dealloc`/`memcpy`,
    and a constant global is copied to a device buffer where it is read.

    What stays on the host is the launches, the allocations, the calls of
    the variant functions and the slot dispatch (`scf.index_switch` on a
    slot read on the host). A buffer the host code reads or writes must be
    an argument of a public function (through the calls that reach it); the
    pass marks it `qtrain.host_visible`, for the runtime to place in
    page-locked host memory the device maps, and any other host access is
    an error, as is a loop nest it could not map.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t",
           /*default=*/"256", "Threads per block of every launch">,
    Option<"reductionFanIn", "reduction-fan-in", "int64_t",
           /*default=*/"32",
           "The most values one thread of a split reduction combines before "
           "its block combines its threads' (0 or 1: reductions are not "
           "split)">,
    Option<"splitReductionsBelow", "split-reductions-below", "int64_t",
           /*default=*/"65536",
           "Split the reductions of ops with fewer output elements than "
           "this (and more than 4 x reduction-fan-in elements per output)">,
    Option<"lastBlockCombines", "last-block-combines", "bool",
           /*default=*/"true",
           "The block of a split reduction's last level that finishes last "
           "combines the level's partial values (blocks counted in device "
           "memory between fences); off: a launch of a thread per output "
           "after it">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

def SinkViewsPass : Pass<"qtrain-sink-views", "::mlir::ModuleOp"> {
  let summary = "Views a gpu.launch uses, made inside it from their buffers";
  let description = [{
    Clones into each `gpu.launch` the chain of views (`memref.subview`,
    `memref.reinterpret_cast`, `memref.expand_shape`,
    `memref.collapse_shape`, `memref.cast`: every `ViewLikeOpInterface`
    op) and constants that makes a memref its body uses, so that
    `gpu-kernel-outlining` passes the kernel the buffer the chain starts
    from instead of the view. A view at an offset or with strides cannot
    be a bare pointer; a buffer (an allocation or an argument of the host
    function) always is. The CUDA step's kernels and launches use the
    bare-pointer calling convention on both sides
    (`qtrain-cuda-step-kernels`), and kernel parameters that remain views
    are then refused by the conversion to NVVM, not passed wrongly.

    The views are pure: cloning them changes nothing but where the
    address arithmetic runs.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def MergeGpuModulesPass : Pass<"qtrain-merge-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Every gpu.module of the module as one";
  let description = [{
    Moves the contents of every `gpu.module` into one named `name` and
    points every `gpu.launch_func` at it, so that the CUDA step's kernels
    (one module per launch after `gpu-kernel-outlining`, plus the GEMM
    kernels of `qtrain-gpu-gemms`) serialize to one PTX or cubin, which the
    runtime loads once rather than hundreds of times. Kernels keep their
    names; a clash between other symbols gets a unique name, and identical
    private declarations are kept once. Modules with different targets or
    offloading handlers cannot be merged (an error); a launch of a kernel
    outside the module's gpu.modules is an error.
  }];
  let options = [
    Option<"name", "name", "std::string",
           /*default=*/"\"qtrain_step_kernels\"",
           "The name of the merged gpu.module">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def EmulateGpuPass : Pass<"qtrain-emulate-gpu", "::mlir::ModuleOp"> {
  let summary = "GPU launches as host loops, to check the CUDA step on a CPU";
  let description = [{
    Each synchronous `gpu.launch` becomes an `scf.parallel` over its grid
    and block (the block and thread ids its induction variables), and
    `gpu.alloc`/`dealloc`/`memcpy` become their `memref` forms, so that the
    step `qtrain-map-step-to-gpu` made runs on the CPU and is compared there
    with the CPU step (`qtrain-compile --cuda-emulate-step`). A launch with
    workgroup memory or barriers (those of split reductions) runs block by
    block, with host buffers for the workgroup's, and the parts of its body
    between barriers one after the other, each for every thread of the
    block; a value that crosses a barrier is recomputed (it must be pure).
    This is exact for every kernel that pass makes (barriers inside control
    flow, clusters and private memory are errors); it checks the mapping of
    the step onto threads and device buffers, not NVVM code generation.
    The `qtrain.host_visible` marks of the entry points go: every buffer is
    host memory.

    A `gpu.launch_func` of a GEMM kernel (`qtrain-gpu-gemms`) becomes host
    loops computing what the kernel's `qtrain.gemm` description states:
    `C[b, i, j]` the sum over k, in order, of the decoded products (f32: a
    fused multiply-add per term, as the CUDA-core kernel; tf32 operands
    rounded to nearest, ties away; bf16 bits widened; s8 codes summed
    exactly in i32). This checks the gathers and epilogues around the
    kernels, not their tensor-core code, which `qtrain-cuda-check` checks on
    a device. A kernel that splits k is emulated by its splits: each
    chunk summed on its own, the chunks' sums added in split order from
    zero, as its last block adds them. With `gemms=kernel`, a kernel runs
    its own code instead: its body becomes a `gpu.launch` (its globals
    copied into the module) that is emulated as above, so the split and
    the last block's protocol run too, and its tensor-core ops take host
    forms (`cvt.rna.tf32.f32` rounded; each `mma.sync` computed per lane
    from the registers its warp's lanes hold, recomputed for each lane and
    gathered by PTX's fragment layouts: EmulateTensorCores.h). Unused
    gpu.modules are erased.
  }];
  let options = [
    Option<"gemms", "gemms", "std::string", "\"description\"",
           "How GEMM kernels run: `description` (what qtrain.gemm states) "
           "or `kernel` (the kernel's own code, tensor-core ops per lane)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
}

def CudaHostCallsPass : Pass<"qtrain-cuda-host-calls", "::mlir::ModuleOp"> {
  let summary = "Device memory of the CUDA step's host code as runtime calls";
  let description = [{
    The synchronous `gpu.alloc` (with `host_shared`), `gpu.dealloc` and
    `gpu.memcpy` of dense buffers that `qtrain-map-step-to-gpu` leaves in the
    host code become LLVM calls of the runtime's CUDA host ABI
    (`runtime/include/qtrain/runtime/CudaHostAbi.h`):
    `qtrain_cuda_alloc(bytes, host_shared) -> ptr`, `qtrain_cuda_free(ptr)`
    and `qtrain_cuda_memcpy(dst, src, bytes)`, with the memref descriptors
    built around the pointers. Upstream's `gpu-to-llvm`, which runs next,
    lowers only asynchronous ones (a stream per op); the runtime serves
    these from a pool, since the step allocates its buffers every step.
    Every op of the host code that reads or writes a memref itself (a
    `memref.load` of a scale, a slot, the loss) gets a call of
    `qtrain_cuda_synchronize()` before it: the runtime launches the kernels
    without waiting for each, and waits there only if one was launched
    since the last wait. An asynchronous op or a copy of strided views is
    an error.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // QTRAIN_CODEGEN_CUDA_PASSES_TD
