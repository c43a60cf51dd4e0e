//===- CudaTarget.cpp - The CUDA target of a bundle -----------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Target/CUDA/CudaTarget.h"

#include "qtrain/Codegen/CUDA/Passes.h"
#include "qtrain/Pipelines/Pipelines.h"
#include "qtrain/runtime/Sha256.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::qtrain;
namespace rt = ::qtrain::rt;

/// The manifest's description of a kernel from its qtrain.gemm attribute.
static FailureOr<rt::CudaKernelSpec> kernelSpec(gpu::GPUFuncOp func) {
  auto gemm = func->getAttrOfType<DictionaryAttr>(kGemmAttrName);
  if (!gemm)
    return func.emitError("qtrain: GPU kernel without ")
           << kGemmAttrName << " (not made by qtrain-cuda-gemm-kernels)";
  rt::CudaKernelSpec spec;
  spec.name = func.getName().str();
  auto text = [&](StringRef key) {
    auto value = gemm.getAs<StringAttr>(key);
    return value ? value.str() : std::string();
  };
  auto integer = [&](StringRef key) {
    auto value = gemm.getAs<IntegerAttr>(key);
    return value ? value.getInt() : int64_t(0);
  };
  auto dims = [&](StringRef key) {
    std::vector<int64_t> out;
    if (auto list = gemm.getAs<ArrayAttr>(key))
      for (Attribute d : list)
        out.push_back(cast<IntegerAttr>(d).getInt());
    return out;
  };
  spec.kind = text("kind");
  spec.a = text("a");
  spec.b = text("b");
  spec.c = text("c");
  spec.batch = integer("batch");
  spec.m = integer("m");
  spec.n = integer("n");
  spec.k = integer("k");
  spec.grid = dims("grid");
  spec.block = dims("block");
  return spec;
}

/// Runs ptxas on `ptx` for `chip`; its messages go into the error.
static FailureOr<std::string> assemble(Location loc, StringRef ptx,
                                       StringRef chip,
                                       const CudaTargetOptions &options) {
  llvm::SmallString<256> ptxas(options.cudaPath);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  if (!llvm::sys::fs::can_execute(ptxas))
    return emitError(loc) << "qtrain-compile: " << ptxas
                          << " not found: a cubin needs the CUDA toolkit's "
                             "ptxas (--cuda-path=DIR), or compile with "
                             "--cuda-format=ptx for the driver to JIT-compile";
  llvm::SmallString<128> input, output, messages;
  if (llvm::sys::fs::createTemporaryFile("qtrain-cuda", "ptx", input) ||
      llvm::sys::fs::createTemporaryFile("qtrain-cuda", "cubin", output) ||
      llvm::sys::fs::createTemporaryFile("qtrain-cuda", "log", messages))
    return emitError(loc) << "qtrain-compile: cannot create temporary files "
                             "for ptxas";
  llvm::FileRemover removeInput(input), removeOutput(output),
      removeMessages(messages);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(input, ec);
    if (ec)
      return emitError(loc)
             << "qtrain-compile: " << input << ": " << ec.message();
    os << ptx;
  }
  std::string arch = ("-arch=" + chip).str();
  SmallVector<StringRef> args = {ptxas, arch};
  SmallVector<StringRef> extra;
  StringRef(options.ptxasOptions).split(extra, ' ', -1, false);
  args.append(extra.begin(), extra.end());
  args.append({"-o", output, input});
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(messages),
                                          StringRef(messages)};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                         /*SecondsToWait=*/0,
                                         /*MemoryLimit=*/0, &error);
  if (status != 0) {
    std::string log;
    if (auto buffer = llvm::MemoryBuffer::getFile(messages))
      log = (*buffer)->getBuffer().trim().str();
    return emitError(loc) << "qtrain-compile: ptxas -arch=" << chip
                          << " failed ("
                          << (error.empty() ? "status " + std::to_string(status)
                                            : error)
                          << "): " << log;
  }
  auto cubin = llvm::MemoryBuffer::getFile(output, /*IsText=*/false);
  if (!cubin)
    return emitError(loc) << "qtrain-compile: cannot read ptxas's output: "
                          << cubin.getError().message();
  return (*cubin)->getBuffer().str();
}

FailureOr<CudaTarget>
mlir::qtrain::buildCudaTarget(ModuleOp step, size_t numSites,
                              const CudaTargetOptions &options) {
  auto gpuModule = step.lookupSymbol<gpu::GPUModuleOp>(kCudaModuleName);
  if (!gpuModule)
    return step.emitError("qtrain-compile: the step has no gpu.module @")
           << kCudaModuleName
           << " (qtrain-cuda-gemm-kernels found no kernel sites)";
  auto target = dyn_cast_or_null<NVVM::NVVMTargetAttr>(
      gpuModule.getTargetsAttr() && !gpuModule.getTargetsAttr().empty()
          ? gpuModule.getTargetsAttr()[0]
          : Attribute());
  if (!target)
    return gpuModule.emitError("qtrain-compile: no #nvvm.target");

  CudaTarget out;
  out.spec.chip = target.getChip().str();
  out.spec.format = options.format;
  out.spec.module = "cuda/" + out.spec.chip + "." + options.format;
  for (auto func : gpuModule.getOps<gpu::GPUFuncOp>()) {
    FailureOr<rt::CudaKernelSpec> spec = kernelSpec(func);
    if (failed(spec))
      return failure();
    out.spec.kernels.push_back(std::move(*spec));
  }
  out.sites.resize(numSites);
  if (auto sites = gpuModule->getAttrOfType<ArrayAttr>(kCudaSitesAttrName)) {
    for (Attribute entry : sites) {
      auto dict = cast<DictionaryAttr>(entry);
      int64_t site = dict.getAs<IntegerAttr>("site").getInt();
      if (site < 0 || site >= int64_t(numSites))
        return gpuModule.emitError("qtrain-compile: GPU kernels for site ")
               << site << ", but the step has " << numSites << " sites";
      auto &kinds = out.sites[site][dict.getAs<StringAttr>("product").str()];
      for (NamedAttribute kernel : dict.getAs<DictionaryAttr>("kernels"))
        kinds[kernel.getName().str()] =
            cast<StringAttr>(kernel.getValue()).str();
    }
  }

  // The kernels leave the step: the CPU lowering never sees GPU code.
  OwningOpRef<ModuleOp> cuda = ModuleOp::create(step.getLoc());
  gpuModule->remove();
  cuda->getBody()->push_back(gpuModule);
  (*cuda)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                   UnitAttr::get(step.getContext()));
  step->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());

  PassManager pm(step.getContext());
  buildCUDALoweringPipeline(pm);
  if (failed(pm.run(*cuda)))
    return failure();
  auto binary = cuda->lookupSymbol<gpu::BinaryOp>(kCudaModuleName);
  auto objects = binary ? binary.getObjects() : ArrayAttr();
  if (!objects || objects.empty())
    return cuda->emitError("qtrain-compile: gpu-module-to-binary gave no "
                           "object");
  out.ptx = cast<gpu::ObjectAttr>(objects[0]).getObject().str();
  if (options.format == "ptx") {
    out.module = out.ptx;
  } else {
    FailureOr<std::string> cubin =
        assemble(step.getLoc(), out.ptx, out.spec.chip, options);
    if (failed(cubin))
      return failure();
    out.module = std::move(*cubin);
  }
  out.spec.moduleSha256 = rt::sha256Hex(out.module.data(), out.module.size());
  return out;
}
