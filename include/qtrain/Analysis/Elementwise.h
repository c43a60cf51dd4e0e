//===- Elementwise.h - Elementwise linalg.generic builder -------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The elementwise loop that several rewrites of products build around the
/// products they replace (the input gradients' roundings and scales of
/// qtrain-integer-kernels, the fp8 errors' scaling and epilogue of
/// qtrain-fp8-error-products).
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_ANALYSIS_ELEMENTWISE_H
#define QTRAIN_ANALYSIS_ELEMENTWISE_H

#include "mlir/IR/Builders.h"

namespace mlir::qtrain {

/// A linalg.generic over `shape` (all loops parallel, identity output map
/// into a fresh tensor of `element`) reading `inputs` through `maps`;
/// `body` maps the inputs' elements to the result's.
Value buildElementwise(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type element,
    ValueRange inputs, ArrayRef<AffineMap> maps,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body);

} // namespace mlir::qtrain

#endif // QTRAIN_ANALYSIS_ELEMENTWISE_H
