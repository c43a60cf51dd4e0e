//===- QTrainDialect.h - The qtrain dialect ---------------------*- C++ -*-===//
//
// Declares the qtrain dialect.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_DIALECT_QTRAINDIALECT_H
#define QTRAIN_DIALECT_QTRAINDIALECT_H

#include "mlir/IR/Dialect.h"

#include "QTrain/QTrainDialect.h.inc"

#endif // QTRAIN_DIALECT_QTRAINDIALECT_H
