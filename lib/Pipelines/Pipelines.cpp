//===- Pipelines.cpp - qtrain's named pass pipelines ------------*- C++ -*-===//
//
// The pipelines of qtrain-compile (Pipelines.h), built from the passes of
// each stage with their options set from StepPipelineOptions.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Pipelines/Pipelines.h"

#include "qtrain/Codegen/CPU/Passes.h"
#include "qtrain/Codegen/CUDA/Passes.h"
#include "qtrain/Conversion/Passes.h"
#include "qtrain/Frontend/Passes.h"
#include "qtrain/Kernels/Passes.h"
#include "qtrain/Quant/Passes.h"
#include "qtrain/Target/Bundle/Passes.h"
#include "qtrain/runtime/Schedule.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::qtrain;
namespace rt = ::qtrain::rt;

std::string mlir::qtrain::defaultSchedule(StringRef policy,
                                          const std::vector<int> &bits) {
  std::string lo = std::to_string(*llvm::min_element(bits));
  std::string hi = std::to_string(*llvm::max_element(bits));
  if (policy == "cpt" || policy == "ldp")
    return policy.str() + ":" + lo + ":" + hi;
  if (policy == "static")
    return "static:" + hi;
  return "fp32";
}

LogicalResult mlir::qtrain::buildFrontendPipeline(
    OpPassManager &pm, const StepPipelineOptions &options, PipelineErrorFn) {
  pm.addPass(createStripExportPass());
  if (options.liftParams) {
    LiftParamsPassOptions lift;
    lift.reinit = options.reinit;
    pm.addPass(createLiftParamsPass(lift));
  }
  if (options.batch > 0) {
    RebatchPassOptions rebatch;
    rebatch.batch = options.batch;
    pm.addPass(createRebatchPass(rebatch));
  }
  return success();
}

LogicalResult
mlir::qtrain::buildQuantizePipeline(OpPassManager &pm,
                                    const StepPipelineOptions &options,
                                    PipelineErrorFn error) {
  bool floatFormats = options.hasFloatFormats();
  if (floatFormats && options.policy != "none")
    return error("precision-ratio and precision-budget assign float formats "
                 "(PAPERS.md section 4) to an fp32 step; they do not combine "
                 "with policy=" +
                 options.policy);
  if (floatFormats) {
    AssignPrecisionPassOptions assign;
    assign.order = options.precisionOrder;
    assign.seed = options.precisionSeed;
    assign.ratio = options.precisionRatio;
    assign.budget = options.precisionBudget;
    assign.report = options.precisionReport;
    assign.scores.assign(options.precisionScores.begin(),
                         options.precisionScores.end());
    assign.profile = options.precisionProfile;
    pm.addPass(createAssignPrecisionPass(assign));
  }
  std::vector<int> bits, gradBits;
  if (rt::Status s = rt::parseBitList(options.bits.getValue(), bits);
      s.failed())
    return error("bits: " + s.message());
  if (rt::Status s = rt::parseBitList(options.gradBits.getValue(), gradBits);
      s.failed())
    return error("grad-bits: " + s.message());
  InsertQuantPassOptions quant;
  quant.policy = options.policy;
  quant.schedule = options.schedule.empty()
                       ? defaultSchedule(options.policy, bits)
                       : options.schedule.getValue();
  quant.gradBits = gradBits.front();
  quant.gradFormat = options.gradFormat;
  if (options.gradFormat == "e5m2" && gradBits != std::vector<int>{8})
    return error("grad-format=e5m2 is the 8-bit backward in fp8: grad-bits "
                 "must be 8, got " +
                 options.gradBits.getValue());
  if (options.policy == "ldp") {
    quant.lambda = options.ldpLambda;
    quant.ldpInit = options.ldpInit;
  }
  pm.addPass(createInsertQuantPass(quant));
  if (floatFormats) {
    InsertRoundingPassOptions rounding;
    rounding.promotion = options.precisionPromotion;
    pm.addPass(createInsertRoundingPass(rounding));
  }
  return success();
}

LogicalResult mlir::qtrain::buildTrainingStepPipeline(
    OpPassManager &pm, const StepPipelineOptions &options, PipelineErrorFn) {
  pm.addPass(createInsertDropoutPass());
  if (options.trainBatchnorm)
    pm.addPass(createTrainBatchNormPass());
  AutodiffPassOptions autodiff;
  autodiff.loss = options.loss;
  pm.addPass(createAutodiffPass(autodiff));
  if (options.hasFloatFormats())
    pm.addPass(createStoreSavedPass());
  return success();
}

LogicalResult
mlir::qtrain::buildKernelsPipeline(OpPassManager &pm,
                                   const StepPipelineOptions &options,
                                   PipelineErrorFn error) {
  if (options.inputGrad != "f32" && options.inputGrad != "bf16" &&
      options.inputGrad != "int" && options.inputGrad != "fp8")
    return error("input-grad must be f32, bf16, int or fp8, got '" +
                 options.inputGrad + "'");
  bool fp8Errors = options.gradFormat == "e5m2";
  if (options.inputGrad == "fp8" && !fp8Errors)
    return error("input-grad=fp8 folds the weight's scales into fp8 errors: "
                 "it needs grad-format=e5m2");
  if (options.inputGrad == "int" && fp8Errors)
    return error("input-grad=int folds the weight's scales into the error's "
                 "integer grid; with grad-format=e5m2 use f32, bf16 or fp8");
  // The GPU kernels read the products' shapes and quantizers while they
  // are still qtrain.kernel ops; a step without kernel sites gets an empty
  // module (its GPU step is all qtrain-cuda-step-library's).
  auto addCudaKernels = [&] {
    if (options.cudaChip.empty())
      return;
    CudaGemmKernelsPassOptions cuda;
    cuda.chip = options.cudaChip;
    cuda.kinds = options.cudaKinds;
    pm.addPass(createCudaGemmKernelsPass(cuda));
  };
  if (options.policy == "none") {
    pm.addPass(createAddEmptySlotsPass());
    addCudaKernels();
    return success();
  }
  FormKernelsPassOptions form;
  form.inputGradRoundings = options.inputGrad == "fp8";
  pm.addPass(createFormKernelsPass(form));
  MaterializeVariantsPassOptions variants;
  variants.bits = options.bits;
  variants.gradBits = options.gradBits;
  variants.fp32 = options.fp32;
  variants.maxVariants = options.maxVariants;
  addCudaKernels();
  pm.addPass(createMaterializeVariantsPass(variants));
  IntegerKernelsPassOptions integer;
  integer.inputGrad = options.inputGrad;
  pm.addPass(createIntegerKernelsPass(integer));
  return success();
}

LogicalResult
mlir::qtrain::buildStepPipeline(OpPassManager &pm,
                                const StepPipelineOptions &options,
                                PipelineErrorFn error) {
  return success(succeeded(buildFrontendPipeline(pm, options, error)) &&
                 succeeded(buildQuantizePipeline(pm, options, error)) &&
                 succeeded(buildTrainingStepPipeline(pm, options, error)) &&
                 succeeded(buildKernelsPipeline(pm, options, error)));
}

LogicalResult
mlir::qtrain::buildCompilePipeline(OpPassManager &pm,
                                   const StepPipelineOptions &options,
                                   PipelineErrorFn error) {
  if (failed(buildStepPipeline(pm, options, error)))
    return failure();
  buildCPULoweringPipeline(pm);
  pm.addPass(createPackedEntryPointsPass());
  return success();
}

/// The tensor passes of buildCPUBufferPipeline: the qtrain ops as linalg,
/// convolutions as GEMMs, collapsed dimensions, loop orders.
static void buildCPUTensorPipeline(OpPassManager &pm) {
  pm.addPass(createConvertQTrainToLinalgPass());
  pm.addPass(createFuseDecodesPass());
  pm.addPass(createDropAnnotationsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createShareFunctionsPass());
  pm.addPass(createConvToGemmPass());
  pm.addPass(createFoldTransposesPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCollapseDimsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createLoopOrderPass());
  pm.addPass(createReassociateSumsPass());
  pm.addPass(createReuseDyingInputsPass());
}

/// The buffer half of buildCPUBufferPipeline: bufferization, results as
/// out-parameters, deallocation, buffers freed early. `elementwiseWriters`
/// lets elementwise code write out-parameters (the CUDA step, where each
/// copy is a launch).
static void buildBufferizationPipeline(OpPassManager &pm,
                                       bool elementwiseWriters = false) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = true;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  ElideResultCopiesPassOptions elide;
  elide.elementwiseWriters = elementwiseWriters;
  pm.addNestedPass<func::FuncOp>(createElideResultCopiesPass(elide));
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createFreeEarlyPass());
}

void mlir::qtrain::buildCPUBufferPipeline(OpPassManager &pm) {
  buildCPUTensorPipeline(pm);
  buildBufferizationPipeline(pm);
}

/// The tail of the CPU lowering: loops, memrefs, math, arith, control flow
/// and functions to the LLVM dialect (bare-pointer memrefs).
static void buildLLVMConversionPipeline(OpPassManager &pm) {
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // Views at dynamic offsets (a batch chunk of qtrain-conv-to-gemm) leave
  // affine.apply for their offsets.
  pm.addPass(createLowerAffinePass());
  // Buffers go through the generic allocation functions, which the
  // microkernel library implements with a byte count (qtrain/microkernels.h).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  // What has no LLVM intrinsic (math.erf of GELU) calls libm.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::qtrain::buildCPULoweringPipeline(OpPassManager &pm) {
  buildCPUBufferPipeline(pm);
  pm.addPass(createCopiesToLinalgPass());
  pm.addPass(createMicrokernelsPass());
  // Big loop nests run in parallel chunks on the OpenMP thread pool (the
  // microkernels' pool); the chunks depend only on the shapes.
  pm.addPass(createParallelizePass());
  pm.addPass(createCanonicalizerPass());

  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createUnrollShortLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createPromoteAccumulatorsPass());
  pm.addPass(createConvertSCFToOpenMPPass());
  // It wraps each chunk's body in a memref.alloca_scope, which the
  // canonicalizer inlines where the body allocates nothing (all of them).
  pm.addPass(createCanonicalizerPass());
  buildLLVMConversionPipeline(pm);
}

void mlir::qtrain::buildCUDALoweringPipeline(OpPassManager &pm) {
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
}

LogicalResult mlir::qtrain::buildCUDAStepPipeline(
    OpPassManager &pm, const CudaStepOptions &options, PipelineErrorFn error) {
  std::string f32Kind = options.f32Kind, floatKind = options.floatKind,
              fp8Scale = options.fp8Scale;
  if (f32Kind != "f32" && f32Kind != "tf32" && f32Kind != "bf16")
    return error("f32-kind must be f32, tf32 or bf16, got '" + f32Kind + "'");
  if (floatKind != "fp8" && floatKind != "bf16" && floatKind != "f32")
    return error("float-kind must be fp8, bf16 or f32, got '" + floatKind +
                 "'");
  if (fp8Scale != "fit" && fp8Scale != "exact")
    return error("fp8-scale must be fit or exact, got '" + fp8Scale + "'");
  if (options.reductionFanIn < 0)
    return error("reduction-fan-in must not be negative, got " +
                 Twine(options.reductionFanIn.getValue()));
  // Products of float-format operands, for fp8 or bf16 kernels: seen on
  // the roundings before they are lowered.
  if (floatKind != "f32") {
    // Weight gradients of fp8 errors (--grad-format=e5m2) as fp8 or bf16
    // products of exact operands and a correction.
    Fp8ErrorProductsPassOptions errorProducts;
    errorProducts.fp8Scale = fp8Scale;
    pm.addPass(createFp8ErrorProductsPass(errorProducts));
    pm.addPass(createFloatOperandsPass());
  }
  buildCPUTensorPipeline(pm);
  // Every linalg op becomes a launch: chains of elementwise ops as one.
  pm.addPass(createFuseElementwisePass());
  pm.addPass(createCanonicalizerPass());
  buildBufferizationPipeline(pm, /*elementwiseWriters=*/true);
  pm.addPass(createCopiesToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  // Products on the GEMM kernels (gathers and epilogues are linalg ops,
  // which the next pass maps like the rest).
  GpuGemmsPassOptions gemms;
  gemms.f32Kind = f32Kind;
  gemms.floatKind = floatKind;
  gemms.fp8Scale = fp8Scale;
  pm.addPass(createGpuGemmsPass(gemms));
  // Host code that folds what kernels computed into buffers (the EMA of
  // the quantizers' ranges) runs on the device: no host wait mid-step.
  pm.addPass(createScalarsToDevicePass());
  // Reads that only feed the results (the loss) wait for the end.
  pm.addPass(createDeferResultReadsPass());
  MapStepToGpuPassOptions map;
  map.reductionFanIn = options.reductionFanIn;
  pm.addPass(createMapStepToGpuPass(map));
  // The launches' index arithmetic (affine.apply of the loop mapping).
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // A thread's reduction loops accumulate in a register, not in its output
  // element (a load and a store every iteration, which LLVM keeps: it
  // cannot tell that the kernel's buffers do not overlap). LeNet's step:
  // 107 of the 235 loops in its launches.
  pm.addPass(createPromoteAccumulatorsPass());
  // Consecutive launches that can run as one (a quantizer's one-thread
  // scalars; independent launches of one shape), once their sizes are
  // constants.
  pm.addPass(createMergeLaunchesPass());
  // Reads of arguments nothing writes (promotion flags) before any launch.
  pm.addPass(createHoistArgumentReadsPass());
  // The entry points' scalars (the Philox step, the learning rate) from a
  // device record, so that a step's kernel parameters are the same every
  // step and its CUDA graph is launched again without updates.
  pm.addPass(createArgumentsToDevicePass());
  return success();
}

void mlir::qtrain::buildCUDAStepPipeline(OpPassManager &pm) {
  CudaStepOptions defaults;
  (void)buildCUDAStepPipeline(pm, defaults,
                              [](const Twine &) { return failure(); });
}

LogicalResult mlir::qtrain::buildCUDAStepEmulationPipeline(
    OpPassManager &pm, const CudaStepOptions &options, PipelineErrorFn error) {
  if (failed(buildCUDAStepPipeline(pm, options, error)))
    return failure();
  pm.addPass(createEmulateGpuPass());
  pm.addPass(createCanonicalizerPass());
  buildLLVMConversionPipeline(pm);
  return success();
}

LogicalResult mlir::qtrain::buildCUDAStepKernelsPipeline(
    OpPassManager &pm, const CudaStepKernelsOptions &options,
    PipelineErrorFn error) {
  std::string format = options.format;
  if (format != "ptx" && format != "cubin")
    return error("format must be ptx or cubin, got '" + format + "'");
  // Kernels take buffers, not views: bare pointers, below.
  pm.addPass(createSinkViewsPass());
  // Constants and index arithmetic the launches use, made inside them, so
  // that the kernels see their sizes as constants. Outlined with them as
  // parameters, every collapsed index's delinearization was a 64-bit
  // division in PTX (LeNet's step: 556 div.s64 and 580 div.u32; none
  // after, 492 mul.hi) and each kernel took about 7 parameters, not 3.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // One module: one PTX or cubin for the whole step, loaded once.
  pm.addPass(createMergeGpuModulesPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = "+ptx86";
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  // The views qtrain-sink-views made in the kernels, as address arithmetic.
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  // Bare pointers as kernel parameters, as the host passes them
  // (buildCUDAStepHostPipeline): a launch's operand is a dense buffer or a
  // view of one at offset zero (a collapsed or expanded shape), and the
  // conversion refuses any other. With memref descriptors here the kernel
  // would read parameters the host never passed: gpu-module-to-binary has
  // already replaced the kernels when the host's launches are converted, so
  // nothing else would compare the two.
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = format == "cubin" ? "bin" : "isa";
  toBinary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
  return success();
}

/// Whether `chip` (sm_NN or sm_NNa) has fp8 tensor cores (sm_89 and newer).
static bool hasFp8(StringRef chip) {
  unsigned version = 0;
  return chip.consume_front("sm_") &&
         !chip.rtrim('a').getAsInteger(10, version) && version >= 89;
}

LogicalResult mlir::qtrain::buildCUDAStepLibraryPipeline(
    OpPassManager &pm, const CudaStepKernelsOptions &options,
    PipelineErrorFn error) {
  CudaStepOptions step;
  step.floatKind = options.floatKind == "fp8" && !hasFp8(options.chip)
                       ? std::string("bf16")
                       : options.floatKind.getValue();
  step.fp8Scale = options.fp8Scale.getValue();
  step.f32Kind = options.f32Kind.getValue();
  step.reductionFanIn = options.reductionFanIn.getValue();
  if (failed(buildCUDAStepPipeline(pm, step, error)))
    return failure();
  if (failed(buildCUDAStepKernelsPipeline(pm, options, error)))
    return failure();
  buildCUDAStepHostPipeline(pm);
  return success();
}

void mlir::qtrain::buildCUDAStepHostPipeline(OpPassManager &pm) {
  // The step's control flow, views and device memory
  // (qtrain-cuda-host-calls), then upstream's launches and the conversions
  // to LLVM, with bare pointers at function boundaries as on the CPU.
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCudaHostCallsPass());
  GpuToLLVMConversionPassOptions toLLVM;
  toLLVM.hostBarePtrCallConv = true;
  // The kernels take bare pointers (buildCUDAStepKernelsPipeline).
  toLLVM.kernelBarePtrCallConv = true;
  pm.addPass(createGpuToLLVMConversionPass(toLLVM));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createPackedEntryPointsPass());
}

FailureOr<int64_t> mlir::qtrain::stepBufferPeak(ModuleOp module) {
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (!step || step.isExternal())
    return module.emitError("qtrain: no @train_step to measure the buffers of");
  DenseMap<Value, int64_t> live;
  int64_t current = 0, peak = 0;
  WalkResult walk = step.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      MemRefType type = alloc.getType();
      Type element = type.getElementType();
      if (!type.hasStaticShape() || !element.isIntOrIndexOrFloat()) {
        alloc.emitError("qtrain: cannot size this buffer (")
            << type << ") to measure the step's peak";
        return WalkResult::interrupt();
      }
      int64_t bits = element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
      int64_t bytes = type.getNumElements() * ((bits + 7) / 8);
      live[alloc.getResult()] = bytes;
      current += bytes;
      peak = std::max(peak, current);
    } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      auto it = live.find(dealloc.getMemref());
      if (it != live.end()) {
        current -= it->second;
        live.erase(it);
      }
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return peak;
}

/// Registers `name` as a pipeline built by `build` from its `Options`,
/// which may refuse them with an error.
template <typename Options>
static void registerOptionsPipeline(StringRef name, StringRef description,
                                    LogicalResult (*build)(OpPassManager &,
                                                           const Options &,
                                                           PipelineErrorFn)) {
  registerPassPipeline(
      name, description,
      [build](OpPassManager &pm, StringRef text, PipelineErrorFn error) {
        Options options;
        if (failed(options.parseFromString(text)))
          return failure();
        return build(pm, options, error);
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(Options());
      });
}

static void registerStepPipeline(
    StringRef name, StringRef description,
    LogicalResult (*build)(OpPassManager &, const StepPipelineOptions &,
                           PipelineErrorFn)) {
  registerOptionsPipeline<StepPipelineOptions>(name, description, build);
}

void mlir::qtrain::registerPipelines() {
  registerStepPipeline("qtrain-frontend",
                       "Make a forward graph trainable: lift the weights, "
                       "set the batch",
                       buildFrontendPipeline);
  registerStepPipeline("qtrain-quantize",
                       "Place the quantizers of the precision schedule (and "
                       "the float formats of a precision ratio or budget)",
                       buildQuantizePipeline);
  registerStepPipeline("qtrain-training-step",
                       "Build the training and eval steps by reverse-mode "
                       "differentiation",
                       buildTrainingStepPipeline);
  registerStepPipeline("qtrain-kernels",
                       "Form the kernel sites and their variants per "
                       "bitwidth, with integer kernels",
                       buildKernelsPipeline);
  registerStepPipeline("qtrain-step",
                       "From a forward graph to the materialized training "
                       "module (qtrain-frontend, qtrain-quantize, "
                       "qtrain-training-step, qtrain-kernels)",
                       buildStepPipeline);
  registerStepPipeline("qtrain-compile",
                       "Everything qtrain-compile runs before object code: "
                       "qtrain-step, qtrain-lower-cpu, "
                       "qtrain-packed-entry-points",
                       buildCompilePipeline);
  PassPipelineRegistration<>(
      "qtrain-lower-cuda",
      "Lower the GPU kernels of the CUDA target to NVVM and serialize them "
      "to PTX",
      buildCUDALoweringPipeline);
  registerOptionsPipeline<CudaStepOptions>(
      "qtrain-lower-cuda-step",
      "Lower a materialized training module to GPU kernel launches on "
      "device buffers (qtrain-map-step-to-gpu)",
      buildCUDAStepPipeline);
  registerOptionsPipeline<CudaStepOptions>(
      "qtrain-emulate-cuda-step",
      "qtrain-lower-cuda-step, then the launches as host loops and the LLVM "
      "dialect for the CPU: the CUDA step checked on a CPU",
      buildCUDAStepEmulationPipeline);
  registerOptionsPipeline<CudaStepKernelsOptions>(
      "qtrain-cuda-step-kernels",
      "Outline the launches of qtrain-lower-cuda-step into kernels of one "
      "module for the chip, lower them to NVVM and serialize them to PTX or "
      "a cubin",
      buildCUDAStepKernelsPipeline);
  registerOptionsPipeline<CudaStepKernelsOptions>(
      "qtrain-cuda-step-library",
      "The CUDA step's host code and kernels from a materialized training "
      "module: qtrain-lower-cuda-step, qtrain-cuda-step-kernels, the host "
      "code to LLVM with the runtime's CUDA host ABI, packed entry points",
      buildCUDAStepLibraryPipeline);
  PassPipelineRegistration<>(
      "qtrain-lower-cpu",
      "Lower a materialized training module to the LLVM dialect for the CPU",
      buildCPULoweringPipeline);
}
