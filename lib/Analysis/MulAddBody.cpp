//===- MulAddBody.cpp - The arithmetic of a GEMM's body -------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Analysis/MulAddBody.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::qtrain;

std::optional<MulAddBody> mlir::qtrain::getMulAddBody(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op->getNumRegions() != 1 || op->getRegion(0).empty())
    return std::nullopt;
  Type a = getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
  Type b = getElementTypeOrSelf(op.getDpsInputOperand(1)->get().getType());
  Type c = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
  Block &body = op->getRegion(0).front();
  if (a.isF32() && b.isF32() && c.isF32()) {
    bool isMulAdd = linalg::detail::isContractionBody(
        body, [](Operation *mul, Operation *add) {
          return isa<arith::MulFOp>(mul) && isa<arith::AddFOp>(add);
        });
    bool onlyMulAdd = llvm::all_of(body, [](Operation &inner) {
      return isa<arith::MulFOp, arith::AddFOp, linalg::YieldOp>(inner);
    });
    if (!isMulAdd || !onlyMulAdd)
      return std::nullopt;
    return MulAddBody{/*isFloat=*/true, /*width=*/32};
  }
  unsigned width = a.isInteger(8) ? 8 : a.isInteger(16) ? 16 : 0;
  if (!width || !b.isInteger(width) || !c.isInteger(32))
    return std::nullopt;
  bool isMulAdd = linalg::detail::isContractionBody(
      body, [](Operation *mul, Operation *add) {
        return isa<arith::MulIOp>(mul) && isa<arith::AddIOp>(add);
      });
  auto signExtendedArg = [&](Value v) {
    auto ext = v.getDefiningOp<arith::ExtSIOp>();
    return ext && ext.getType().isInteger(32) &&
           isa<BlockArgument>(ext.getIn()) &&
           cast<BlockArgument>(ext.getIn()).getArgNumber() < 2;
  };
  bool signedCasts = llvm::all_of(body, [&](Operation &inner) {
    if (auto mul = dyn_cast<arith::MulIOp>(inner))
      return mul.getType().isInteger(32) && signExtendedArg(mul.getLhs()) &&
             signExtendedArg(mul.getRhs());
    if (auto ext = dyn_cast<arith::ExtSIOp>(inner))
      return ext.getIn().getType().isInteger(width) &&
             ext.getType().isInteger(32);
    return isa<arith::AddIOp, linalg::YieldOp>(inner);
  });
  if (!isMulAdd || !signedCasts)
    return std::nullopt;
  return MulAddBody{/*isFloat=*/false, width};
}
