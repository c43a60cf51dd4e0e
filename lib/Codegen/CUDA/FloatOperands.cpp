//===- FloatOperands.cpp - The float formats a product's operands hold ----===//
//
// qtrain-float-operands: marks each f32 product of the step whose operands
// hold values of reduced float formats (the roundings of PAPERS.md section
// 4, seen through ops that only move values) with qtrain.float_operands,
// so that qtrain-gpu-gemms can run it on an fp8 or bf16 kernel. A product whose
// operands can be promoted at run time is split on the promotion flags:
// the promoted branch keeps the f32 product.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/Passes.h"

#include "qtrain/Analysis/MulAddBody.h"
#include "qtrain/Codegen/CUDA/GemmKernel.h"

#include "QTrain/QTrainDialect.h"
#include "QTrain/QTrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_FLOATOPERANDSPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

/// The format whose values a tensor holds, and the i1 flags that switch
/// it to a promoted format at run time. A null format is a tensor of
/// zeros, which every format holds.
struct HeldFormat {
  FloatFormatAttr format;
  SmallVector<Value> promoted;
};

struct FloatOperandsPass
    : mlir::qtrain::impl::FloatOperandsPassBase<FloatOperandsPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

/// Whether `a` and `b` have the same values (saturation is how a value
/// was rounded, not which values there are).
static bool sameValues(FloatFormatAttr a, FloatFormatAttr b) {
  return a.getExponent() == b.getExponent() &&
         a.getMantissa() == b.getMantissa() && a.getBias() == b.getBias();
}

/// `a` and `b` together: the format both hold, or failure.
static FailureOr<HeldFormat> merge(HeldFormat a, const HeldFormat &b) {
  if (!a.format) {
    HeldFormat merged = b;
    merged.promoted.append(a.promoted);
    return merged;
  }
  if (b.format && !sameValues(a.format, b.format))
    return failure();
  a.promoted.append(b.promoted);
  return a;
}

/// Whether `value` is the constant 0.0.
static bool isZero(Value value) {
  return value && matchPattern(value, m_AnyZeroFloat());
}

/// Whether `op` copies its one input to its init, element by element
/// through its maps (a transposition or a flip).
static bool isCopy(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops())
    return false;
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  return yield.getNumOperands() == 1 &&
         yield.getOperand(0) == op.getBody()->getArgument(0);
}

/// The format of the values `value` holds: those of the rounding or
/// decoding that made them, through ops that only move values (views,
/// slices, transpositions, copies, zero padding, inserts) and zero fills.
/// None where another op made them, or deeper than `depth` such ops.
static std::optional<HeldFormat> heldFormat(Value value, int depth = 32) {
  Operation *def = value.getDefiningOp();
  if (!def || depth == 0)
    return std::nullopt;
  auto through = [&](Value source) { return heldFormat(source, depth - 1); };
  return llvm::TypeSwitch<Operation *, std::optional<HeldFormat>>(def)
      .Case([](RoundFloatOp op) -> std::optional<HeldFormat> {
        // A scaled rounding holds the format's values times 2^k for a k
        // known only at run time: values of the format with the same
        // mantissa and f32's exponent range, which bf16 holds when the
        // mantissa fits (e5m2 errors) and no fp8 byte does.
        if (op.getScaledMaxAttr()) {
          FloatFormatAttr format = op.getFormat();
          return HeldFormat{FloatFormatAttr::get(op.getContext(), 8,
                                                 format.getMantissa(), 0,
                                                 /*saturate=*/false),
                            {}};
        }
        HeldFormat held{op.getFormat(), {}};
        if (op.getPromoted())
          held.promoted.push_back(op.getPromoted());
        return held;
      })
      .Case([](DecodeFloatOp op) -> std::optional<HeldFormat> {
        HeldFormat held{op.getFormat(), {}};
        if (op.getPromoted())
          held.promoted.push_back(op.getPromoted());
        return held;
      })
      .Case([&](tensor::CollapseShapeOp op) { return through(op.getSrc()); })
      .Case([&](tensor::ExpandShapeOp op) { return through(op.getSrc()); })
      .Case([&](tensor::ExtractSliceOp op) { return through(op.getSource()); })
      .Case([&](linalg::TransposeOp op) { return through(op.getInput()); })
      .Case([&](linalg::GenericOp op) -> std::optional<HeldFormat> {
        if (!isCopy(op))
          return std::nullopt;
        return through(op.getDpsInputOperand(0)->get());
      })
      .Case([&](tensor::PadOp op) -> std::optional<HeldFormat> {
        if (!isZero(op.getConstantPaddingValue()))
          return std::nullopt;
        return through(op.getSource());
      })
      .Case([&](linalg::FillOp op) -> std::optional<HeldFormat> {
        if (!isZero(op.getDpsInputOperand(0)->get()))
          return std::nullopt;
        return HeldFormat{};
      })
      .Case([&](tensor::InsertSliceOp op) -> std::optional<HeldFormat> {
        std::optional<HeldFormat> source = through(op.getSource());
        std::optional<HeldFormat> dest = through(op.getDest());
        if (!source || !dest)
          return std::nullopt;
        FailureOr<HeldFormat> merged = merge(*source, *dest);
        if (failed(merged))
          return std::nullopt;
        return *merged;
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Marks `op` with `formats`; where promotion flags can switch its
/// operands, splits it on their disjunction into the f32 product (some
/// operand promoted) and the marked one.
static void markProduct(IRRewriter &rewriter, linalg::LinalgOp op,
                        ArrayAttr formats, ArrayRef<Value> promoted) {
  auto helper = op->getContext()
                    ->getLoadedDialect<QTrainDialect>()
                    ->getFloatOperandsAttrHelper();
  if (promoted.empty()) {
    helper.setAttr(op, formats);
    return;
  }
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value anyPromoted = promoted.front();
  for (Value flag : promoted.drop_front())
    anyPromoted = arith::OrIOp::create(rewriter, loc, anyPromoted, flag);
  auto ifOp = scf::IfOp::create(
      rewriter, loc, anyPromoted,
      [&](OpBuilder &b, Location l) {
        scf::YieldOp::create(b, l, b.clone(*op)->getResults());
      },
      [&](OpBuilder &b, Location l) {
        Operation *marked = b.clone(*op);
        helper.setAttr(marked, formats);
        scf::YieldOp::create(b, l, marked->getResults());
      });
  rewriter.replaceOp(op, ifOp.getResults());
}

void FloatOperandsPass::runOnOperation() {
  SmallVector<linalg::LinalgOp> products;
  getOperation().walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() && op.getNumReductionLoops() > 0) {
      std::optional<MulAddBody> body = getMulAddBody(op);
      if (body && body->isFloat)
        products.push_back(op);
    }
  });
  IRRewriter rewriter(&getContext());
  for (linalg::LinalgOp op : products) {
    SmallVector<Attribute> formats;
    SmallVector<Value> promoted;
    for (OpOperand *input : op.getDpsInputOperands()) {
      std::optional<HeldFormat> held = heldFormat(input->get());
      // A tensor of zeros holds every format; its product is not worth a
      // kernel of its own.
      if (!held || !held->format ||
          !(getFp8Operand(held->format) || isBf16Exact(held->format)))
        break;
      formats.push_back(held->format);
      for (Value flag : held->promoted)
        if (!llvm::is_contained(promoted, flag))
          promoted.push_back(flag);
    }
    if (formats.size() != 2)
      continue;
    markProduct(rewriter, op, rewriter.getArrayAttr(formats), promoted);
  }
}
