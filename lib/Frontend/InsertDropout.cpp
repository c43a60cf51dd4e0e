//===- InsertDropout.cpp - Dropout marks become qtrain.dropout --*- C++ -*-===//
//
// qtrain-insert-dropout: an elementwise identity linalg.generic of the
// forward graph marked {qtrain.dropout = p} (what qtrain-import-torch
// writes for nn.Dropout) becomes qtrain.dropout on the step's seed and step
// controls, one Philox stream per site (docs/passes/insert-dropout.md).
//
//===----------------------------------------------------------------------===//

#include "qtrain/Frontend/Passes.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Remarks.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_INSERTDROPOUTPASS
#include "qtrain/Frontend/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct InsertDropoutPass
    : mlir::qtrain::impl::InsertDropoutPassBase<InsertDropoutPass> {
  using InsertDropoutPassBase::InsertDropoutPassBase;
  void runOnOperation() override;
};

} // namespace

/// Whether `op` is an elementwise copy of its one input into a result of
/// the same type (the only form a dropout mark may take).
static bool isIdentityCopy(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumResults() != 1)
    return false;
  Value input = op.getDpsInputOperand(0)->get();
  if (input.getType() != op.getResult(0).getType())
    return false;
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      op.getNumParallelLoops() != op.getNumLoops())
    return false;
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  return yield.getNumOperands() == 1 &&
         yield.getOperand(0) == op.getBody()->getArgument(0);
}

/// The argument of `fn` with `{qtrain.control = name}`, or null.
static Value controlArgument(func::FuncOp fn, StringRef name) {
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    if (auto attr = fn.getArgAttrOfType<StringAttr>(i, kControlAttrName))
      if (attr.getValue() == name)
        return fn.getArgument(i);
  return {};
}

void InsertDropoutPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto fn = module.lookupSymbol<func::FuncOp>(forward);
  if (!fn || fn.isExternal())
    return; // Nothing marked without a forward graph.
  SmallVector<linalg::GenericOp> marked;
  fn.walk([&](linalg::GenericOp op) {
    if (op->hasAttr(kDropoutAttrName))
      marked.push_back(op);
  });
  if (marked.empty())
    return;
  Value seed = controlArgument(fn, "seed"), step = controlArgument(fn, "step");
  if (!seed || !step || !seed.getType().isInteger(64) ||
      !step.getType().isInteger(32)) {
    fn.emitError("qtrain-insert-dropout: @")
        << fn.getSymName()
        << " has dropout but no i64 {qtrain.control = \"seed\"} and i32 "
           "{qtrain.control = \"step\"} arguments (run qtrain-insert-quant "
           "first: it adds them)";
    return signalPassFailure();
  }
  for (auto [site, op] : llvm::enumerate(marked)) {
    auto p = dyn_cast<FloatAttr>(op->getAttr(kDropoutAttrName));
    if (!p || !(p.getValueAsDouble() >= 0.0 && p.getValueAsDouble() < 1.0)) {
      op.emitError("qtrain-insert-dropout: ")
          << kDropoutAttrName << " must be a probability in [0, 1), got "
          << op->getAttr(kDropoutAttrName);
      return signalPassFailure();
    }
    if (!isIdentityCopy(op)) {
      op.emitError("qtrain-insert-dropout: a dropout mark must be on an "
                   "elementwise copy of one tensor (identity maps, parallel "
                   "loops, a body that yields its input)");
      return signalPassFailure();
    }
    OpBuilder b(op);
    int64_t stream = kDropoutStreamBase + int64_t(site);
    auto dropout = DropoutOp::create(
        b, op.getLoc(), op.getResult(0).getType(),
        op.getDpsInputOperand(0)->get(), seed, step,
        b.getF64FloatAttr(p.getValueAsDouble()), b.getI64IntegerAttr(stream));
    op.getResult(0).replaceAllUsesWith(dropout.getResult());
    op.erase();
    remark::analysis(dropout.getLoc(), remark::RemarkOpts::name("dropout")
                                           .category(getArgument())
                                           .function(fn.getSymName()))
        << llvm::formatv("dropout #{0} (p = {1:e}) trains with a Philox mask "
                         "of stream {2}; evaluation skips it",
                         site, p.getValueAsDouble(), stream)
               .str();
  }
}
