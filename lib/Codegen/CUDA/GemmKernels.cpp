//===- GemmKernels.cpp - GPU GEMM kernels per site and precision ---------===//
//
// qtrain-cuda-gemm-kernels: every product of a kernel site as the dense
// GEMM of the CUDA target, one kernel per kind (GemmKernel.h).
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/Passes.h"

#include "qtrain/Analysis/QuantizedOperand.h"
#include "qtrain/Codegen/CUDA/GemmKernel.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_CUDAGEMMKERNELSPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

/// A product's GEMM: sizes and which operand is the error.
struct ProductGemm {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool aIsError = false, bIsError = false;
};

struct CudaGemmKernelsPass
    : mlir::qtrain::impl::CudaGemmKernelsPassBase<CudaGemmKernelsPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

/// Whether `v` is read through data movement from a quantizer of errors,
/// or from their float rounding (--grad-format=e5m2).
static bool isError(Value v, Block *block) {
  DataMovementOptions options;
  options.copies = true;
  options.block = block;
  QuantizedOperand traced = traceQuantizedOperand(v, options);
  if (traced.quant)
    return traced.quant.getRole() == Role::Error;
  // A rounding may lie outside the kernel: the weight gradient's, shared
  // with the input gradient (qtrain-form-kernels pulls it in only for
  // input-grad-roundings). The kernel reads its e5m2 values either way.
  auto round = traced.source.getDefiningOp<RoundFloatOp>();
  return round && round.getRole() == Role::Error;
}

/// The GEMM of the product of `kernel`: each loop of the contraction is an
/// m, n, k or batch loop by the operands that read it.
static FailureOr<ProductGemm> productGemm(KernelOp kernel) {
  auto op = dyn_cast_or_null<linalg::LinalgOp>(kernel.getProductOp());
  if (!op || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0)
    return kernel.emitError("not supported by qtrain's CUDA target: the "
                            "product is not a contraction of two operands");
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  ProductGemm gemm;
  for (unsigned d = 0; d < ranges.size(); ++d) {
    if (ShapedType::isDynamic(ranges[d]))
      return kernel.emitError("not supported by qtrain's CUDA target: loop ")
             << d << " of the product has no static range";
    bool inA = maps[0].isFunctionOfDim(d), inB = maps[1].isFunctionOfDim(d),
         inC = maps[2].isFunctionOfDim(d);
    int64_t &size = inA && inB && inC ? gemm.batch
                    : inA && inC      ? gemm.m
                    : inB && inC      ? gemm.n
                    : inA && inB      ? gemm.k
                                      : gemm.batch;
    if (!((inA && inB) || (inA && inC) || (inB && inC)))
      return kernel.emitError("not supported by qtrain's CUDA target: loop ")
             << d << " of the product is read by one operand only";
    size *= ranges[d];
  }
  Block *body = &kernel.getBody().front();
  gemm.aIsError = isError(op.getDpsInputOperand(0)->get(), body);
  gemm.bIsError = isError(op.getDpsInputOperand(1)->get(), body);
  return gemm;
}

void CudaGemmKernelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  SmallVector<StringRef> kindList;
  llvm::SplitString(kinds, kindList, ",");
  for (StringRef kind : kindList)
    if (!llvm::is_contained(gemmKernelKinds(), kind)) {
      module.emitError() << "qtrain-cuda-gemm-kernels: unknown kernel kind '"
                         << kind << "' (expected f32, tf32, bf16, fp8 or i8)";
      return signalPassFailure();
    }
  unsigned version = 0;
  if (!StringRef(chip).consume_front("sm_") ||
      StringRef(chip).drop_front(3).rtrim('a').getAsInteger(10, version) ||
      version < 80) {
    module.emitError() << "qtrain-cuda-gemm-kernels: chip '" << chip
                       << "' is not an NVIDIA architecture with the "
                          "tensor-core shapes used here (sm_80 or newer)";
    return signalPassFailure();
  }
  if (version < 89 && llvm::is_contained(kindList, "fp8")) {
    module.emitError() << "qtrain-cuda-gemm-kernels: fp8 kernels need sm_89 "
                          "or newer, not "
                       << chip;
    return signalPassFailure();
  }

  // A step without kernel sites (fp32, the float formats) still gets the
  // module, empty: the bundle's GPU step needs no per-site kernels.
  SmallVector<KernelOp> kernels;
  module.walk([&](KernelOp kernel) { kernels.push_back(kernel); });

  OpBuilder builder(ctx);
  builder.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();
  auto target = NVVM::NVVMTargetAttr::get(
      ctx, /*optLevel=*/2, "nvptx64-nvidia-cuda", chip, features);
  auto gpuModule = gpu::GPUModuleOp::create(builder, loc, kCudaModuleName,
                                            builder.getArrayAttr({target}));
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  builder.getUnitAttr());

  llvm::StringMap<gpu::GPUFuncOp> built;
  llvm::MapVector<std::pair<int64_t, StringRef>, NamedAttrList> sites;
  llvm::StringMap<unsigned> perKind;
  for (KernelOp kernel : kernels) {
    FailureOr<ProductGemm> gemm = productGemm(kernel);
    if (failed(gemm))
      return signalPassFailure();
    NamedAttrList &names = sites[{kernel.getSite(), kernel.getProduct()}];
    for (StringRef kind : kindList) {
      if (kind == "i8" && !i8SumsFitInt32(gemm->k)) {
        kernel.emitWarning()
            << "qtrain-cuda-gemm-kernels: no i8 kernel for " << gemm->k
            << " terms (exact s32 sums hold fewer than "
               "2^17 products of 8-bit codes)";
        continue;
      }
      FailureOr<GemmKernelSpec> spec =
          GemmKernelSpec::get(kind, gemm->batch, gemm->m, gemm->n, gemm->k,
                              gemm->aIsError, gemm->bIsError);
      std::string name = spec->name();
      names.set(kind, builder.getStringAttr(name));
      if (built.count(name))
        continue;
      built[name] = buildGemmKernel(builder, kernel.getLoc(), gpuModule, *spec);
      ++perKind[kind];
    }
  }

  SmallVector<Attribute> siteList;
  for (auto &[key, names] : sites)
    siteList.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("site", builder.getI64IntegerAttr(key.first)),
         builder.getNamedAttr("product", builder.getStringAttr(key.second)),
         builder.getNamedAttr("kernels", names.getDictionary(ctx))}));
  gpuModule->setAttr(kCudaSitesAttrName, builder.getArrayAttr(siteList));
  if (kernels.empty())
    return;
  InFlightDiagnostic remark = mlir::emitRemark(kernels.front().getLoc())
                              << "qtrain-cuda-gemm-kernels: " << built.size()
                              << " GEMM kernels for " << chip << " (";
  for (auto [i, kind] : llvm::enumerate(kindList))
    remark << (i ? ", " : "") << perKind[kind] << " " << kind;
  remark << ") for " << sites.size() << " products";
}
