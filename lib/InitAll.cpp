//===- InitAll.cpp - Register qtrain's dialects and passes ------*- C++ -*-===//
//
// The dialects and passes of the qtrain tools.
//
//===----------------------------------------------------------------------===//

#include "qtrain/InitAll.h"

#include "QTrain/QTrainDialect.h"
#include "qtrain/Conversion/Passes.h"
#include "qtrain/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::qtrain::registerAllDialects(DialectRegistry &registry) {
  registry.insert<arith::ArithDialect, bufferization::BufferizationDialect,
                  func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect, tensor::TensorDialect,
                  QTrainDialect>();
}

void mlir::qtrain::registerAllPasses() {
  registerQTrainTransformsPasses();
  registerQTrainConversionPasses();
  registerCanonicalizerPass();
  registerCSEPass();
  registerSymbolDCEPass();
  registerInlinerPass();
}
