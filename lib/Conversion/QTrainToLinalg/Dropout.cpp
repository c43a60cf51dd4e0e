//===- Dropout.cpp - qtrain.dropout as linalg -------------------*- C++ -*-===//
//
// qtrain.dropout as one elementwise linalg.generic whose body draws the
// element's Philox word (docs/numerics.md section 2) and keeps the element,
// scaled by 1 / (1 - p), when u = noise + 0.5 >= p.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <tuple>

using namespace mlir;
using namespace mlir::qtrain;
using namespace mlir::qtrain::tolinalg;

namespace {

struct DropoutLowering : OpConversionPattern<DropoutOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Type elementType = type.getElementType();
    double p = op.getP().convertToDouble();
    // PyTorch's scale: 1.0f / float(1 - p), in the element type.
    double scale =
        elementType.isF32() ? double(1.0f / float(1.0 - p)) : 1.0 / (1.0 - p);
    Value seedLo, seedHi;
    std::tie(seedLo, seedHi) = splitSeed(rewriter, loc, adaptor.getSeed());
    Value step = adaptor.getStep();
    int64_t rank = type.getRank();
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    Value init =
        tensor::EmptyOp::create(rewriter, loc, type.getShape(), elementType);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    ArrayRef<int64_t> shape = type.getShape();
    uint32_t stream = uint32_t(op.getStream());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{adaptor.getInput()},
        ValueRange{init}, ArrayRef<AffineMap>{id, id}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Scalar s{b, l};
          Value u = arith::AddFOp::create(
              b, l,
              philoxNoise(b, l, shape, /*quads=*/false, seedLo, seedHi,
                          s.i32(stream), step),
              s.f32(0.5));
          Value keep = s.cmp(arith::CmpFPredicate::OGE, u, s.f32(p));
          Value scaled = arith::MulFOp::create(
              b, l, args[0],
              arith::ConstantOp::create(b, l,
                                        b.getFloatAttr(elementType, scale)));
          Value zero =
              arith::ConstantOp::create(b, l, b.getFloatAttr(elementType, 0.0));
          linalg::YieldOp::create(b, l, s.select(keep, scaled, zero));
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void tolinalg::populateDropoutPatterns(RewritePatternSet &patterns) {
  patterns.add<DropoutLowering>(patterns.getContext());
}
