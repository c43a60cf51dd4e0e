//===- QTrainDialect.h - The qtrain dialect ---------------------*- C++ -*-===//
//
// Declares the qtrain dialect (and, with it, the typed helpers of the
// discardable attributes it owns, which hold qtrain attributes).
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_DIALECT_QTRAINDIALECT_H
#define QTRAIN_DIALECT_QTRAINDIALECT_H

#include "QTrain/QTrainAttrs.h"

#include "mlir/IR/Dialect.h"

#include "QTrain/QTrainDialect.h.inc"

#endif // QTRAIN_DIALECT_QTRAINDIALECT_H
