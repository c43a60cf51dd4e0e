//===- Microkernels.cpp - Bufferized GEMMs as microkernel calls -*- C++ -*-===//
//
// qtrain-microkernels: a bufferized linalg contraction that is one GEMM of
// element types a kernel of runtime/include/qtrain/ukernels.h serves
// becomes a call to that kernel, with each operand passed as base pointer,
// offset and the two strides of its GEMM dimensions.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_MICROKERNELSPASS
#include "qtrain/Transforms/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;

namespace {

/// The kernel serving `op`'s element types and body, if any.
std::optional<StringRef> kernelFor(linalg::LinalgOp op) {
  Type a = getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
  Type b = getElementTypeOrSelf(op.getDpsInputOperand(1)->get().getType());
  Type c = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
  Block &body = op->getRegion(0).front();
  if (a.isF32() && b.isF32() && c.isF32()) {
    bool isMulAdd = linalg::detail::isContractionBody(
        body, [](Operation *mul, Operation *add) {
          return isa<arith::MulFOp>(mul) && isa<arith::AddFOp>(add);
        });
    // No other arithmetic (a cast would change the product's rounding).
    bool onlyMulAdd = llvm::all_of(body, [](Operation &inner) {
      return isa<arith::MulFOp, arith::AddFOp, linalg::YieldOp>(inner);
    });
    if (isMulAdd && onlyMulAdd)
      return StringRef("qtrain_uk_gemm_f32");
    return std::nullopt;
  }
  if (a.isInteger(8) && b.isInteger(8) && c.isInteger(32)) {
    bool isMulAdd = linalg::detail::isContractionBody(
        body, [](Operation *mul, Operation *add) {
          return isa<arith::MulIOp>(mul) && isa<arith::AddIOp>(add);
        });
    // Both factors sign-extended (extui would be another product).
    bool signedCasts = llvm::all_of(body, [](Operation &inner) {
      if (auto ext = dyn_cast<arith::ExtSIOp>(inner))
        return ext.getIn().getType().isInteger(8) &&
               ext.getType().isInteger(32);
      return isa<arith::MulIOp, arith::AddIOp, linalg::YieldOp>(inner);
    });
    if (isMulAdd && signedCasts)
      return StringRef("qtrain_uk_gemm_s8s8s32");
  }
  return std::nullopt;
}

/// Position of loop `dim` among the results of `map` (a permutation of two
/// loops), or -1.
int64_t resultOf(AffineMap map, unsigned dim) {
  for (auto [index, expr] : llvm::enumerate(map.getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(expr); d && d.getPosition() == dim)
      return int64_t(index);
  return -1;
}

struct MicrokernelsPass
    : mlir::qtrain::impl::MicrokernelsPassBase<MicrokernelsPass> {
  using MicrokernelsPassBase::MicrokernelsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<linalg::LinalgOp, StringRef>> gemms;
    module.walk([&](linalg::LinalgOp op) {
      if (auto kernel = match(op))
        gemms.push_back({op, *kernel});
    });
    for (auto [op, kernel] : gemms)
      rewrite(module, op, kernel);
  }

  /// The kernel for `op` when it is one bufferized GEMM worth a call.
  std::optional<StringRef> match(linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1 || op.getNumLoops() != 3 ||
        !linalg::isaContractionOpInterface(op))
      return std::nullopt;
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims) || !dims->batch.empty() || dims->m.size() != 1 ||
        dims->n.size() != 1 || dims->k.size() != 1)
      return std::nullopt;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (!type || type.getRank() != 2 || !type.isStrided() ||
          map.getNumResults() != 2 || !map.isProjectedPermutation())
        return std::nullopt;
    }
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic) ||
        ranges[0] * ranges[1] * ranges[2] < minFlops)
      return std::nullopt;
    return kernelFor(op);
  }

  void rewrite(ModuleOp module, linalg::LinalgOp op, StringRef kernel) {
    linalg::ContractionDimensions dims = *linalg::inferContractionDims(op);
    unsigned m = dims.m.front(), n = dims.n.front(), k = dims.k.front();
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type i64 = b.getI64Type();
    auto asI64 = [&](Value index) -> Value {
      return arith::IndexCastOp::create(b, loc, i64, index);
    };
    SmallVector<Value> args;
    // Base, offset and the strides along loops `first` and `second`.
    auto pass = [&](OpOperand *operand, unsigned first, unsigned second) {
      AffineMap map = op.getMatchingIndexingMap(operand);
      auto meta =
          memref::ExtractStridedMetadataOp::create(b, loc, operand->get());
      args.push_back(meta.getBaseBuffer());
      args.push_back(asI64(meta.getOffset()));
      args.push_back(asI64(meta.getStrides()[resultOf(map, first)]));
      args.push_back(asI64(meta.getStrides()[resultOf(map, second)]));
    };
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    for (unsigned loop : {m, n, k})
      args.push_back(arith::ConstantOp::create(
          b, loc, b.getI64IntegerAttr(ranges[loop])));
    pass(op.getDpsInputOperand(0), m, k);
    pass(op.getDpsInputOperand(1), k, n);
    pass(op.getDpsInitOperand(0), m, n);

    auto callee = module.lookupSymbol<func::FuncOp>(kernel);
    auto type = b.getFunctionType(ValueRange(args).getTypes(), {});
    if (!callee) {
      OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
      callee = func::FuncOp::create(top, loc, kernel, type);
      callee.setPrivate();
    }
    func::CallOp::create(b, loc, callee, args);
    op->erase();
    ++numCalls;
  }
};

} // namespace
