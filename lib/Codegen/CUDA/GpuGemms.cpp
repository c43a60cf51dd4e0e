//===- GpuGemms.cpp - The step's GEMMs on the GPU GEMM kernels ------------===//
//
// qtrain-gpu-gemms: a bufferized linalg contraction that a GEMM kernel of
// GemmKernel.h computes exactly becomes a gather of each operand into the
// kernel's K-contiguous layout, a launch of the kernel for the variant's
// arithmetic, and an epilogue adding its result to the init.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/Passes.h"

#include "qtrain/Analysis/BufferAliasing.h"
#include "qtrain/Analysis/MulAddBody.h"
#include "qtrain/Codegen/CUDA/GemmKernel.h"
#include "qtrain/Conversion/FloatFormatArith.h"

#include "llvm/ADT/bit.h"

#include "QTrain/QTrainDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_GPUGEMMSPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

/// The name of the gpu.module that holds the step's GEMM kernels.
static constexpr llvm::StringLiteral kStepGemmsModuleName = "qtrain_step_gemms";

namespace {

/// A contraction's loops as the kernel's GEMM dimensions, each class in
/// loop order.
struct GemmLoops {
  SmallVector<unsigned> batch, m, n, k;
  SmallVector<int64_t> ranges;

  int64_t size(ArrayRef<unsigned> dims) const {
    int64_t product = 1;
    for (unsigned d : dims)
      product *= ranges[d];
    return product;
  }
};

/// The kernel a product runs on: its kind and, for fp8, how each operand's
/// values become fp8 bytes.
struct GemmChoice {
  StringRef kind;
  std::optional<Fp8Operand> a = std::nullopt, b = std::nullopt;
};

struct GpuGemmsPass : mlir::qtrain::impl::GpuGemmsPassBase<GpuGemmsPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

/// The GEMM of `op`'s loops, if each loop is read by two or three of its
/// operands, is parallel exactly when the init reads it, and has a static
/// range, and the init's map is a projected permutation.
static std::optional<GemmLoops> gemmLoops(linalg::LinalgOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!maps[2].isProjectedPermutation())
    return std::nullopt;
  GemmLoops loops;
  loops.ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < loops.ranges.size(); ++d) {
    if (ShapedType::isDynamic(loops.ranges[d]) || loops.ranges[d] < 1)
      return std::nullopt;
    bool inA = maps[0].isFunctionOfDim(d), inB = maps[1].isFunctionOfDim(d),
         inC = maps[2].isFunctionOfDim(d);
    if (inC != (iterators[d] == utils::IteratorType::parallel))
      return std::nullopt;
    if (inA && inB && inC)
      loops.batch.push_back(d);
    else if (inA && inC)
      loops.m.push_back(d);
    else if (inB && inC)
      loops.n.push_back(d);
    else if (inA && inB)
      loops.k.push_back(d);
    else
      return std::nullopt;
  }
  return loops;
}

/// `map` (over the contraction's loops) over the loops `order` instead:
/// loop order[i] becomes loop i; a loop not in `order` must not occur.
static AffineMap reindex(AffineMap map, ArrayRef<unsigned> order) {
  MLIRContext *ctx = map.getContext();
  SmallVector<AffineExpr> dims(map.getNumDims(), getAffineConstantExpr(0, ctx));
  for (auto [i, d] : llvm::enumerate(order))
    dims[d] = getAffineDimExpr(i, ctx);
  return map.replaceDimsAndSymbols(dims, {}, order.size(), 0);
}

/// The fp8 byte (an i8) of `x`, a value of the format `fp8` maps: x times
/// 2^scaleExponent, rounded to the fp8 grid (exact from fp8.exactFrom up),
/// finite values beyond fp8's largest saturated to it, +-inf as e5m2's inf
/// (e4m3 has none: NaN), NaN as NaN.
static Value encodeFp8(OpBuilder &b, Location loc, Value x,
                       const Fp8Operand &fp8) {
  MLIRContext *ctx = b.getContext();
  auto f32 = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(v)));
  };
  auto i32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  if (fp8.scaleExponent != 0)
    x = arith::MulFOp::create(b, loc, x,
                              f32(std::ldexp(1.0, fp8.scaleExponent)));
  // Saturate finite values beyond fp8's largest (Fp8Scale::Exact).
  float largest = fp8.encoding == GemmEncoding::E4M3 ? 448.0f : 57344.0f;
  Value xBits = arith::BitcastOp::create(b, loc, b.getI32Type(), x);
  Value xMagnitude = arith::AndIOp::create(b, loc, xBits, i32(0x7FFFFFFF));
  Value beyond = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, xMagnitude,
                            i32(llvm::bit_cast<int32_t>(largest))),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, xMagnitude,
                            i32(0x7F800000)));
  Value saturated = arith::OrIOp::create(
      b, loc, arith::AndIOp::create(b, loc, xBits, i32(int32_t(0x80000000u))),
      i32(llvm::bit_cast<int32_t>(largest)));
  x = arith::BitcastOp::create(
      b, loc, b.getF32Type(),
      arith::SelectOp::create(b, loc, beyond, saturated, xBits));
  FloatFormatAttr format = getFp8CodeFormat(ctx, fp8.encoding);
  Value rounded = buildRoundToFormat(b, loc, x, format);
  Value code = buildEncodeFloat(b, loc, rounded, format);
  if (fp8.encoding == GemmEncoding::E5M2) {
    // FP(5, 2, 0) has no inf; e5m2's is the top field, mantissa 0.
    Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), rounded);
    Value magnitude = arith::AndIOp::create(b, loc, bits, i32(0x7FFFFFFF));
    Value isInf = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        magnitude, i32(0x7F800000));
    Value sign = arith::ShRUIOp::create(b, loc, bits, i32(24));
    Value inf = arith::OrIOp::create(
        b, loc, arith::AndIOp::create(b, loc, sign, i32(0x80)), i32(0x7C));
    code = arith::SelectOp::create(b, loc, isInf, inf, code);
  }
  return arith::TruncIOp::create(b, loc, b.getI8Type(), code);
}

/// A dense buffer of `shape` gathered from `source` through `map` (over
/// loops of that shape), each element in `encoding` (fp8: as `fp8` says),
/// collapsed to 1-D.
static Value gather(OpBuilder &b, Location loc, Value source, AffineMap map,
                    ArrayRef<int64_t> shape, GemmEncoding encoding,
                    const std::optional<Fp8Operand> &fp8,
                    SmallVectorImpl<Value> &buffers) {
  MLIRContext *ctx = b.getContext();
  Type element = getGemmStorageType(ctx, encoding);
  auto type = MemRefType::get(shape, element);
  unsigned rank = shape.size();
  SmallVector<ReassociationIndices> all(1);
  for (unsigned i = 0; i < rank; ++i)
    all[0].push_back(i);
  // A dense buffer already in the kernel's layout and encoding is read as
  // it is.
  auto sourceType = cast<MemRefType>(source.getType());
  if (map.isIdentity() && sourceType == type)
    return rank == 1 ? source
                     : memref::CollapseShapeOp::create(b, loc, source, all)
                           .getResult();
  Value packed = memref::AllocOp::create(b, loc, type);
  buffers.push_back(packed);
  linalg::GenericOp::create(
      b, loc, ValueRange{source}, ValueRange{packed},
      ArrayRef<AffineMap>{map, AffineMap::getMultiDimIdentityMap(rank, ctx)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value v = args[0];
        if (encoding == GemmEncoding::BF16) {
          // Round to nearest even: exact where the operand holds bf16
          // values (qtrain.bf16_operands, bf16-exact float formats), a
          // rounding of f32 values under f32-kind=bf16.
          v = arith::TruncFOp::create(nb, nloc, nb.getBF16Type(), v);
          v = arith::BitcastOp::create(nb, nloc, nb.getI16Type(), v);
        } else if (fp8) {
          v = encodeFp8(nb, nloc, v, *fp8);
        }
        linalg::YieldOp::create(nb, nloc, v);
      });
  if (rank == 1)
    return packed;
  return memref::CollapseShapeOp::create(b, loc, packed, all);
}

/// The kernel for `op`, or failure if none computes its body. Products of
/// float formats (qtrain.float_operands) run on `floatKind`: fp8 where
/// both formats have an fp8 form, else bf16 where both are bf16 values
/// (bf16 also when floatKind says so); bf16 values (qtrain.bf16_operands)
/// on bf16; other f32 products on `f32Kind`; 8-bit codes on i8.
static FailureOr<GemmChoice> kernelChoice(linalg::LinalgOp op,
                                          StringRef f32Kind,
                                          StringRef floatKind, Fp8Scale scale,
                                          int64_t k) {
  std::optional<MulAddBody> body = getMulAddBody(op);
  if (!body)
    return failure();
  auto *dialect = op->getContext()->getLoadedDialect<QTrainDialect>();
  if (body->isFloat) {
    ArrayAttr formats = dialect->getFloatOperandsAttrHelper().getAttr(op);
    if (formats && floatKind != "f32") {
      auto a = dyn_cast<FloatFormatAttr>(formats[0]),
           b = dyn_cast<FloatFormatAttr>(formats[1]);
      GemmChoice fp8{"fp8", getFp8Operand(a, scale), getFp8Operand(b, scale)};
      if (floatKind == "fp8" && fp8.a && fp8.b)
        return fp8;
      if (isBf16Exact(a) && isBf16Exact(b))
        return GemmChoice{"bf16"};
    }
    if (dialect->getBf16OperandsAttrHelper().isAttrPresent(op))
      return GemmChoice{"bf16"};
    return GemmChoice{f32Kind};
  }
  if (body->width != 8 || !i8SumsFitInt32(k))
    return failure();
  return GemmChoice{"i8"};
}

/// The module's gpu.module of GEMM kernels, created on first use.
static gpu::GPUModuleOp stepGemmsModule(ModuleOp module) {
  if (auto existing =
          module.lookupSymbol<gpu::GPUModuleOp>(kStepGemmsModuleName))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  return gpu::GPUModuleOp::create(b, module.getLoc(), kStepGemmsModuleName);
}

/// A call of the runtime's qtrain_cuda_gemm for the product of `spec` over
/// `buffers` (A, B, C), declared on first use; its i32 result.
static Value offerToLibrary(OpBuilder &b, Location loc, ModuleOp module,
                            const GemmKernelSpec &spec, ValueRange buffers) {
  SmallVector<Value> args;
  for (Value buffer : buffers)
    args.push_back(
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer));
  auto i32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  auto i64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  };
  int64_t kind =
      llvm::find(gemmKernelKinds(), spec.kind) - gemmKernelKinds().begin();
  args.append({i32(kind), i32(int64_t(spec.a)), i32(int64_t(spec.b)),
               i64(spec.batch), i64(spec.m), i64(spec.n), i64(spec.k)});
  auto callee = module.lookupSymbol<func::FuncOp>(kLibraryGemmFunction);
  if (!callee) {
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    callee = func::FuncOp::create(
        top, loc, kLibraryGemmFunction,
        b.getFunctionType(ValueRange(args).getTypes(), {b.getI32Type()}));
    callee.setPrivate();
  }
  return func::CallOp::create(b, loc, callee, args).getResult(0);
}

/// The linalg.fill that writes all of `op`'s init before it, when nothing
/// between them may read or write that memory: the epilogue can then write
/// the fill's value plus the product (the same sum, in the same order), and
/// the fill, a launch over the whole result, goes.
static linalg::FillOp fillOfInit(linalg::LinalgOp op) {
  Value init = op.getDpsInitOperand(0)->get();
  Value root = rootOf(init);
  // The product must not read the filled values itself.
  for (OpOperand *input : op.getDpsInputOperands())
    if (mayAlias(rootOf(input->get()), root))
      return {};
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev))
      if (fill.hasPureBufferSemantics() && fill.getOutputs()[0] == init)
        return fill;
    // Allocations, views and pure ops touch no memory; a linalg op only its
    // operands'; anything else might touch any.
    if (!isPure(prev) && !isa<memref::AllocOp, memref::DeallocOp,
                              linalg::LinalgOp, ViewLikeOpInterface>(prev))
      return {};
    for (Value operand : prev->getOperands())
      if (isa<MemRefType>(operand.getType()) && mayAlias(rootOf(operand), root))
        return {};
  }
  return {};
}

/// Replaces `op` by gathers, the kernel of `spec` (offered to the runtime's
/// GEMM library first with `libraryCalls`) and the epilogue.
static void rewriteGemm(IRRewriter &rewriter, linalg::LinalgOp op,
                        const GemmLoops &loops, const GemmChoice &choice,
                        const GemmKernelSpec &spec, gpu::GPUModuleOp kernels,
                        bool libraryCalls) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  // Before the gathers and the launch go in between.
  linalg::FillOp fill = fillOfInit(op);
  gpu::GPUFuncOp kernel = buildGemmKernel(rewriter, loc, kernels, spec);
  rewriter.setInsertionPoint(op);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<Value> buffers;
  auto operand = [&](unsigned i, ArrayRef<unsigned> rows, GemmEncoding encoding,
                     const std::optional<Fp8Operand> &fp8) {
    SmallVector<unsigned> order(loops.batch);
    order.append(rows.begin(), rows.end());
    order.append(loops.k.begin(), loops.k.end());
    SmallVector<int64_t> shape;
    for (unsigned d : order)
      shape.push_back(loops.ranges[d]);
    return gather(rewriter, loc, op.getDpsInputOperand(i)->get(),
                  reindex(maps[i], order), shape, encoding, fp8, buffers);
  };
  Value a = operand(0, loops.m, spec.a, choice.a);
  Value b = operand(1, loops.n, spec.b, choice.b);

  Type cType = getGemmStorageType(ctx, spec.c);
  Value c = memref::AllocOp::create(
      rewriter, loc, MemRefType::get({spec.batch * spec.m * spec.n}, cType));
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  auto grid = spec.grid(), block = spec.block();
  if (libraryCalls) {
    // Offered to the runtime's GEMM library first; the kernel runs when it
    // declines.
    Value ran = offerToLibrary(rewriter, loc, op->getParentOfType<ModuleOp>(),
                               spec, {a, b, c});
    Value declined = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, ran,
        arith::ConstantIntOp::create(rewriter, loc, rewriter.getI32Type(), 0));
    auto ifOp = scf::IfOp::create(rewriter, loc, declined,
                                  /*withElseRegion=*/false);
    rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
  }
  gpu::LaunchFuncOp::create(
      rewriter, loc, kernel,
      gpu::KernelDim3{constant(grid[0]), constant(grid[1]), constant(grid[2])},
      gpu::KernelDim3{constant(block[0]), constant(block[1]),
                      constant(block[2])},
      /*dynamicSharedMemorySize=*/Value(), ValueRange{a, b, c});
  rewriter.setInsertionPoint(op);

  // init += C, over the loops batch, m, n; fp8 products are scaled back by
  // the operands' powers of two (exact).
  int scaleExponent = (choice.a ? choice.a->scaleExponent : 0) +
                      (choice.b ? choice.b->scaleExponent : 0);
  SmallVector<unsigned> order(loops.batch);
  order.append(loops.m.begin(), loops.m.end());
  order.append(loops.n.begin(), loops.n.end());
  SmallVector<int64_t> shape;
  for (unsigned d : order)
    shape.push_back(loops.ranges[d]);
  Value result = c;
  if (shape.size() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (unsigned i = 0; i < shape.size(); ++i)
      all[0].push_back(i);
    result = memref::ExpandShapeOp::create(
        rewriter, loc, MemRefType::get(shape, cType), c, all);
  }
  Value init = op.getDpsInitOperand(0)->get();
  bool isFloat = isa<FloatType>(getElementTypeOrSelf(init.getType()));
  Value filled = fill ? fill.getInputs()[0] : Value();
  linalg::GenericOp::create(
      rewriter, loc, ValueRange{result}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(shape.size(), ctx),
                          reindex(maps[2], order)},
      SmallVector<utils::IteratorType>(shape.size(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value product = args[0];
        if (scaleExponent != 0)
          product = arith::MulFOp::create(
              nb, nloc, product,
              arith::ConstantOp::create(
                  nb, nloc,
                  nb.getF32FloatAttr(float(std::ldexp(1.0, -scaleExponent)))));
        Value before = filled ? filled : args[1];
        Value sum =
            isFloat
                ? arith::AddFOp::create(nb, nloc, before, product).getResult()
                : arith::AddIOp::create(nb, nloc, before, product).getResult();
        linalg::YieldOp::create(nb, nloc, sum);
      });
  if (fill)
    rewriter.eraseOp(fill);
  buffers.push_back(c);
  for (Value buffer : buffers)
    memref::DeallocOp::create(rewriter, loc, buffer);
  rewriter.eraseOp(op);
}

void GpuGemmsPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (f32Kind != "f32" && f32Kind != "tf32" && f32Kind != "bf16") {
    module.emitError(
        "qtrain-gpu-gemms: f32-kind must be f32, tf32 or bf16, got '")
        << f32Kind << "'";
    return signalPassFailure();
  }
  if (floatKind != "fp8" && floatKind != "bf16" && floatKind != "f32") {
    module.emitError("qtrain-gpu-gemms: float-kind must be fp8, bf16 or f32, "
                     "got '")
        << floatKind << "'";
    return signalPassFailure();
  }
  if (fp8Scale != "fit" && fp8Scale != "exact") {
    module.emitError("qtrain-gpu-gemms: fp8-scale must be fit or exact, got '")
        << fp8Scale << "'";
    return signalPassFailure();
  }
  if (minFlops < 0 || maxGatherMiB < 1) {
    module.emitError("qtrain-gpu-gemms: min-flops must be at least 0 and "
                     "max-gather-mib at least 1");
    return signalPassFailure();
  }
  SmallVector<linalg::LinalgOp> ops;
  for (auto fn : module.getOps<func::FuncOp>())
    fn.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumDpsInputs() == 2 &&
          op.getNumDpsInits() == 1 && op.getNumReductionLoops() > 0)
        ops.push_back(op);
    });
  IRRewriter rewriter(&getContext());
  gpu::GPUModuleOp kernels;
  for (linalg::LinalgOp op : ops) {
    std::optional<GemmLoops> loops = gemmLoops(op);
    if (!loops)
      continue;
    int64_t batch = loops->size(loops->batch), m = loops->size(loops->m),
            n = loops->size(loops->n), k = loops->size(loops->k);
    if (batch * m * n * k < minFlops)
      continue;
    FailureOr<GemmChoice> choice =
        kernelChoice(op, f32Kind, floatKind,
                     fp8Scale == "exact" ? Fp8Scale::Exact : Fp8Scale::Fit, k);
    if (failed(choice))
      continue;
    StringRef kind = choice->kind;
    FailureOr<GemmKernelSpec> spec = GemmKernelSpec::get(
        kind, batch, m, n, k,
        choice->a && choice->a->encoding == GemmEncoding::E5M2,
        choice->b && choice->b->encoding == GemmEncoding::E5M2);
    if (failed(spec))
      continue;
    int64_t elementBytes = kind == "f32" || kind == "tf32" ? 4
                           : kind == "bf16"                ? 2
                                                           : 1;
    int64_t largest = batch * std::max(m, n) * k * elementBytes;
    if (largest > (maxGatherMiB << 20))
      continue;
    if (!kernels)
      kernels = stepGemmsModule(module);
    rewriteGemm(rewriter, op, *loops, *choice, *spec, kernels, libraryCalls);
  }
}
