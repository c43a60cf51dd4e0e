//===- qtrain-compile.cpp - Forward graph to training bundle ----*- C++ -*-===//
//
// One command from a forward graph to a bundle (docs/bundle.md): quantizers,
// training step, kernel variants per precision, CPU lowering, object code,
// shared object and manifest.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Bundle/Bundle.h"
#include "qtrain/InitAll.h"
#include "qtrain/Pipelines/Pipelines.h"
#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/Cost.h"
#include "qtrain/runtime/Schedule.h"
#include "qtrain/runtime/Sha256.h"

#include "QTrain/QTrainAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <map>

using namespace mlir;
namespace cl = llvm::cl;
namespace rt = ::qtrain::rt;

static cl::OptionCategory compileCategory("qtrain-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<forward graph .mlir>"),
                                      cl::cat(compileCategory));
static cl::opt<std::string> outputDir("o", cl::Required,
                                      cl::desc("Bundle directory to write"),
                                      cl::value_desc("model.qtb"),
                                      cl::cat(compileCategory));
static cl::opt<std::string> policy("policy", cl::init("cpt"),
                                   cl::desc("cpt, static, ldp or none"),
                                   cl::cat(compileCategory));
static cl::opt<std::string>
    schedule("schedule", cl::init(""),
             cl::desc("Default schedule (docs/schedules.md); default "
                      "cpt:MIN:MAX over --bits for policy=cpt"),
             cl::cat(compileCategory));
static cl::opt<double>
    ldpLambda("ldp-lambda", cl::init(1.0),
              cl::desc("policy=ldp: default weight of the cost term "
                       "(qtrain-run --ldp-lambda overrides it)"),
              cl::cat(compileCategory));
static cl::opt<double>
    ldpInit("ldp-init", cl::init(0.0),
            cl::desc("policy=ldp: initial value of every learnable "
                     "precision p (0: the minimum bits)"),
            cl::cat(compileCategory));
static cl::opt<double> maxTensorGiB(
    "max-tensor-gib", cl::init(8.0),
    cl::desc("Refuse a step with a tensor larger than this (GiB): the "
             "compiled step would fail to allocate it"),
    cl::cat(compileCategory));
static cl::opt<std::string> bits("bits", cl::init("3:8"),
                                 cl::desc("Forward precisions: MIN:MAX or a "
                                          "list B,B,..."),
                                 cl::cat(compileCategory));
static cl::opt<std::string> gradBits("grad-bits", cl::init("8"),
                                     cl::desc("Backward precisions"),
                                     cl::cat(compileCategory));
static cl::opt<bool> fp32("fp32", cl::init(true),
                          cl::desc("Also compile the fp32 variants"),
                          cl::cat(compileCategory));
static cl::opt<bool> liftParams("lift-params", cl::init(false),
                                cl::desc("Lift exported weight constants"),
                                cl::cat(compileCategory));
static cl::opt<int64_t> batch("batch", cl::init(0),
                              cl::desc("Re-batch the graph to this batch"),
                              cl::cat(compileCategory));
static cl::opt<std::string> loss("loss", cl::init("cross-entropy"),
                                 cl::desc("cross-entropy"),
                                 cl::cat(compileCategory));
static cl::opt<std::string>
    targetCpu("target-cpu", cl::init("native"),
              cl::desc("CPU to compile for: native, or e.g. x86-64 for a "
                       "portable bundle"),
              cl::cat(compileCategory));
static cl::opt<unsigned> maxVariants("max-variants", cl::init(1000),
                                     cl::desc("Variant budget"),
                                     cl::cat(compileCategory));
// Mixed-precision float formats under a memory budget (PAPERS.md section 4,
// qtrain-assign-precision).
static cl::opt<std::string> precisionRatio(
    "precision-ratio", cl::init(""),
    cl::desc("Store this fraction r in [0, 1] of the step's tensors in low "
             "float formats (PAPERS.md section 4)"),
    cl::cat(compileCategory));
static cl::opt<std::string> precisionBudget(
    "precision-budget", cl::init(""),
    cl::desc("Memory budget of the step's tensors (bytes, or with KiB/MiB/"
             "GiB): the smallest r that fits"),
    cl::cat(compileCategory));
static cl::opt<std::string>
    precisionOrder("precision-order", cl::init("largest"),
                   cl::desc("Group order: largest (the paper), smallest, "
                            "random, scored, profiled (ours)"),
                   cl::cat(compileCategory));
static cl::opt<uint64_t> precisionSeed("precision-seed", cl::init(0),
                                       cl::desc("Seed of the random order"),
                                       cl::cat(compileCategory));
static cl::opt<std::string>
    precisionScores("precision-scores", cl::init(""),
                    cl::desc("Scored order: one score per group, comma-"
                             "separated"),
                    cl::cat(compileCategory));
static cl::opt<bool> precisionPromotion(
    "precision-promotion", cl::init(true),
    cl::desc("Compile the high-format variant of every low P/Y rounding so "
             "that the runtime can promote it (saved activations then take "
             "2 bytes, the high format's width, instead of 1)"),
    cl::cat(compileCategory));
static cl::opt<std::string> precisionProfile(
    "precision-profile", cl::init(""),
    cl::desc("--precision-order=profiled: the overflow profile written by "
             "qtrain-run --overflow-profile"),
    cl::cat(compileCategory));
static cl::opt<std::string>
    precisionReport("precision-report", cl::init(""),
                    cl::desc("Write the precision assignment as JSON here"),
                    cl::cat(compileCategory));

static cl::opt<std::string> dumpBuffers(
    "dump-buffers", cl::init(""),
    cl::desc("Write the training step as buffers (after bufferization and "
             "qtrain-free-early) to this file, for scripts/step-buffers.py"),
    cl::cat(compileCategory));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "qtrain-compile: error: " << message << "\n";
  return 1;
}

/// Refuses a step with a static tensor above --max-tensor-gib (or one whose
/// size overflows), naming it: the compiled step would not be able to
/// allocate it, and it is better said now than as a failed allocation
/// mid-run.
static LogicalResult checkTensorSizes(ModuleOp module) {
  double limit = maxTensorGiB * double(int64_t(1) << 30);
  WalkResult walk = module.walk([&](Operation *op) {
    for (Value v : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || !type.hasStaticShape())
        continue;
      Type element = type.getElementType();
      double bytes = element.isIntOrFloat()
                         ? double(element.getIntOrFloatBitWidth()) / 8.0
                         : 8.0;
      for (int64_t d : type.getShape())
        bytes *= double(d);
      if (bytes > limit) {
        op->emitError() << "qtrain-compile: this " << type << " takes "
                        << llvm::formatv("{0:F1}", bytes / double(1 << 30))
                        << " GiB, more than --max-tensor-gib="
                        << llvm::formatv("{0}", maxTensorGiB.getValue());
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  std::string commandLine;
  for (int i = 1; i < argc; ++i)
    commandLine += std::string(i > 1 ? " " : "") + argv[i];
  // --help lists qtrain-compile's options, not every LLVM backend's.
  cl::HideUnrelatedOptions(compileCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "qtrain-compile: forward graph to bundle\n");
  auto start = std::chrono::steady_clock::now();

  // Precisions and schedules, checked before any work.
  bool floatFormats = !precisionRatio.empty() || !precisionBudget.empty();
  if (floatFormats) {
    if (policy.getNumOccurrences() && policy != "none")
      return fail("--precision-ratio/--precision-budget assign float formats "
                  "(PAPERS.md section 4) to an fp32 step; they do not combine "
                  "with --policy=" +
                  policy);
    policy.setValue("none");
  }
  std::vector<int> bitList, gradList;
  if (std::string why; failed(mlir::qtrain::checkTargetCpu(targetCpu, why)))
    return fail(why);
  // "out.qtb/" names the same bundle as "out.qtb".
  std::string trimmed = outputDir;
  while (trimmed.size() > 1 && trimmed.back() == '/')
    trimmed.pop_back();
  outputDir.setValue(trimmed);
  if (llvm::sys::fs::exists(outputDir)) {
    llvm::SmallString<256> manifest(outputDir);
    llvm::sys::path::append(manifest, "manifest.json");
    std::error_code ec;
    bool empty = llvm::sys::fs::directory_iterator(outputDir, ec) ==
                 llvm::sys::fs::directory_iterator();
    if (!llvm::sys::fs::is_directory(outputDir) ||
        (!ec && !empty && !llvm::sys::fs::exists(manifest)))
      return fail("-o " + outputDir +
                  " exists and is not a bundle; refusing to replace it");
  }
  if (rt::Status s = rt::parseBitList(bits, bitList); s.failed())
    return fail("--bits: " + s.message());
  if (rt::Status s = rt::parseBitList(gradBits, gradList); s.failed())
    return fail("--grad-bits: " + s.message());
  int lo = *std::min_element(bitList.begin(), bitList.end());
  int hi = *std::max_element(bitList.begin(), bitList.end());
  std::string scheduleText =
      !schedule.empty() ? schedule.getValue()
      : policy == "cpt" ? "cpt:" + std::to_string(lo) + ":" + std::to_string(hi)
      : policy == "ldp" ? "ldp:" + std::to_string(lo) + ":" + std::to_string(hi)
      : policy == "static" ? "static:" + std::to_string(hi)
                           : std::string("fp32");
  rt::Schedule parsed;
  if (rt::Status s = rt::parseSchedule(scheduleText, parsed); s.failed())
    return fail(s.message());
  // LDP picks any bitwidth in [min, max] per layer: every one needs a
  // variant, or no run of the bundle could be served.
  if (policy == "ldp" && parsed.kind == rt::ScheduleKind::Learned)
    for (int b = parsed.minBits; b <= parsed.maxBits; ++b)
      if (std::find(bitList.begin(), bitList.end(), b) == bitList.end())
        return fail("--policy=ldp learns bits in [" +
                    std::to_string(parsed.minBits) + ", " +
                    std::to_string(parsed.maxBits) + "], but --bits=" + bits +
                    " has no " + std::to_string(b) +
                    "-bit variant; give every bitwidth of the range");
  int firstGradBits = gradList.front();

  DialectRegistry registry;
  mlir::qtrain::registerAllDialects(registry);
  mlir::qtrain::registerAllPasses();
  MLIRContext context(registry);
  // Errors name the op; printing a whole module with them helps nobody.
  context.printOpOnDiagnostic(false);
  context.loadAllAvailableDialects();

  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  // MLIR 22's own parsers crash on some malformed IR (fuzz/ir/upstream):
  // report that as an error on the input, not as a crash of the compiler.
  OwningOpRef<ModuleOp> module;
  llvm::CrashRecoveryContext::Enable();
  llvm::CrashRecoveryContext recovery;
  if (!recovery.RunSafely(
          [&] { module = parseSourceFile<ModuleOp>(sourceMgr, &context); })) {
    // Whatever the parser left, the context included, is not to be
    // trusted: report and leave without running destructors.
    fail(inputFile + ": MLIR's parser crashed on this input, which is "
                     "malformed (a known bug of MLIR 22 itself: "
                     "fuzz/ir/upstream/README.md)");
    llvm::errs().flush();
    std::_Exit(1);
  }
  llvm::CrashRecoveryContext::Disable();
  if (!module)
    return 1;

  // Front end: quantizers, training step, variants.
  std::string pipeline;
  if (liftParams)
    pipeline += "qtrain-lift-params,";
  if (batch > 0)
    pipeline += "qtrain-rebatch{batch=" + std::to_string(batch) + "},";
  if (floatFormats) {
    // Option values go into a pipeline string: no spaces, braces or quotes.
    for (const std::string &value :
         {precisionRatio.getValue(), precisionBudget.getValue(),
          precisionOrder.getValue(), precisionScores.getValue(),
          precisionReport.getValue(), precisionProfile.getValue()})
      if (value.find_first_of(" {}'\"") != std::string::npos)
        return fail("precision option value '" + value +
                    "' may not contain spaces, braces or quotes");
    pipeline += "qtrain-assign-precision{order=" + precisionOrder +
                " seed=" + std::to_string(precisionSeed);
    if (!precisionRatio.empty())
      pipeline += " ratio=" + precisionRatio;
    if (!precisionBudget.empty())
      pipeline += " budget=" + precisionBudget;
    if (!precisionScores.empty())
      pipeline += " scores=" + precisionScores;
    if (!precisionReport.empty())
      pipeline += " report=" + precisionReport;
    if (!precisionProfile.empty())
      pipeline += " profile=" + precisionProfile;
    pipeline += "},";
  }
  pipeline += "qtrain-insert-quant{policy=" + policy +
              " schedule=" + scheduleText +
              " grad-bits=" + std::to_string(firstGradBits);
  if (policy == "ldp")
    pipeline += llvm::formatv(" lambda={0:e9} ldp-init={1:e9}",
                              ldpLambda.getValue(), ldpInit.getValue())
                    .str();
  pipeline += "},";
  if (floatFormats)
    pipeline += std::string("qtrain-insert-rounding{promotion=") +
                (precisionPromotion ? "true" : "false") + "},";
  pipeline += "qtrain-autodiff{loss=" + loss + "}";
  if (floatFormats)
    pipeline += ",qtrain-store-saved";
  if (policy != "none")
    pipeline +=
        ",qtrain-form-kernels,qtrain-materialize-variants{bits=" + bits +
        " grad-bits=" + gradBits + " fp32=" + (fp32 ? "true" : "false") +
        " max-variants=" + std::to_string(maxVariants) +
        "},qtrain-integer-kernels";
  PassManager frontend(&context);
  if (failed(parsePassPipeline(pipeline, frontend, llvm::errs())))
    return fail("bad pipeline: " + pipeline);
  // Remarks of the passes are for qtrain-opt; keep the summary short.
  context.getDiagEngine().registerHandler([](Diagnostic &d) {
    return success(d.getSeverity() == DiagnosticSeverity::Remark);
  });
  if (failed(frontend.run(*module)))
    return 1;
  if (policy == "none" && failed(mlir::qtrain::addEmptySlots(*module)))
    return 1;
  if (failed(checkTensorSizes(*module)))
    return 1;

  FailureOr<mlir::qtrain::StepInfo> info =
      mlir::qtrain::collectStepInfo(*module);
  if (failed(info))
    return 1;
  int64_t numVariants = 0;
  std::map<std::string, int64_t> kernelKinds;
  module->walk([&](func::FuncOp fn) {
    auto variant =
        fn->getAttrOfType<DictionaryAttr>(mlir::qtrain::kVariantAttrName);
    if (!variant)
      return;
    ++numVariants;
    auto kernel = variant.getAs<StringAttr>("kernel");
    ++kernelKinds[kernel ? kernel.str() : "f32"];
  });

  // CPU lowering, packed entry points, object code, shared object.
  PassManager lowering(&context);
  mlir::qtrain::buildCPULoweringPipeline(lowering);
  // --dump-buffers: the step as buffers, after qtrain-free-early placed
  // the deallocations (scripts/step-buffers.py reads it).
  std::unique_ptr<llvm::ToolOutputFile> buffersOut;
  if (!dumpBuffers.empty()) {
    std::string error;
    buffersOut = openOutputFile(dumpBuffers, &error);
    if (!buffersOut)
      return fail(error);
    context.disableMultithreading();
    lowering.enableIRPrinting(
        [](Pass *, Operation *) { return false; },
        [](Pass *pass, Operation *) {
          return pass->getArgument() == "qtrain-free-early";
        },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
        /*printAfterOnlyOnFailure=*/false, buffersOut->os());
  }
  if (failed(lowering.run(*module)) ||
      failed(mlir::qtrain::addPackedEntryPoints(*module)))
    return 1;
  if (buffersOut)
    buffersOut->keep();
  std::string gradSchedule =
      policy == "none" ? "fp32" : "static:" + std::to_string(firstGradBits);
  // The ABI digest: the library carries what its manifest must say, as
  // the runtime reads it (rt::abiDescription of the parsed manifest).
  {
    std::string text = mlir::qtrain::renderManifest(*info, "model.so",
                                                    rt::printSchedule(parsed),
                                                    gradSchedule, commandLine);
    rt::Manifest manifest;
    if (rt::Status s = rt::parseManifest(text, "manifest.json", manifest);
        s.failed())
      return fail("the manifest it would write does not read back: " +
                  s.message());
    std::string description = rt::abiDescription(manifest);
    if (failed(mlir::qtrain::addAbiDigest(
            *module, description,
            rt::sha256Hex(description.data(), description.size()))))
      return 1;
  }
  // The bundle is built in OUT.partial and renamed into place at the end,
  // so OUT is never half written; an existing OUT is replaced only if it is
  // a bundle (or empty).
  std::string staging = outputDir + ".partial";
  llvm::sys::fs::remove_directories(staging);
  if (std::error_code ec = llvm::sys::fs::create_directories(staging))
    return fail("cannot create " + staging + ": " + ec.message());
  auto abandon = [&](const std::string &message) {
    llvm::sys::fs::remove_directories(staging);
    return message.empty() ? 1 : fail(message);
  };
  llvm::SmallString<256> object(staging), library(staging);
  llvm::sys::path::append(object, "model.o");
  llvm::sys::path::append(library, "model.so");
  if (failed(mlir::qtrain::emitObjectFile(*module, targetCpu, object)))
    return abandon("");
  llvm::ErrorOr<std::string> clang = llvm::sys::findProgramByName("clang-22");
  if (!clang)
    return abandon("clang-22 (the linker driver) is not on PATH; run "
                   "scripts/setup.sh");
  // The step needs the GEMM microkernels (qtrain-microkernels calls them;
  // libQTrainUKernels.a next to this tool's bin/, in lib/), the C++ runtime
  // they use, libc and libm (qtrain-copies-to-linalg turns strided copies
  // into loops).
  std::string self = llvm::sys::fs::getMainExecutable(argv[0], (void *)&fail);
  llvm::SmallString<256> ukernels(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(self)));
  llvm::sys::path::append(ukernels, "lib", "libQTrainUKernels.a");
  if (!llvm::sys::fs::exists(ukernels))
    return abandon("the microkernel library " + std::string(ukernels) +
                   " is missing; build the QTrainUKernels target");
  SmallVector<StringRef> linkArgs = {*clang,     "-shared",   "-o",
                                     library,    object,      ukernels,
                                     "-lstdc++", "-lpthread", "-lm"};
  if (llvm::sys::ExecuteAndWait(*clang, linkArgs) != 0)
    return abandon("linking " + std::string(library) + " failed");
  llvm::sys::fs::remove(object);
  // The runtime checks the library against this before loading it.
  if (rt::Status s = rt::sha256File(std::string(library), info->librarySha256);
      s.failed())
    return abandon(s.message());
  if (failed(mlir::qtrain::writeManifest(
          *info, staging, "model.so", rt::printSchedule(parsed), gradSchedule,
          commandLine, module->getLoc())))
    return abandon("");
  // Replace the old bundle: move it aside, move the new one in, drop the old.
  std::string old = outputDir + ".old";
  llvm::sys::fs::remove_directories(old);
  bool replaced = llvm::sys::fs::exists(outputDir);
  if (replaced) {
    if (std::error_code ec = llvm::sys::fs::rename(outputDir, old))
      return abandon("cannot move the old " + outputDir +
                     " aside: " + ec.message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(staging, outputDir)) {
    if (replaced)
      (void)llvm::sys::fs::rename(old, outputDir);
    return abandon("cannot move " + staging + " to " + outputDir + ": " +
                   ec.message());
  }
  if (replaced)
    llvm::sys::fs::remove_directories(old);
  library = outputDir;
  llvm::sys::path::append(library, "model.so");

  // Summary.
  uint64_t size = 0;
  llvm::sys::fs::file_size(library, size);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  llvm::outs() << "qtrain-compile: wrote " << outputDir << " in "
               << llvm::format("%.1f", seconds) << " s\n"
               << "  sites: " << info->sites.size()
               << ", variant functions: " << numVariants
               << ", model.so: " << size / 1024 << " KiB\n"
               << "  kernels:";
  for (const auto &[kind, count] : kernelKinds)
    llvm::outs() << " " << kind << " " << count;
  if (kernelKinds.empty())
    llvm::outs() << " none";
  llvm::outs() << " (variant functions by kind)\n"
               << "  schedule: " << rt::printSchedule(parsed)
               << ", backward: " << gradSchedule << "\n"
               << "  BitOps per step (forward/backward bits):";
  if (info->sites.empty())
    llvm::outs() << " no kernel sites";
  for (auto [b, g] : info->sites.empty() ? std::vector<std::pair<int, int>>{}
                                         : info->sites.front().precisions) {
    double total = 0;
    for (const mlir::qtrain::SiteInfo &site : info->sites)
      total += rt::bitOps(double(site.macs), b, g);
    llvm::outs() << "  " << (b ? std::to_string(b) : "fp32") << "/"
                 << (g ? std::to_string(g) : "fp32") << ": "
                 << llvm::format("%.3g", total);
  }
  llvm::outs() << "\n";
  return 0;
}
