//===- QTrainOps.h - qtrain operations --------------------------*- C++ -*-===//
//
// Declares the qtrain operations.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_DIALECT_QTRAINOPS_H
#define QTRAIN_DIALECT_QTRAINOPS_H

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "QTrain/QTrainOps.h.inc"

#endif // QTRAIN_DIALECT_QTRAINOPS_H
