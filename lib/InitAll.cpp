//===- InitAll.cpp - Register qtrain's dialects and passes ------*- C++ -*-===//
//
// The dialects and passes of the qtrain tools.
//
//===----------------------------------------------------------------------===//

#include "qtrain/InitAll.h"

#include "QTrain/QTrainDialect.h"
#include "qtrain/Codegen/CPU/Passes.h"
#include "qtrain/Codegen/CUDA/Passes.h"
#include "qtrain/Conversion/Passes.h"
#include "qtrain/Frontend/Passes.h"
#include "qtrain/Frontend/TosaToLinalg.h"
#include "qtrain/Kernels/Passes.h"
#include "qtrain/Quant/Passes.h"
#include "qtrain/Target/Bundle/Passes.h"

#include "qtrain/Pipelines/Pipelines.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

void mlir::qtrain::registerAllDialects(DialectRegistry &registry) {
  registry.insert<arith::ArithDialect, bufferization::BufferizationDialect,
                  func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect, tensor::TensorDialect,
                  QTrainDialect, cf::ControlFlowDialect, LLVM::LLVMDialect,
                  omp::OpenMPDialect>();
  // What exporters emit around or instead of linalg on tensors
  // (qtrain-strip-export, qtrain-tosa-to-linalg).
  registry.insert<ml_program::MLProgramDialect, tosa::TosaDialect>();
  // Bufferization of the dialects a training step uses (qtrain-lower-cpu).
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  // The CUDA target (docs/cuda.md): GPU kernels in NVVM, serialized to PTX
  // through LLVM's NVPTX backend by gpu-module-to-binary.
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  // gpu.binary and gpu.launch_func of the CUDA step: the PTX embedded, the
  // launches as calls of the GPU runtime ABI (CudaHostAbi.h).
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  // convert-gpu-to-nvvm lowers the kernels' arith, cf, math, memref and ub
  // ops through these interfaces (the CPU lowering names its passes).
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
}

void mlir::qtrain::registerAllPasses() {
  registerQTrainFrontendPasses();
  registerQTrainQuantPasses();
  registerQTrainKernelsPasses();
  registerQTrainConversionPasses();
  registerQTrainCodegenCPUPasses();
  registerQTrainCodegenCUDAPasses();
  registerQTrainBundlePasses();
  registerPipelines();
  registerTosaToLinalgPipeline();
  registerCanonicalizerPass();
  registerCSEPass();
  // The CUDA step's kernels (docs/cuda.md): outlined from the launches of
  // qtrain-lower-cuda-step, with the chip's NVVM target.
  registerGpuLaunchSinkIndexComputationsPass();
  registerGpuKernelOutliningPass();
  registerGpuNVVMAttachTarget();
  registerSymbolDCEPass();
  registerInlinerPass();
}
