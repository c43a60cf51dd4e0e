//===- Pipelines.cpp - qtrain's named pass pipelines ------------*- C++ -*-===//
//
// The CPU lowering pipeline of qtrain-compile.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Pipelines/Pipelines.h"

#include "qtrain/Conversion/Passes.h"
#include "qtrain/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::qtrain::buildCPUBufferPipeline(OpPassManager &pm) {
  pm.addPass(createConvertQTrainToLinalgPass());
  pm.addPass(createFuseDecodesPass());
  pm.addPass(createDropAnnotationsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvToGemmPass());
  pm.addPass(createFoldTransposesPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCollapseDimsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createLoopOrderPass());
  pm.addPass(createReassociateSumsPass());
  pm.addPass(createReuseDyingInputsPass());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = true;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createFreeEarlyPass());
}

void mlir::qtrain::buildCPULoweringPipeline(OpPassManager &pm) {
  buildCPUBufferPipeline(pm);
  pm.addPass(createCopiesToLinalgPass());
  pm.addPass(createMicrokernelsPass());

  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createUnrollShortLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createPromoteAccumulatorsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // Views at dynamic offsets (a batch chunk of qtrain-conv-to-gemm) leave
  // affine.apply for their offsets.
  pm.addPass(createLowerAffinePass());
  // Buffers go through the generic allocation functions, which the
  // microkernel library implements with a byte count (qtrain/ukernels.h).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
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

void mlir::qtrain::registerPipelines() {
  PassPipelineRegistration<>(
      "qtrain-lower-cpu",
      "Lower a materialized training module to the LLVM dialect for the CPU",
      buildCPULoweringPipeline);
}
