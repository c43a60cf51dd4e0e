//===- Microkernels.cpp - Bufferized GEMMs as microkernel calls -*- C++ -*-===//
//
// qtrain-microkernels: a bufferized linalg contraction that is one GEMM of
// element types a kernel of runtime/include/qtrain/microkernels.h serves
// becomes a call to that kernel, with each operand passed as base pointer,
// offset and the two strides of its GEMM dimensions.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/CodeBits.h"
#include "qtrain/Codegen/CPU/Passes.h"

#include "qtrain/Analysis/BufferAliasing.h"
#include "qtrain/Analysis/ConvAsGemm.h"
#include "qtrain/Analysis/MulAddBody.h"

#include "QTrain/QTrainDialect.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_MICROKERNELSPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using mlir::qtrain::hasImplicitGemmKernel;
using mlir::qtrain::mayAlias;
using mlir::qtrain::rootOf;

namespace {

/// The code widths qtrain-integer-kernels recorded on `op`, if valid.
std::optional<std::pair<int32_t, int32_t>> codeBits(Operation *op) {
  DenseI32ArrayAttr bits = op->getContext()
                               ->getLoadedDialect<mlir::qtrain::QTrainDialect>()
                               ->getCodeBitsAttrHelper()
                               .getAttr(op);
  if (!bits || bits.size() != 2 || bits[0] < 1 || bits[0] > 8 || bits[1] < 1 ||
      bits[1] > 8)
    return std::nullopt;
  return std::make_pair(bits[0], bits[1]);
}

/// The kernel serving `op`'s element types and body, if any.
std::optional<StringRef> kernelFor(linalg::LinalgOp op) {
  std::optional<mlir::qtrain::MulAddBody> body =
      mlir::qtrain::getMulAddBody(op);
  if (!body)
    return std::nullopt;
  if (body->isFloat) {
    // Operands that hold bf16 values (qtrain-integer-kernels
    // input-grad=bf16) have the same products in the bf16 kernel, which
    // rounds them to bf16 exactly.
    bool bf16 = op->getContext()
                    ->getLoadedDialect<mlir::qtrain::QTrainDialect>()
                    ->getBf16OperandsAttrHelper()
                    .isAttrPresent(op);
    return StringRef(bf16 ? "qtrain_mk_gemm_bf16" : "qtrain_mk_gemm_f32");
  }
  if (body->width == 16)
    return StringRef("qtrain_mk_gemm_s16s16s32");
  // Narrow codes (qtrain-integer-kernels says how narrow): bit-serial
  // when it has at most 4 bit-plane pairs, where it is faster than VNNI.
  if (std::optional<std::pair<int32_t, int32_t>> bits = codeBits(op))
    if (mlir::qtrain::usesBitSerialGemm(bits->first, bits->second))
      return StringRef("qtrain_mk_gemm_bitserial");
  return StringRef("qtrain_mk_gemm_s8s8s32");
}

/// Position of loop `dim` among the results of `map` (a permutation of two
/// loops), or -1.
int64_t resultOf(AffineMap map, unsigned dim) {
  for (auto [index, expr] : llvm::enumerate(map.getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(expr); d && d.getPosition() == dim)
      return int64_t(index);
  return -1;
}

/// Whether an op strictly between `from` and `to` (same block) may write
/// memory that `buffer` aliases. With `frees`, a memref.dealloc of
/// `buffer`'s own allocation does not count and is collected there instead
/// (qtrain-free-early puts a buffer's dealloc right after its last use,
/// which a fold moves).
bool writtenBetween(Operation *from, Operation *to, Value buffer,
                    SmallVectorImpl<Operation *> *frees = nullptr) {
  Value root = rootOf(buffer);
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op);
        dealloc && frees && rootOf(dealloc.getMemref()) == root) {
      frees->push_back(op);
      continue;
    }
    std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
        getEffectsRecursively(op);
    if (!effects)
      return true;
    for (const MemoryEffects::EffectInstance &effect : *effects) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect()))
        continue;
      Value written = effect.getValue();
      if (!written || mayAlias(rootOf(written), root))
        return true;
    }
  }
  return false;
}

/// When `operand` is a fresh buffer that a 2-D linalg.transpose filled from
/// `source` just for `gemm` (its only other users deallocate it) and nothing
/// writes `source` in between: the transpose, so the GEMM can read
/// `source` with its strides permuted instead. A deallocation of `source`
/// in between is then moved after the GEMM, which now reads it.
linalg::TransposeOp foldableTranspose(linalg::LinalgOp gemm, Value operand) {
  auto alloc = operand.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return {};
  linalg::TransposeOp transpose;
  for (Operation *user : alloc->getUsers()) {
    if (user == gemm.getOperation() || isa<memref::DeallocOp>(user))
      continue;
    auto t = dyn_cast<linalg::TransposeOp>(user);
    if (!t || transpose || t.getInit() != operand)
      return {};
    transpose = t;
  }
  SmallVector<Operation *> sourceFrees;
  if (!transpose || transpose->getBlock() != gemm->getBlock() ||
      !transpose->isBeforeInBlock(gemm) ||
      writtenBetween(transpose, gemm, transpose.getInput(), &sourceFrees))
    return {};
  // (The GEMM itself may write the source, in place, when the copy was what
  // let bufferization reuse the source for the output: the kernels copy an
  // input that overlaps their output before they write it, which is the
  // snapshot the transpose took.)

  // Deallocations must come after the GEMM.
  for (Operation *user : alloc->getUsers())
    if (isa<memref::DeallocOp>(user) &&
        (user->getBlock() != gemm->getBlock() || user->isBeforeInBlock(gemm)))
      return {};
  for (Operation *free : sourceFrees)
    free->moveAfter(gemm);
  return transpose;
}

/// A call to `kernel` with `args`, declaring it (private) on first use.
void callKernel(ModuleOp module, OpBuilder &b, Location loc, StringRef kernel,
                ValueRange args) {
  auto callee = module.lookupSymbol<func::FuncOp>(kernel);
  if (!callee) {
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    callee = func::FuncOp::create(top, loc, kernel,
                                  b.getFunctionType(args.getTypes(), {}));
    callee.setPrivate();
  }
  func::CallOp::create(b, loc, callee, args);
}

struct MicrokernelsPass
    : mlir::qtrain::impl::MicrokernelsPassBase<MicrokernelsPass> {
  using MicrokernelsPassBase::MicrokernelsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<linalg::LinalgOp, StringRef>> gemms;
    SmallVector<std::pair<linalg::Conv2DNchwFchwOp, StringRef>> convs;
    module.walk([&](linalg::LinalgOp op) {
      if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation())) {
        if (auto kernel = matchConv(conv))
          convs.push_back({conv, *kernel});
      } else if (auto kernel = match(op)) {
        gemms.push_back({op, *kernel});
      }
    });
    for (auto [op, kernel] : gemms)
      rewrite(module, op, kernel);
    for (auto [conv, kernel] : convs)
      rewriteConv(module, conv, kernel);
    // The hints have done their job; nothing below reads them.
    auto *dialect =
        getContext().getLoadedDialect<mlir::qtrain::QTrainDialect>();
    auto codeBitsAttr = dialect->getCodeBitsAttrHelper();
    auto bf16Attr = dialect->getBf16OperandsAttrHelper();
    module.walk([&](Operation *op) {
      if (codeBitsAttr.isAttrPresent(op))
        codeBitsAttr.removeAttr(op);
      if (bf16Attr.isAttrPresent(op))
        bf16Attr.removeAttr(op);
    });
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

  /// The implicit-GEMM kernel for `conv`, a bufferized convolution on f32
  /// or on sign-extended i8 codes summed in i32, if any.
  std::optional<StringRef> matchConv(linalg::Conv2DNchwFchwOp conv) {
    if (!conv.hasPureBufferSemantics())
      return std::nullopt;
    for (Value operand : conv->getOperands()) {
      auto type = dyn_cast<MemRefType>(operand.getType());
      if (!type || type.getRank() != 4 || !type.hasStaticShape() ||
          !type.isStrided())
        return std::nullopt;
    }
    SmallVector<int64_t> ranges = conv.getStaticLoopRanges();
    int64_t macs = 1;
    for (int64_t r : ranges)
      macs *= r;
    if (macs < minFlops)
      return std::nullopt;
    Type x = getElementTypeOrSelf(conv.getInputs()[0].getType());
    Type w = getElementTypeOrSelf(conv.getInputs()[1].getType());
    Type y = getElementTypeOrSelf(conv.getOutputs()[0].getType());
    if (!hasImplicitGemmKernel(x, w, y))
      return std::nullopt;
    if (x.isF32())
      return StringRef(conv->getContext()
                               ->getLoadedDialect<mlir::qtrain::QTrainDialect>()
                               ->getBf16OperandsAttrHelper()
                               .isAttrPresent(conv)
                           ? "qtrain_mk_conv2d_nchw_bf16"
                           : "qtrain_mk_conv2d_nchw_f32");
    Block &body = conv->getRegion(0).front();
    bool signedProducts = llvm::all_of(body, [](Operation &inner) {
      if (auto ext = dyn_cast<arith::ExtSIOp>(inner))
        return ext.getIn().getType().isInteger(8) &&
               ext.getType().isInteger(32);
      return isa<arith::MulIOp, arith::AddIOp, linalg::YieldOp>(inner);
    });
    if (signedProducts)
      return StringRef("qtrain_mk_conv2d_nchw_s8s8s32");
    return std::nullopt;
  }

  /// The convolution as a call: sizes, strides, dilations, then each
  /// operand's base, offset and four strides.
  void rewriteConv(ModuleOp module, linalg::Conv2DNchwFchwOp conv,
                   StringRef kernel) {
    OpBuilder b(conv);
    Location loc = conv.getLoc();
    Type i64 = b.getI64Type();
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
    };
    Value x = conv.getInputs()[0], w = conv.getInputs()[1],
          y = conv.getOutputs()[0];
    ArrayRef<int64_t> xs = cast<MemRefType>(x.getType()).getShape();
    ArrayRef<int64_t> ws = cast<MemRefType>(w.getType()).getShape();
    ArrayRef<int64_t> ys = cast<MemRefType>(y.getType()).getShape();
    SmallVector<Value> args;
    for (int64_t v :
         {xs[0], xs[1], xs[2], xs[3], ws[0], ws[2], ws[3], ys[2], ys[3]})
      args.push_back(constant(v));
    for (auto attr : {conv.getStrides(), conv.getDilations()})
      for (int64_t v : attr.getValues<int64_t>())
        args.push_back(constant(v));
    for (Value buffer : {x, w, y}) {
      auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
      args.push_back(meta.getBaseBuffer());
      args.push_back(arith::IndexCastOp::create(b, loc, i64, meta.getOffset()));
      for (Value stride : meta.getStrides())
        args.push_back(arith::IndexCastOp::create(b, loc, i64, stride));
    }
    callKernel(module, b, loc, kernel, args);
    conv->erase();
    ++numCalls;
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
    SmallVector<linalg::TransposeOp> folded;
    // Base, offset and the strides along loops `first` and `second`; an
    // input that a transpose filled is read from the transpose's source.
    auto pass = [&](OpOperand *operand, unsigned first, unsigned second) {
      AffineMap map = op.getMatchingIndexingMap(operand);
      Value buffer = operand->get();
      SmallVector<int64_t> perm{0, 1};
      if (op.isDpsInput(operand))
        if (linalg::TransposeOp t = foldableTranspose(op, buffer)) {
          buffer = t.getInput();
          perm.assign(t.getPermutation().begin(), t.getPermutation().end());
          // Both inputs may read the same copy: remove it once.
          if (!llvm::is_contained(folded, t))
            folded.push_back(t);
        }
      auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
      args.push_back(meta.getBaseBuffer());
      args.push_back(asI64(meta.getOffset()));
      args.push_back(asI64(meta.getStrides()[perm[resultOf(map, first)]]));
      args.push_back(asI64(meta.getStrides()[perm[resultOf(map, second)]]));
    };
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    for (unsigned loop : {m, n, k})
      args.push_back(
          arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(ranges[loop])));
    pass(op.getDpsInputOperand(0), m, k);
    pass(op.getDpsInputOperand(1), k, n);
    pass(op.getDpsInitOperand(0), m, n);
    if (kernel == "qtrain_mk_gemm_bitserial") {
      auto [aBits, bBits] = *codeBits(op);
      for (int32_t w : {aBits, bBits})
        args.push_back(
            arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(w)));
    }

    callKernel(module, b, loc, kernel, args);
    op->erase();
    ++numCalls;
    // A folded transpose's buffer is now only deallocated.
    for (linalg::TransposeOp t : folded) {
      Value buffer = t.getInit();
      t->erase();
      ++numFoldedTransposes;
      if (llvm::all_of(buffer.getUsers(), [](Operation *user) {
            return isa<memref::DeallocOp>(user);
          })) {
        for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
          user->erase();
        buffer.getDefiningOp()->erase();
      }
    }
  }
};

} // namespace
