//===- TosaToLinalg.cpp - TOSA input as linalg on tensors -------*- C++ -*-===//
//
// qtrain-tosa-to-linalg: upstream's lowerings from TOSA (tosa-to-linalg-named,
// tosa-to-linalg, tosa-to-arith, tosa-to-tensor) in the order and with the
// options that give the linalg on tensors qtrain's front end reads.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Frontend/TosaToLinalg.h"

#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::qtrain::buildTosaToLinalgPipeline(OpPassManager &pm) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  // Ops without a direct lowering (tosa.depthwise_conv2d with a unit
  // kernel, ...) become ones with.
  fn.addPass(tosa::createTosaOptionalDecompositionsPass());
  fn.addPass(tosa::createTosaInferShapesPass());
  // TOSA's conv2d takes OHWI filters; linalg.conv_2d_nhwc_fhwc, its direct
  // lowering, is a layout the autodiff rules and kernels do not know, so
  // the filter is transposed to HWIO for linalg.conv_2d_nhwc_hwcf.
  TosaToLinalgNamedOptions named;
  named.preferConv2DKernelLayoutHWCF = true;
  fn.addPass(tosa::createTosaToLinalgNamed(named));
  fn.addPass(tosa::createTosaToLinalg());
  fn.addPass(createTosaToArithPass());
  fn.addPass(createTosaToTensorPass());
  // The tosa.const_shape operands the lowerings no longer read.
  fn.addPass(createCanonicalizerPass());
}

void mlir::qtrain::registerTosaToLinalgPipeline() {
  PassPipelineRegistration<>(
      "qtrain-tosa-to-linalg",
      "Lower TOSA input to the linalg on tensors qtrain's front end reads",
      buildTosaToLinalgPipeline);
}

bool mlir::qtrain::hasTosaOps(ModuleOp module) {
  return module
      .walk([](Operation *op) {
        return isa<tosa::TosaDialect>(op->getDialect())
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}
