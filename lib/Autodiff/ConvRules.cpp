//===- ConvRules.cpp - Reverse mode of convolution and pooling --*- C++ -*-===//
//
// The input gradient of a convolution is itself a convolution: the adjoint,
// dilated by the stride and padded by the dilated kernel extent, correlated
// with the kernel flipped in space and transposed in channels. Keeping it a
// named convolution lets kernel formation treat it like the forward one. The
// weight gradient and the accumulator gradient come from the generic rule.
//
// Pooling windows overlap in general, so the input gradient of a pooling op
// is accumulated window offset by window offset through strided slices; max
// pooling sends the gradient to the first maximum of each window (row-major),
// as PyTorch does.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Autodiff/ReverseMode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::qtrain;

namespace mlir::qtrain {
LogicalResult differentiateLinalgOperand(ReverseMode &rm, linalg::LinalgOp op,
                                         OpOperand &operand);
} // namespace mlir::qtrain

bool mlir::qtrain::isConvolution(Operation *op) {
  return isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNhwcHwcfOp,
             linalg::Conv2DNhwcFhwcOp, linalg::Conv2DNgchwGfchwOp,
             linalg::Conv2DNgchwFgchwOp, linalg::Conv2DNhwgcGfhwcOp,
             linalg::DepthwiseConv2DNchwChwOp,
             linalg::DepthwiseConv2DNhwcHwcOp>(op);
}

bool mlir::qtrain::isPooling(Operation *op) {
  return isa<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp,
             linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp>(op);
}

/// Reads the 2-element `strides` or `dilations` of a named convolution or
/// pooling op; both default to 1 when absent.
static SmallVector<int64_t, 2> readPair(Operation *op, StringRef name) {
  auto attr = op->getAttrOfType<DenseIntElementsAttr>(name);
  if (!attr)
    return {1, 1};
  SmallVector<int64_t, 2> values;
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

/// Spatial layout of a 2-D convolution or pooling op.
struct Layout2D {
  /// Position of H and W in the input/output tensors.
  unsigned h, w;
  /// Position of the channel dimension of input and output.
  unsigned channel;
};

static Layout2D layoutOf(Operation *op) {
  if (isa<linalg::Conv2DNchwFchwOp, linalg::DepthwiseConv2DNchwChwOp,
          linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(op))
    return {2, 3, 1};
  if (isa<linalg::Conv2DNgchwGfchwOp, linalg::Conv2DNgchwFgchwOp>(op))
    return {3, 4, 2};
  if (isa<linalg::Conv2DNhwgcGfhwcOp>(op))
    return {1, 2, 4};
  return {1, 2, 3};
}

/// Where a convolution kernel keeps its spatial dimensions and its two
/// channel dimensions (input and output channels, swapped by the input
/// gradient; a depthwise kernel has a single channel dimension).
struct KernelLayout {
  /// Position of the kernel's height; its width follows.
  unsigned kh;
  /// Positions of the output- and input-channel dimensions, or none.
  std::optional<std::pair<unsigned, unsigned>> channels;
};

static KernelLayout kernelLayoutOf(Operation *op) {
  if (isa<linalg::Conv2DNchwFchwOp>(op))
    return {2, std::pair(0u, 1u)};
  if (isa<linalg::Conv2DNhwcHwcfOp>(op))
    return {0, std::pair(3u, 2u)};
  if (isa<linalg::Conv2DNhwcFhwcOp>(op))
    return {1, std::pair(0u, 3u)};
  if (isa<linalg::Conv2DNgchwGfchwOp>(op))
    return {3, std::pair(1u, 2u)};
  if (isa<linalg::Conv2DNgchwFgchwOp>(op))
    return {3, std::pair(0u, 2u)};
  if (isa<linalg::Conv2DNhwgcGfhwcOp>(op))
    return {2, std::pair(1u, 4u)};
  if (isa<linalg::DepthwiseConv2DNchwChwOp>(op))
    return {1, std::nullopt};
  return {0, std::nullopt};
}

/// A convolution of the same kind as `op` at stride 1 and the given
/// dilation.
template <typename... OpTys>
static Operation *createLike(OpBuilder &b, Location loc, Operation *op,
                             Type resultType, ValueRange ins, ValueRange outs,
                             Attribute strides, Attribute dilations) {
  Operation *created = nullptr;
  ((isa<OpTys>(op)
        ? (void)(created = OpTys::create(b, loc, TypeRange{resultType}, ins,
                                         outs, strides, dilations))
        : (void)0),
   ...);
  return created;
}

/// Checks that every shape involved is static; reverse mode sizes its
/// intermediate tensors from them.
static LogicalResult requireStatic(Operation *op) {
  for (Type t : op->getOperandTypes())
    if (auto ranked = dyn_cast<RankedTensorType>(t);
        ranked && !ranked.hasStaticShape())
      return op->emitError("'") << op->getName()
                                << "' is not supported by qtrain with dynamic "
                                   "shapes in reverse mode";
  return success();
}

LogicalResult mlir::qtrain::differentiateConvolution(ReverseMode &rm,
                                                     Operation *op) {
  auto conv = cast<linalg::LinalgOp>(op);
  if (failed(requireStatic(op)))
    return failure();
  OpOperand *input = conv.getDpsInputOperand(0);
  // Weight and accumulator: the generic rule.
  for (OpOperand &operand : op->getOpOperands())
    if (&operand != input && rm.isVaried(operand.get()) &&
        failed(differentiateLinalgOperand(rm, conv, operand)))
      return failure();
  if (!rm.isVaried(input->get()))
    return success();

  KernelLayout kernelLayout = kernelLayoutOf(op);
  auto strides = readPair(op, "strides");
  auto dilations = readPair(op, "dilations");
  Value x = input->get(), weight = conv.getDpsInputOperand(1)->get();
  Value dY = rm.getAdjoint(op->getResult(0));
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(weight.getType());
  auto dyType = cast<RankedTensorType>(dY.getType());
  Layout2D layout = layoutOf(op);
  unsigned kh = kernelLayout.kh;
  int64_t kernel[2] = {wType.getDimSize(kh), wType.getDimSize(kh + 1)};
  unsigned spatial[2] = {layout.h, layout.w};

  OpBuilder &b = rm.getBuilder();
  Location loc = op->getLoc();
  Type f32 = xType.getElementType();

  // 1. Dilate the adjoint by the stride.
  Value dilated = dY;
  if (strides[0] != 1 || strides[1] != 1) {
    SmallVector<int64_t> shape(dyType.getShape());
    for (unsigned i = 0; i < 2; ++i)
      shape[spatial[i]] = (dyType.getDimSize(spatial[i]) - 1) * strides[i] + 1;
    auto type = RankedTensorType::get(shape, f32);
    SmallVector<int64_t> offsets(shape.size(), 0), steps(shape.size(), 1);
    for (unsigned i = 0; i < 2; ++i)
      steps[spatial[i]] = strides[i];
    dilated = tensor::InsertSliceOp::create(
        b, loc, dY, rm.zeros(loc, type), ValueRange{}, ValueRange{},
        ValueRange{}, b.getDenseI64ArrayAttr(offsets),
        b.getDenseI64ArrayAttr(dyType.getShape()),
        b.getDenseI64ArrayAttr(steps));
  }

  // 2. Pad by the dilated kernel extent, plus the input rows and columns no
  //    window reached.
  auto dilatedType = cast<RankedTensorType>(dilated.getType());
  SmallVector<int64_t> low(xType.getRank(), 0), high(xType.getRank(), 0);
  SmallVector<int64_t> paddedShape(dilatedType.getShape());
  for (unsigned i = 0; i < 2; ++i) {
    int64_t extent = dilations[i] * (kernel[i] - 1);
    int64_t covered = dilatedType.getDimSize(spatial[i]) + extent;
    low[spatial[i]] = extent;
    high[spatial[i]] = extent + (xType.getDimSize(spatial[i]) - covered);
    paddedShape[spatial[i]] += low[spatial[i]] + high[spatial[i]];
  }
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(f32));
  auto paddedType = RankedTensorType::get(paddedShape, f32);
  SmallVector<OpFoldResult> lowOfr, highOfr;
  for (unsigned i = 0; i < low.size(); ++i) {
    lowOfr.push_back(b.getIndexAttr(low[i]));
    highOfr.push_back(b.getIndexAttr(high[i]));
  }
  Value padded = tensor::PadOp::create(b, loc, paddedType, dilated, lowOfr,
                                       highOfr, zero, /*nofold=*/false);

  // 3. Flip the kernel in space and swap its channel dimensions (a
  //    depthwise kernel has one channel dimension, nothing to swap; a
  //    grouped kernel keeps its group dimension).
  SmallVector<int64_t> flippedShape(wType.getShape());
  MLIRContext *ctx = b.getContext();
  unsigned wRank = wType.getRank();
  SmallVector<AffineExpr> d;
  for (unsigned i = 0; i < wRank; ++i)
    d.push_back(getAffineDimExpr(i, ctx));
  SmallVector<AffineExpr> read(d);
  read[kh] = kernel[0] - 1 - d[kh];
  read[kh + 1] = kernel[1] - 1 - d[kh + 1];
  if (auto channels = kernelLayout.channels) {
    // e.g. fchw: flipped[c, f, ...] = w[f, c, ...].
    auto [out, in] = *channels;
    std::swap(flippedShape[out], flippedShape[in]);
    std::swap(read[out], read[in]);
  }
  AffineMap readMap = AffineMap::get(wRank, 0, read, ctx);
  auto flippedType = RankedTensorType::get(flippedShape, f32);
  Value flippedInit = tensor::EmptyOp::create(b, loc, flippedShape, f32);
  Value flipped =
      linalg::GenericOp::create(
          b, loc, TypeRange{flippedType}, ValueRange{weight},
          ValueRange{flippedInit},
          ArrayRef<AffineMap>{readMap,
                              AffineMap::getMultiDimIdentityMap(wRank, ctx)},
          SmallVector<utils::IteratorType>(wRank,
                                           utils::IteratorType::parallel),
          [](OpBuilder &nb, Location nloc, ValueRange args) {
            linalg::YieldOp::create(nb, nloc, args[0]);
          })
          .getResult(0);

  // 4. Correlate at stride 1 with the forward dilation.
  auto one = b.getI64VectorAttr({1, 1});
  auto dil = b.getI64VectorAttr({dilations[0], dilations[1]});
  Value dxInit = rm.zeros(loc, xType);
  SmallVector<Value> ins = {padded, flipped}, outs = {dxInit};
  Operation *dxOp =
      createLike<linalg::Conv2DNchwFchwOp, linalg::Conv2DNhwcHwcfOp,
                 linalg::Conv2DNhwcFhwcOp, linalg::Conv2DNgchwGfchwOp,
                 linalg::Conv2DNgchwFgchwOp, linalg::Conv2DNhwgcGfhwcOp,
                 linalg::DepthwiseConv2DNchwChwOp,
                 linalg::DepthwiseConv2DNhwcHwcOp>(b, loc, op, xType, ins, outs,
                                                   one, dil);
  Value dx = dxOp->getResult(0);
  rm.accumulate(x, dx);
  return success();
}

LogicalResult mlir::qtrain::differentiatePooling(ReverseMode &rm,
                                                 Operation *op) {
  auto pool = cast<linalg::LinalgOp>(op);
  if (failed(requireStatic(op)))
    return failure();
  OpOperand *input = pool.getDpsInputOperand(0);
  if (rm.isVaried(pool.getDpsInitOperand(0)->get()))
    return op->emitError("'") << op->getName()
                              << "' is not supported by qtrain: a pooling "
                                 "accumulator that depends on a parameter";
  if (!rm.isVaried(input->get()))
    return success();
  bool isMax = isa<linalg::PoolingNchwMaxOp, linalg::PoolingNhwcMaxOp>(op);
  auto strides = readPair(op, "strides");
  auto dilations = readPair(op, "dilations");
  Value x = input->get(), y = op->getResult(0);
  Value dY = rm.getAdjoint(y);
  auto xType = cast<RankedTensorType>(x.getType());
  auto yType = cast<RankedTensorType>(y.getType());
  auto windowType =
      cast<RankedTensorType>(pool.getDpsInputOperand(1)->get().getType());
  Layout2D layout = layoutOf(op);
  unsigned spatial[2] = {layout.h, layout.w};
  unsigned rank = xType.getRank();

  OpBuilder &b = rm.getBuilder();
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Type f32 = xType.getElementType();
  auto id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);

  Value dx = rm.zeros(loc, xType);
  // Which outputs already sent their gradient to an earlier maximum.
  auto maskType = RankedTensorType::get(yType.getShape(), b.getI1Type());
  Value taken;
  if (isMax) {
    Value empty =
        tensor::EmptyOp::create(b, loc, maskType.getShape(), b.getI1Type());
    Value no = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
    taken = linalg::FillOp::create(b, loc, no, empty).getResult(0);
  }
  SmallVector<int64_t> sizes(yType.getShape()), steps(rank, 1);
  for (unsigned i = 0; i < 2; ++i)
    steps[spatial[i]] = strides[i];
  for (int64_t kh = 0; kh < windowType.getDimSize(0); ++kh) {
    for (int64_t kw = 0; kw < windowType.getDimSize(1); ++kw) {
      SmallVector<int64_t> offsets(rank, 0);
      offsets[spatial[0]] = kh * dilations[0];
      offsets[spatial[1]] = kw * dilations[1];
      auto offsetsAttr = b.getDenseI64ArrayAttr(offsets);
      auto sizesAttr = b.getDenseI64ArrayAttr(sizes);
      auto stepsAttr = b.getDenseI64ArrayAttr(steps);
      // This offset's slice of dx, updated in place: the slice is the
      // generic's init, so no temporary of the pooled size is made.
      Value current = tensor::ExtractSliceOp::create(
          b, loc, yType, dx, ValueRange{}, ValueRange{}, ValueRange{},
          offsetsAttr, sizesAttr, stepsAttr);
      Value sum;
      if (isMax) {
        Value window = tensor::ExtractSliceOp::create(
            b, loc, yType, x, ValueRange{}, ValueRange{}, ValueRange{},
            offsetsAttr, sizesAttr, stepsAttr);
        Value maskInit =
            tensor::EmptyOp::create(b, loc, maskType.getShape(), b.getI1Type());
        auto step = linalg::GenericOp::create(
            b, loc, TypeRange{yType, maskType},
            ValueRange{window, y, dY, taken}, ValueRange{current, maskInit},
            SmallVector<AffineMap>(6, id), parallel,
            [&](OpBuilder &nb, Location nloc, ValueRange args) {
              Value isMaxHere = arith::CmpFOp::create(
                  nb, nloc, arith::CmpFPredicate::OEQ, args[0], args[1]);
              Value notTaken = arith::XOrIOp::create(
                  nb, nloc, args[3],
                  arith::ConstantOp::create(nb, nloc, nb.getBoolAttr(true)));
              Value send = arith::AndIOp::create(nb, nloc, isMaxHere, notTaken);
              Value zeroF = arith::ConstantOp::create(
                  nb, nloc, nb.getFloatAttr(f32, 0.0));
              Value grad =
                  arith::SelectOp::create(nb, nloc, send, args[2], zeroF);
              Value updated = arith::AddFOp::create(nb, nloc, args[4], grad);
              Value nowTaken =
                  arith::OrIOp::create(nb, nloc, args[3], isMaxHere);
              linalg::YieldOp::create(nb, nloc, ValueRange{updated, nowTaken});
            });
        sum = step.getResult(0);
        taken = step.getResult(1);
      } else {
        Value sumInit = tensor::EmptyOp::create(b, loc, yType.getShape(), f32);
        sum = linalg::AddOp::create(b, loc, ValueRange{current, dY},
                                    ValueRange{sumInit})
                  .getResult(0);
      }
      dx = tensor::InsertSliceOp::create(b, loc, sum, dx, ValueRange{},
                                         ValueRange{}, ValueRange{},
                                         offsetsAttr, sizesAttr, stepsAttr);
    }
  }
  rm.accumulate(x, dx);
  return success();
}
