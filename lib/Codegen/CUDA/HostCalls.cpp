//===- HostCalls.cpp - Device memory of the host code as runtime calls ----===//
//
// qtrain-cuda-host-calls: the synchronous gpu.alloc, gpu.dealloc and
// gpu.memcpy of the CUDA step's host code become calls of the runtime's
// CUDA host ABI (runtime/include/qtrain/runtime/CudaHostAbi.h), which
// allocates from its pool of device (or managed) memory, where upstream's
// gpu-to-llvm accepts only asynchronous ones; every memory access of the
// host code itself is preceded by qtrain_cuda_synchronize, so the launches
// need not be waited for one by one. The rest of the host code is left to
// gpu-to-llvm (launches, the kernels' binaries) and the standard
// conversions.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/Passes.h"

#include "qtrain/Analysis/BufferAliasing.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_CUDAHOSTCALLSPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct CudaHostCallsPass
    : mlir::qtrain::impl::CudaHostCallsPassBase<CudaHostCallsPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// Declares (once) and calls `name`; a null `result` is void.
static FailureOr<Value> callRuntime(ConversionPatternRewriter &rewriter,
                                    Operation *op, StringRef name,
                                    ArrayRef<Type> params, Type result,
                                    ValueRange args) {
  auto module = op->getParentOfType<ModuleOp>();
  if (!result)
    result = LLVM::LLVMVoidType::get(op->getContext());
  FailureOr<LLVM::LLVMFuncOp> fn =
      LLVM::lookupOrCreateFn(rewriter, module, name, params, result);
  if (failed(fn))
    return op->emitError("qtrain: ") << name << " is declared with another "
                                     << "signature";
  auto call = LLVM::CallOp::create(rewriter, op->getLoc(), *fn, args);
  return call.getNumResults() ? call.getResult() : Value();
}

/// gpu.alloc [host_shared] -> qtrain_cuda_alloc(bytes, host_shared).
struct AllocToCall : ConvertOpToLLVMPattern<gpu::AllocOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(gpu::AllocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MemRefType type = op.getType();
    if (op.getAsyncToken() || !adaptor.getSymbolOperands().empty() ||
        !isConvertibleAndHasIdentityMaps(type))
      return rewriter.notifyMatchFailure(op, "not a synchronous dense alloc");
    Location loc = op.getLoc();
    SmallVector<Value> sizes, strides;
    Value bytes;
    getMemRefDescriptorSizes(loc, type, adaptor.getDynamicSizes(), rewriter,
                             sizes, strides, bytes);
    Type i32 = rewriter.getI32Type();
    Value shared = LLVM::ConstantOp::create(
        rewriter, loc, i32, rewriter.getI32IntegerAttr(op.getHostShared()));
    FailureOr<Value> pointer =
        callRuntime(rewriter, op, "qtrain_cuda_alloc", {getIndexType(), i32},
                    getPtrType(), {bytes, shared});
    if (failed(pointer))
      return failure();
    Value descriptor = createMemRefDescriptor(loc, type, *pointer, *pointer,
                                              sizes, strides, rewriter);
    rewriter.replaceOp(op, descriptor);
    return success();
  }
};

/// gpu.dealloc -> qtrain_cuda_free(allocated pointer).
struct DeallocToCall : ConvertOpToLLVMPattern<gpu::DeallocOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(gpu::DeallocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getAsyncToken())
      return rewriter.notifyMatchFailure(op, "asynchronous");
    Value pointer = MemRefDescriptor(adaptor.getMemref())
                        .allocatedPtr(rewriter, op.getLoc());
    if (failed(callRuntime(rewriter, op, "qtrain_cuda_free", {getPtrType()},
                           Type(), {pointer})))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// Whether `buffer` is (a view of) the host code's stack, memref.alloca:
/// memory of the host alone.
bool isHostStack(Value buffer) {
  return isa_and_nonnull<memref::AllocaOp>(rootOf(buffer).getDefiningOp());
}

/// gpu.memcpy of dense buffers -> qtrain_cuda_memcpy(dst, src, bytes), or
/// qtrain_cuda_upload(dst, src, bytes) from a memref.alloca.
struct MemcpyToCall : ConvertOpToLLVMPattern<gpu::MemcpyOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(gpu::MemcpyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<MemRefType>(op.getSrc().getType());
    if (op.getAsyncToken() || !type.getLayout().isIdentity() ||
        !cast<MemRefType>(op.getDst().getType()).getLayout().isIdentity())
      return rewriter.notifyMatchFailure(op, "not a synchronous dense copy");
    Location loc = op.getLoc();
    MemRefDescriptor source(adaptor.getSrc()), target(adaptor.getDst());
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.isDynamicDim(i))
        dynamicSizes.push_back(source.size(rewriter, loc, i));
    Value count = getNumElements(loc, type, dynamicSizes, rewriter);
    Value bytes = LLVM::MulOp::create(
        rewriter, loc, count,
        getSizeInBytes(loc, type.getElementType(), rewriter));
    Type element = typeConverter->convertType(type.getElementType());
    auto start = [&](MemRefDescriptor &d) -> Value {
      return LLVM::GEPOp::create(rewriter, loc, getPtrType(), element,
                                 d.alignedPtr(rewriter, loc),
                                 ValueRange{d.offset(rewriter, loc)});
    };
    // A copy from the host code's stack (a record of scalar arguments,
    // qtrain-arguments-to-device) is an upload in stream order; any other
    // copy waits for the launches before it.
    if (failed(callRuntime(rewriter, op,
                           isHostStack(op.getSrc()) ? "qtrain_cuda_upload"
                                                    : "qtrain_cuda_memcpy",
                           {getPtrType(), getPtrType(), getIndexType()}, Type(),
                           {start(target), start(source), bytes})))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void CudaHostCallsPass::runOnOperation() {
  ModuleOp module = getOperation();
  WalkResult forms = module.walk([](Operation *op) {
    auto async = dyn_cast<gpu::AsyncOpInterface>(op);
    if (!async || !isa<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp>(op))
      return WalkResult::advance();
    bool dense = llvm::all_of(op->getOperandTypes(), [](Type type) {
      auto memref = dyn_cast<MemRefType>(type);
      return !memref || memref.getLayout().isIdentity();
    });
    if (async.getAsyncToken() || !async.getAsyncDependencies().empty() ||
        !dense) {
      op->emitError("qtrain-cuda-host-calls: expected a synchronous op on "
                    "dense buffers");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (forms.wasInterrupted())
    return signalPassFailure();

  // The launches run asynchronously on one stream: the host waits for them
  // before it reads or writes memory itself (qtrain_cuda_synchronize waits
  // only when a kernel was launched since the last wait).
  OpBuilder builder(&getContext());
  SmallVector<Operation *> hostAccesses;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<gpu::GPUModuleOp, gpu::LaunchOp>(op))
      return WalkResult::skip();
    if (isa<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp>(op))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (effects && !op->getParentOfType<gpu::LaunchOp>()) {
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      if (llvm::any_of(instances, [](MemoryEffects::EffectInstance &e) {
            return isa<MemoryEffects::Read, MemoryEffects::Write>(
                       e.getEffect()) &&
                   e.getValue() &&
                   isa<BaseMemRefType>(e.getValue().getType()) &&
                   !isHostStack(e.getValue());
          }))
        hostAccesses.push_back(op);
    }
    return WalkResult::advance();
  });
  if (!hostAccesses.empty()) {
    builder.setInsertionPointToStart(module.getBody());
    FailureOr<LLVM::LLVMFuncOp> sync =
        LLVM::lookupOrCreateFn(builder, module, "qtrain_cuda_synchronize", {},
                               LLVM::LLVMVoidType::get(&getContext()));
    if (failed(sync)) {
      module.emitError("qtrain: qtrain_cuda_synchronize is declared with "
                       "another signature");
      return signalPassFailure();
    }
    for (Operation *op : hostAccesses) {
      builder.setInsertionPoint(op);
      LLVM::CallOp::create(builder, op->getLoc(), *sync, ValueRange());
    }
  }
  LLVMTypeConverter converter(&getContext());
  RewritePatternSet patterns(&getContext());
  patterns.add<AllocToCall, DeallocToCall, MemcpyToCall>(converter);
  ConversionTarget target(getContext());
  target.addLegalDialect<LLVM::LLVMDialect>();
  target.addLegalOp<UnrealizedConversionCastOp>();
  target.addIllegalOp<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp>();
  // Only the host code: gpu.module kernels keep theirs (they have none).
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  if (failed(applyPartialConversion(module, target, std::move(patterns))))
    signalPassFailure();
}
