//===- Pipelines.h - qtrain's named pass pipelines --------------*- C++ -*-===//
//
// The pipelines qtrain-compile runs, registered by name so that qtrain-opt
// runs exactly the same passes (docs/pipeline.md):
//
//   qtrain-compile = qtrain-step, qtrain-lower-cpu, qtrain-packed-entry-points
//   qtrain-step    = qtrain-frontend, qtrain-quantize, qtrain-training-step,
//                    qtrain-kernels
//
// qtrain-step ends with the materialized training module on tensors, which
// the manifest describes (lib/Target/Bundle); qtrain-lower-cpu takes it to
// the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_PIPELINES_PIPELINES_H
#define QTRAIN_PIPELINES_PIPELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::qtrain {

/// The options of every qtrain pipeline, named like qtrain-compile's flags;
/// each pipeline reads the options of the passes it runs. The defaults are
/// qtrain-compile's.
struct StepPipelineOptions : public PassPipelineOptions<StepPipelineOptions> {
  // qtrain-frontend.
  PassOptions::Option<bool> liftParams{
      *this, "lift-params",
      llvm::cl::desc("Lift exported weight constants (qtrain-lift-params)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> reinit{
      *this, "reinit",
      llvm::cl::desc("With lift-params: initialize every parameter afresh "
                     "(qtrain-lift-params reinit=)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> batch{
      *this, "batch",
      llvm::cl::desc("Re-batch the graph to this batch (qtrain-rebatch; 0: "
                     "keep the graph's)"),
      llvm::cl::init(0)};

  // qtrain-quantize.
  PassOptions::Option<std::string> policy{
      *this, "policy", llvm::cl::desc("cpt, static, ldp or none"),
      llvm::cl::init("cpt")};
  PassOptions::Option<std::string> schedule{
      *this, "schedule",
      llvm::cl::desc("Default schedule (docs/schedules.md); default "
                     "cpt:MIN:MAX, ldp:MIN:MAX or static:MAX over bits by "
                     "policy, fp32 for none"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> bits{
      *this, "bits",
      llvm::cl::desc("Forward precisions: MIN:MAX or a list B,B,..."),
      llvm::cl::init("3:8")};
  PassOptions::Option<std::string> gradBits{
      *this, "grad-bits",
      llvm::cl::desc("Backward precisions (the first is the bundle's)"),
      llvm::cl::init("8")};
  PassOptions::Option<std::string> gradFormat{
      *this, "grad-format",
      llvm::cl::desc("Errors on CPT's integer grid (int) or in fp8 e5m2, "
                     "scaled per tensor (e5m2; grad-bits must be 8)"),
      llvm::cl::init("int")};
  PassOptions::Option<double> ldpLambda{
      *this, "ldp-lambda",
      llvm::cl::desc("policy=ldp: default weight of the cost term"),
      llvm::cl::init(1.0)};
  PassOptions::Option<double> ldpInit{
      *this, "ldp-init",
      llvm::cl::desc("policy=ldp: initial value of every learnable "
                     "precision p (0: the minimum bits)"),
      llvm::cl::init(0.0)};
  // Float formats (qtrain-assign-precision, PAPERS.md section 4); given a
  // ratio or a budget, the step is fp32 with low float formats
  // (policy=none).
  PassOptions::Option<double> precisionRatio{
      *this, "precision-ratio",
      llvm::cl::desc("Store this fraction r in [0, 1] of the step's tensors "
                     "in low float formats (-1: no float formats)"),
      llvm::cl::init(-1.0)};
  PassOptions::Option<std::string> precisionBudget{
      *this, "precision-budget",
      llvm::cl::desc("Memory model budget of the assigned tensors (bytes, "
                     "or with KiB/MiB/GiB)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> precisionOrder{
      *this, "precision-order",
      llvm::cl::desc("Group order: largest, smallest, random, scored, "
                     "profiled"),
      llvm::cl::init("largest")};
  PassOptions::Option<uint64_t> precisionSeed{
      *this, "precision-seed", llvm::cl::desc("Seed of the random order"),
      llvm::cl::init(0)};
  PassOptions::ListOption<double> precisionScores{
      *this, "precision-scores",
      llvm::cl::desc("Scored order: one score per group")};
  PassOptions::Option<std::string> precisionProfile{
      *this, "precision-profile",
      llvm::cl::desc("Profiled order: qtrain-run's --overflow-profile"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> precisionReport{
      *this, "precision-report",
      llvm::cl::desc("Write the precision assignment as JSON here"),
      llvm::cl::init("")};
  PassOptions::Option<bool> precisionPromotion{
      *this, "precision-promotion",
      llvm::cl::desc("Compile the high-format variant of every low P/Y "
                     "rounding (qtrain-insert-rounding promotion=)"),
      llvm::cl::init(true)};

  // qtrain-training-step.
  PassOptions::Option<std::string> loss{*this, "loss",
                                        llvm::cl::desc("cross-entropy or mse"),
                                        llvm::cl::init("cross-entropy")};
  PassOptions::Option<bool> trainBatchnorm{
      *this, "train-batchnorm",
      llvm::cl::desc("Train eval-mode batch norms with batch statistics, "
                     "their running ones as state (qtrain-train-batchnorm)"),
      llvm::cl::init(true)};

  // qtrain-kernels.
  PassOptions::Option<bool> fp32{
      *this, "fp32", llvm::cl::desc("Also compile the fp32 variants"),
      llvm::cl::init(true)};
  PassOptions::Option<unsigned> maxVariants{*this, "max-variants",
                                            llvm::cl::desc("Variant budget"),
                                            llvm::cl::init(1000)};
  PassOptions::Option<std::string> inputGrad{
      *this, "input-grad",
      llvm::cl::desc("Input gradients of per-channel weights: f32, bf16, "
                     "int or fp8 (qtrain-integer-kernels input-grad=)"),
      llvm::cl::init("f32")};

  // The CUDA target (docs/cuda.md).
  PassOptions::Option<std::string> cudaChip{
      *this, "cuda-chip",
      llvm::cl::desc("Also build the GPU kernels of every site and "
                     "precision for this NVIDIA architecture (e.g. sm_90; "
                     "qtrain-cuda-gemm-kernels after qtrain-form-kernels)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> cudaKinds{
      *this, "cuda-kinds",
      llvm::cl::desc("The GPU kernel kinds (qtrain-cuda-gemm-kernels kinds=)"),
      llvm::cl::init("f32,tf32,bf16,fp8,i8")};
  /// Whether the step gets float formats (a ratio or a budget is given).
  bool hasFloatFormats() const {
    return precisionRatio >= 0 || !precisionBudget.empty();
  }
};

/// The error callback of a pipeline builder (PassRegistryFunction's): it
/// reports the message and returns failure.
using PipelineErrorFn = function_ref<LogicalResult(const Twine &)>;

/// The schedule a bundle gets when none is given: cpt:MIN:MAX over `bits`
/// for policy cpt, ldp:MIN:MAX for ldp, static:MAX for static, fp32 for
/// none. `bits` is not empty.
std::string defaultSchedule(StringRef policy, const std::vector<int> &bits);

/// qtrain-frontend: qtrain-strip-export, qtrain-lift-params with
/// lift-params, qtrain-rebatch with a batch.
LogicalResult buildFrontendPipeline(OpPassManager &pm,
                                    const StepPipelineOptions &options,
                                    PipelineErrorFn error);

/// qtrain-quantize: qtrain-assign-precision with float formats,
/// qtrain-insert-quant, then qtrain-insert-rounding with float formats.
LogicalResult buildQuantizePipeline(OpPassManager &pm,
                                    const StepPipelineOptions &options,
                                    PipelineErrorFn error);

/// qtrain-training-step: qtrain-autodiff, then qtrain-store-saved with
/// float formats.
LogicalResult buildTrainingStepPipeline(OpPassManager &pm,
                                        const StepPipelineOptions &options,
                                        PipelineErrorFn error);

/// qtrain-kernels: qtrain-form-kernels, qtrain-materialize-variants and
/// qtrain-integer-kernels; for policy none, qtrain-add-empty-slots.
LogicalResult buildKernelsPipeline(OpPassManager &pm,
                                   const StepPipelineOptions &options,
                                   PipelineErrorFn error);

/// qtrain-step: the four pipelines above, from a forward graph to the
/// materialized training module on tensors.
LogicalResult buildStepPipeline(OpPassManager &pm,
                                const StepPipelineOptions &options,
                                PipelineErrorFn error);

/// qtrain-compile: qtrain-step, qtrain-lower-cpu and
/// qtrain-packed-entry-points; what qtrain-compile runs before it adds the
/// ABI digest and emits object code.
LogicalResult buildCompilePipeline(OpPassManager &pm,
                                   const StepPipelineOptions &options,
                                   PipelineErrorFn error);

/// qtrain-lower-cpu: lowers a materialized training module (tensors,
/// linalg, qtrain quantizers, scf.index_switch dispatch) to the LLVM dialect
/// for the CPU: convert-qtrain-to-linalg, qtrain-drop-annotations, one-shot
/// bufferization with identity layouts, results as out-parameters,
/// deallocation, loops, and the conversions to LLVM with bare-pointer
/// memrefs (docs/bundle.md, "The step ABI").
void buildCPULoweringPipeline(OpPassManager &pm);

/// The first part of buildCPULoweringPipeline: the step as buffers, each
/// allocated right before its first use and freed after its last
/// (bufferization, deallocation, qtrain-free-early). This is what
/// qtrain-compile --dump-buffers writes and stepBufferPeak measures.
void buildCPUBufferPipeline(OpPassManager &pm);

/// The peak bytes of the buffers @train_step holds at once, on a module
/// after buildCPUBufferPipeline: its memref.alloc and memref.dealloc in
/// program order, an allocation inside a loop counted once (it is freed in
/// the same iteration). This is what the step's allocator measures at run
/// time (qtrain-run's "peak memory of the step's buffers"; parameters,
/// momentum, data and the microkernels' packing space are not step buffers)
/// and what scripts/step-buffers.py prints. Fails, with an error on the op,
/// on a buffer whose size is not static and when there is no @train_step.
FailureOr<int64_t> stepBufferPeak(ModuleOp module);

/// qtrain-lower-cuda: lowers the gpu.module of qtrain-cuda-gemm-kernels
/// (moved into a module of its own) to NVVM with bare-pointer kernel
/// arguments and serializes it to PTX (gpu-module-to-binary format=isa:
/// a gpu.binary whose object holds the PTX text).
void buildCUDALoweringPipeline(OpPassManager &pm);

/// qtrain-lower-cuda-step: the whole training step for the GPU, from a
/// materialized training module: the buffers of buildCPUBufferPipeline,
/// copies as linalg, then qtrain-map-step-to-gpu (every loop nest a
/// gpu.launch, every step buffer in device memory; docs/cuda.md).
/// The numerics of the step's products on the GPU, shared by the options of
/// qtrain-lower-cuda-step and qtrain-cuda-step-library.
template <typename Derived>
struct CudaProductOptions : public PassPipelineOptions<Derived> {
  mlir::detail::PassOptions::Option<std::string> f32Kind{
      *this, "f32-kind",
      llvm::cl::desc("The kernel of the step's f32 products "
                     "(qtrain-gpu-gemms): f32, tf32 or bf16"),
      llvm::cl::init("f32")};
  mlir::detail::PassOptions::Option<std::string> floatKind{
      *this, "float-kind",
      llvm::cl::desc("The kernel of the float-format method's products "
                     "(qtrain-float-operands, qtrain-gpu-gemms): fp8 "
                     "(sm_89 and newer; the library pipeline uses bf16 on "
                     "older chips), bf16 (exact operands) or f32"),
      llvm::cl::init("fp8")};
  mlir::detail::PassOptions::Option<std::string> fp8Scale{
      *this, "fp8-scale",
      llvm::cl::desc("How float-format values become fp8 (qtrain-gpu-gemms): "
                     "fit or exact"),
      llvm::cl::init("fit")};
  mlir::detail::PassOptions::Option<int64_t> reductionFanIn{
      *this, "reduction-fan-in",
      llvm::cl::desc("The most elements one thread of a split reduction "
                     "combines (qtrain-map-step-to-gpu; 0: reductions with "
                     "few outputs run on one thread per output)"),
      llvm::cl::init(32)};
};
struct CudaStepOptions : public CudaProductOptions<CudaStepOptions> {};
/// An f32-kind other than f32, tf32 or bf16, a float-kind other than fp8,
/// bf16 or f32, an fp8-scale other than fit or exact, or a negative
/// reduction-fan-in, is an error (`error`).
LogicalResult buildCUDAStepPipeline(OpPassManager &pm,
                                    const CudaStepOptions &options,
                                    PipelineErrorFn error);
/// The same with the default options.
void buildCUDAStepPipeline(OpPassManager &pm);

/// qtrain-emulate-cuda-step: buildCUDAStepPipeline, then the launches as
/// host loops (qtrain-emulate-gpu) and the CPU's conversions to the LLVM
/// dialect: the CUDA step as a CPU library, which qtrain-compile
/// --cuda-emulate-step builds to check it against the CPU step.
LogicalResult buildCUDAStepEmulationPipeline(OpPassManager &pm,
                                             const CudaStepOptions &options,
                                             PipelineErrorFn error);

struct CudaStepKernelsOptions
    : public CudaProductOptions<CudaStepKernelsOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("The NVIDIA architecture (e.g. sm_90)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("The CUDA toolkit whose libdevice the kernels' math "
                     "functions link (and whose ptxas assembles a cubin)"),
      llvm::cl::init("/usr/local/cuda")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("ptx (the driver compiles it when the library loads) or "
                     "cubin (assembled by the toolkit's ptxas for chip)"),
      llvm::cl::init("ptx")};
};

/// qtrain-cuda-step-kernels: the launches of buildCUDAStepPipeline outlined
/// into kernels (gpu-kernel-outlining) of one gpu.module with the GEMM
/// kernels (qtrain-merge-gpu-modules) for the chip (nvvm-attach-target),
/// lowered to NVVM with memref descriptors as kernel parameters and
/// serialized to PTX or a cubin (gpu-module-to-binary), the host side left
/// with gpu.launch_func.
/// A format other than ptx or cubin is an error (`error`).
LogicalResult
buildCUDAStepKernelsPipeline(OpPassManager &pm,
                             const CudaStepKernelsOptions &options,
                             PipelineErrorFn error);

/// qtrain-cuda-step-library: what the bundle's cuda/step.so is built from
/// (docs/cuda.md): buildCUDAStepPipeline, buildCUDAStepKernelsPipeline,
/// the host code to the LLVM dialect (qtrain-cuda-host-calls for device
/// memory, gpu-to-llvm for the launches and the kernels' PTX, bare pointers
/// at function boundaries) and qtrain-packed-entry-points: the step ABI of
/// model.so, on device buffers.
LogicalResult
buildCUDAStepLibraryPipeline(OpPassManager &pm,
                             const CudaStepKernelsOptions &options,
                             PipelineErrorFn error);

/// The last part of buildCUDAStepLibraryPipeline, after the kernels: the
/// host code to the LLVM dialect and the packed entry points.
void buildCUDAStepHostPipeline(OpPassManager &pm);

/// Registers the pipelines above with the pass registry.
void registerPipelines();

} // namespace mlir::qtrain

#endif // QTRAIN_PIPELINES_PIPELINES_H
