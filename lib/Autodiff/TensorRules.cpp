//===- TensorRules.cpp - Reverse mode of tensor reshaping ops ---*- C++ -*-===//
//
// Padding, reshapes and slices move data without arithmetic: their adjoints
// move the adjoint back (slice out the padding, reshape back, scatter a slice
// into zeros, cut a concatenation's adjoint into its inputs' slices).
//
//===----------------------------------------------------------------------===//

#include "qtrain/Autodiff/ReverseMode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::qtrain;

static LogicalResult unsupported(Operation *op, StringRef why) {
  return op->emitError("'")
         << op->getName() << "' is not supported by qtrain: " << why;
}

LogicalResult mlir::qtrain::differentiateTensorOp(ReverseMode &rm,
                                                  Operation *op) {
  OpBuilder &b = rm.getBuilder();
  Location loc = op->getLoc();
  Value dY = rm.getAdjoint(op->getResult(0));

  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    if (!pad.getLow().empty() || !pad.getHigh().empty())
      return unsupported(op, "padding amounts that are not constants");
    auto sourceType = pad.getSourceType();
    if (!sourceType.hasStaticShape())
      return unsupported(op, "dynamic shapes in reverse mode");
    // The padding value is a constant in every model qtrain takes; the
    // source gradient is the interior of the adjoint.
    SmallVector<int64_t> strides(sourceType.getRank(), 1);
    Value grad = tensor::ExtractSliceOp::create(
        b, loc, sourceType, dY, ValueRange{}, ValueRange{}, ValueRange{},
        b.getDenseI64ArrayAttr(pad.getStaticLow()),
        b.getDenseI64ArrayAttr(sourceType.getShape()),
        b.getDenseI64ArrayAttr(strides));
    rm.accumulate(pad.getSource(), grad);
    return success();
  }

  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    Value grad = tensor::ExpandShapeOp::create(
        b, loc, collapse.getSrcType(), dY, collapse.getReassociationIndices());
    rm.accumulate(collapse.getSrc(), grad);
    return success();
  }

  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    Value grad = tensor::CollapseShapeOp::create(
        b, loc, expand.getSrcType(), dY, expand.getReassociationIndices());
    rm.accumulate(expand.getSrc(), grad);
    return success();
  }

  if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op)) {
    auto sourceType = extract.getSourceType();
    if (!sourceType.hasStaticShape() || !extract.getOffsets().empty() ||
        !extract.getSizes().empty() || !extract.getStrides().empty())
      return unsupported(op, "dynamic slices in reverse mode");
    if (extract.getResultType().getRank() != sourceType.getRank())
      return unsupported(op, "rank-reducing slices in reverse mode");
    Value grad = tensor::InsertSliceOp::create(
        b, loc, dY, rm.zeros(loc, sourceType), ValueRange{}, ValueRange{},
        ValueRange{}, extract.getStaticOffsetsAttr(),
        extract.getStaticSizesAttr(), extract.getStaticStridesAttr());
    rm.accumulate(extract.getSource(), grad);
    return success();
  }

  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    auto destType = insert.getDestType();
    if (!destType.hasStaticShape() || !insert.getOffsets().empty() ||
        !insert.getSizes().empty() || !insert.getStrides().empty())
      return unsupported(op, "dynamic slices in reverse mode");
    if (insert.getSourceType().getRank() != destType.getRank())
      return unsupported(op, "rank-expanding slices in reverse mode");
    if (rm.isVaried(insert.getSource()))
      rm.accumulate(
          insert.getSource(),
          tensor::ExtractSliceOp::create(
              b, loc, insert.getSourceType(), dY, ValueRange{}, ValueRange{},
              ValueRange{}, insert.getStaticOffsetsAttr(),
              insert.getStaticSizesAttr(), insert.getStaticStridesAttr()));
    if (rm.isVaried(insert.getDest()))
      rm.accumulate(
          insert.getDest(),
          tensor::InsertSliceOp::create(
              b, loc, rm.zeros(loc, insert.getSourceType()), dY, ValueRange{},
              ValueRange{}, ValueRange{}, insert.getStaticOffsetsAttr(),
              insert.getStaticSizesAttr(), insert.getStaticStridesAttr()));
    return success();
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    auto resultType = concat.getResultType();
    if (!resultType.hasStaticShape())
      return unsupported(op, "dynamic shapes in reverse mode");
    // Each input's gradient is its slice of the adjoint along the dimension.
    unsigned rank = resultType.getRank();
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    for (Value input : concat.getInputs()) {
      auto inputType = cast<RankedTensorType>(input.getType());
      if (rm.isVaried(input))
        rm.accumulate(input,
                      tensor::ExtractSliceOp::create(
                          b, loc, inputType, dY, ValueRange{}, ValueRange{},
                          ValueRange{}, b.getDenseI64ArrayAttr(offsets),
                          b.getDenseI64ArrayAttr(inputType.getShape()),
                          b.getDenseI64ArrayAttr(strides)));
      offsets[concat.getDim()] += inputType.getDimSize(concat.getDim());
    }
    return success();
  }
  return unsupported(op, "no reverse-mode rule");
}
