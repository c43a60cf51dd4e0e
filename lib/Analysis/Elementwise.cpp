//===- Elementwise.cpp - Elementwise linalg.generic builder ---------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Analysis/Elementwise.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value mlir::qtrain::buildElementwise(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type element,
    ValueRange inputs, ArrayRef<AffineMap> maps,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> all(maps);
  all.push_back(AffineMap::getMultiDimIdentityMap(shape.size(), ctx));
  Value empty = tensor::EmptyOp::create(b, loc, shape, element);
  return linalg::GenericOp::create(
             b, loc, TypeRange{empty.getType()}, inputs, ValueRange{empty}, all,
             SmallVector<utils::IteratorType>(shape.size(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               linalg::YieldOp::create(nb, nl, body(nb, nl, a));
             })
      .getResult(0);
}
