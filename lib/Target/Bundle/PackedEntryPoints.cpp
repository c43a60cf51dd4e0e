//===- PackedEntryPoints.cpp - What model.so exports for the runtime -----===//
//
// qtrain-packed-entry-points: qtrain_train_step(void **args) and
// qtrain_eval_step(void **args), one uniform signature for every model, so
// the runtime calls a step without knowing its arity; and the ABI digest
// (docs/bundle.md).
//
//===----------------------------------------------------------------------===//

#include "qtrain/Target/Bundle/Bundle.h"
#include "qtrain/Target/Bundle/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::qtrain;

namespace mlir::qtrain {
#define GEN_PASS_DEF_PACKEDENTRYPOINTSPASS
#include "qtrain/Target/Bundle/Passes.h.inc"
} // namespace mlir::qtrain

/// Adds `name(ptr args)` calling `callee` with args[i] as its i-th argument
/// (the pointer itself for pointer arguments, the value it points to
/// otherwise) and storing a scalar result through args[n].
static LogicalResult addEntry(ModuleOp module, StringRef callee,
                              StringRef name) {
  auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(callee);
  if (!fn)
    return module.emitError("qtrain-packed-entry-points: no lowered function @")
           << callee;
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  Location loc = fn.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto voidType = LLVM::LLVMVoidType::get(ctx);
  auto entry = LLVM::LLVMFuncOp::create(
      b, loc, name, LLVM::LLVMFunctionType::get(voidType, {ptr}));
  Block *block = entry.addEntryBlock(b);
  b.setInsertionPointToStart(block);
  Value args = block->getArgument(0);
  LLVM::LLVMFunctionType type = fn.getFunctionType();
  auto slot = [&](int64_t i) {
    Value address =
        LLVM::GEPOp::create(b, loc, ptr, ptr, args, ArrayRef<LLVM::GEPArg>{i});
    return LLVM::LoadOp::create(b, loc, ptr, address).getResult();
  };
  SmallVector<Value> operands;
  for (auto [i, paramType] : llvm::enumerate(type.getParams())) {
    Value pointer = slot(i);
    operands.push_back(
        isa<LLVM::LLVMPointerType>(paramType)
            ? pointer
            : LLVM::LoadOp::create(b, loc, paramType, pointer).getResult());
  }
  auto call = LLVM::CallOp::create(b, loc, fn, operands);
  if (!isa<LLVM::LLVMVoidType>(type.getReturnType()))
    LLVM::StoreOp::create(b, loc, call.getResult(),
                          slot(type.getParams().size()));
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return success();
}

LogicalResult mlir::qtrain::addAbiDigest(ModuleOp module, StringRef description,
                                         StringRef digest) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  for (auto [name, text] :
       {std::pair(StringRef("qtrain_abi_description"), description),
        std::pair(StringRef("qtrain_abi_digest"), digest)}) {
    if (module.lookupSymbol(name))
      return module.emitError("qtrain-compile: the module already defines @")
             << name;
    std::string bytes = text.str();
    bytes.push_back('\0');
    auto type =
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), bytes.size());
    LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                           LLVM::Linkage::External, name,
                           b.getStringAttr(bytes));
  }
  return success();
}

namespace {
struct PackedEntryPointsPass
    : mlir::qtrain::impl::PackedEntryPointsPassBase<PackedEntryPointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(addEntry(module, "train_step", "qtrain_train_step")) ||
        failed(addEntry(module, "eval_step", "qtrain_eval_step")))
      signalPassFailure();
  }
};
} // namespace
