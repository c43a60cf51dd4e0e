//===- ObjectFile.cpp - Object code for the host ----------------*- C++ -*-===//
//
// LLVM dialect (with OpenMP worksharing loops) -> LLVM IR -> O3 -> object file
// through the host target's TargetMachine.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Target/Bundle/Bundle.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace mlir::qtrain;

LogicalResult mlir::qtrain::checkTargetCpu(StringRef cpu, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return failure();
  if (cpu == "native")
    return success();
  std::unique_ptr<llvm::MCSubtargetInfo> generic(
      target->createMCSubtargetInfo(triple, "", ""));
  if (generic && generic->isCPUStringValid(cpu))
    return success();
  error = ("unknown --target-cpu '" + cpu + "' for " + triple.str() +
           " (try native, x86-64, x86-64-v3, skylake-avx512, znver4)")
              .str();
  return failure();
}

LogicalResult mlir::qtrain::emitObjectFile(ModuleOp module, StringRef cpu,
                                           StringRef path) {
  Location loc = module.getLoc();
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  registerOpenMPDialectTranslation(*module.getContext());

  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return emitError(loc, "qtrain-compile: translation to LLVM IR failed");

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return emitError(loc, "qtrain-compile: no target for ")
           << triple.str() << ": " << error;
  // "native": the host's CPU and every feature it reports (AVX-512, VNNI);
  // a named CPU gets the features LLVM knows it has ("x86-64" is the
  // portable baseline: SSE2 only, runs on any x86-64).
  std::string cpuName =
      cpu == "native" ? llvm::sys::getHostCPUName().str() : cpu.str();
  std::string features;
  if (cpu == "native") {
    llvm::SubtargetFeatures host;
    for (const auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
      host.AddFeature(name, enabled);
    features = host.getString();
  }
  if (std::string why; failed(checkTargetCpu(cpu, why)))
    return emitError(loc, "qtrain-compile: ") << why;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return emitError(loc, "qtrain-compile: cannot create a target machine "
                          "for CPU '")
           << cpuName << "'";

  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);

  auto optimize = makeOptimizingTransformer(3, 0, machine.get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return emitError(loc, "qtrain-compile: LLVM optimization failed: ")
           << llvm::toString(std::move(err));

  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return emitError(loc, "qtrain-compile: cannot write ")
           << path << ": " << ec.message();
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return emitError(loc, "qtrain-compile: the target cannot emit objects");
  codegen.run(*llvmModule);
  return success();
}
