//===- qtrain-compile.cpp - Forward graph to training bundle ----*- C++ -*-===//
//
// One command from a forward graph to a bundle (docs/bundle.md): quantizers,
// training step, kernel variants per precision, CPU lowering, object code,
// shared object and manifest.
//
//===----------------------------------------------------------------------===//

#include "PrecisionBudget.h"

#include "qtrain/Frontend/TosaToLinalg.h"
#include "qtrain/InitAll.h"
#include "qtrain/Pipelines/Pipelines.h"
#include "qtrain/Search/Assignment.h"
#include "qtrain/Target/Bundle/Bundle.h"
#include "qtrain/Target/CUDA/CudaTarget.h"
#include "qtrain/runtime/Abi.h"
#include "qtrain/runtime/Cost.h"
#include "qtrain/runtime/Schedule.h"
#include "qtrain/runtime/Sha256.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainDialect.h"

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
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

#include <chrono>
#include <cmath>
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
static cl::opt<std::string> gradFormat(
    "grad-format", cl::init("int"),
    cl::desc("How CPT's errors are quantized: int (the paper's integer grid "
             "of --grad-bits bits, stochastic rounding) or e5m2 (fp8, scaled "
             "per tensor by a power of two, nearest rounding: the GPU's fp8 "
             "backward; --grad-bits must be 8)"),
    cl::cat(compileCategory));
static cl::opt<std::string>
    inputGrad("input-grad", cl::init("f32"),
              cl::desc("Input gradients of per-channel weights: f32 (the "
                       "exact path), bf16 (bf16 products, f32 sums), int "
                       "(the weight's scales folded into the error's "
                       "quantization, an integer product) or fp8 (the same "
                       "fold for --grad-format=e5m2: fp8 or bf16 products "
                       "on the GPU); docs/passes/integer-kernels.md"),
              cl::cat(compileCategory));
static cl::opt<bool> fp32("fp32", cl::init(true),
                          cl::desc("Also compile the fp32 variants"),
                          cl::cat(compileCategory));
static cl::opt<bool> trainBatchnorm(
    "train-batchnorm", cl::init(true),
    cl::desc("Train batch norms exported in eval mode with batch statistics, "
             "keeping the running mean and variance as state (default on; "
             "qtrain-train-batchnorm)"),
    cl::cat(compileCategory));
static cl::opt<bool> liftParams("lift-params", cl::init(false),
                                cl::desc("Lift exported weight constants"),
                                cl::cat(compileCategory));
static cl::opt<bool>
    reinit("reinit", cl::init(false),
           cl::desc("Initialize every parameter afresh (PyTorch's defaults "
                    "by layer kind), not from the exported weights; implies "
                    "--lift-params"),
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
// The CUDA target (docs/cuda.md).
static cl::opt<std::string> target(
    "target", cl::init("cpu"),
    cl::desc("cpu (the default), or cuda:CHIP (e.g. cuda:sm_90) to add GPU "
             "kernels for every site and precision; the CPU library is "
             "always built (cpu,cuda:CHIP says the same)"),
    cl::cat(compileCategory));
static cl::opt<std::string>
    cudaFormat("cuda-format", cl::init("cubin"),
               cl::desc("cubin (assembled by the toolkit's ptxas) or ptx "
                        "(JIT-compiled by the driver when loaded)"),
               cl::cat(compileCategory));
static cl::opt<std::string> cudaPath(
    "cuda-path", cl::init(""),
    cl::desc("The CUDA toolkit with bin/ptxas (default: $CUDA_PATH, else "
             "/usr/local/cuda)"),
    cl::cat(compileCategory));
static cl::opt<std::string>
    cudaKinds("cuda-kinds", cl::init("f32,tf32,bf16,fp8,i8"),
              cl::desc("The GPU kernel kinds to build, comma-separated"),
              cl::cat(compileCategory));
static cl::opt<std::string> cudaF32Kind(
    "cuda-f32-kind", cl::init("f32"),
    cl::desc("The GPU kernel of the step's f32 products: f32 (CUDA cores, "
             "the CPU step's numerics within sum order), tf32 or bf16 (tensor "
             "cores, operands rounded: the mixed-precision step)"),
    cl::cat(compileCategory));
static cl::opt<std::string> cudaFloatKind(
    "cuda-float-kind", cl::init("auto"),
    cl::desc("The GPU kernel of the float-format method's products "
             "(docs/cuda.md, \"fp8 products\"): fp8, bf16 (exact operands), "
             "f32, or auto (fp8 when --cuda-kinds has fp8, else bf16)"),
    cl::cat(compileCategory));
static cl::opt<std::string> cudaFp8Scale(
    "cuda-fp8-scale", cl::init("fit"),
    cl::desc("How the float-format method's values become fp8 on the GPU "
             "(docs/cuda.md, \"fp8 products\"): fit (no value overflows; "
             "the smallest binades lose one bit) or exact (every value "
             "exact; the largest saturate)"),
    cl::cat(compileCategory));
static cl::opt<int64_t> cudaReductionFanIn(
    "cuda-reduction-fan-in", cl::init(32),
    cl::desc("The most elements one GPU thread of a split reduction combines "
             "(docs/passes/map-step-to-gpu.md; 0: a reduction with few "
             "outputs runs on one thread per output)"),
    cl::cat(compileCategory));
static cl::opt<bool> cudaEmulateStep(
    "cuda-emulate-step", cl::init(false),
    cl::desc("Build model.so from the CUDA step with its kernel launches as "
             "host loops (qtrain-emulate-cuda-step) instead of the CPU "
             "lowering: the CUDA step checked on a CPU, slowly"),
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

// MLIR's parser, verifier and passes recurse once or more per level of
// nesting; main() gives them kStackBytes of stack, which holds kMaxNesting
// levels with a wide margin (a release build's parser takes about 2 KiB a
// level).
static constexpr unsigned kStackBytes = 512u << 20;
static constexpr unsigned kMaxNesting = 20000;
static cl::opt<unsigned> maxNesting(
    "max-nesting", cl::init(1000),
    cl::desc("Refuse input nested deeper than this many levels of brackets "
             "(regions, attributes, types), at most 20000"),
    cl::cat(compileCategory));

static cl::opt<std::string> dumpBuffers(
    "dump-buffers", cl::init(""),
    cl::desc("Write the training step as buffers (after bufferization and "
             "qtrain-free-early) to this file, for scripts/step-buffers.py"),
    cl::cat(compileCategory));

static cl::opt<std::string>
    dumpStep("dump-step", cl::init(""),
             cl::desc("Write the materialized training module (after the "
                      "qtrain-step pipeline, on tensors) to this file"),
             cl::cat(compileCategory));
static cl::opt<std::string> dumpLowered(
    "dump-lowered", cl::init(""),
    cl::desc("Write the module lowered to the LLVM dialect (after the "
             "qtrain-compile pipeline, before the ABI digest) to this file"),
    cl::cat(compileCategory));
static cl::opt<bool> printPipeline(
    "print-pipeline", cl::init(false),
    cl::desc("Print the pass pipeline (qtrain-opt --pass-pipeline=) this "
             "compilation runs, and exit"),
    cl::cat(compileCategory));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "qtrain-compile: error: " << message << "\n";
  return 1;
}

/// Writes `module` to `path` (nothing when `path` is empty).
static LogicalResult writeModule(ModuleOp module, StringRef path) {
  if (path.empty())
    return success();
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(path, &error);
  if (!out) {
    fail(error);
    return failure();
  }
  // As qtrain-opt prints its output.
  module.print(out->os());
  out->os() << "\n";
  out->keep();
  return success();
}

/// The argument indices of `name` marked qtrain.host_visible.
static std::vector<int64_t> hostVisibleArguments(ModuleOp module,
                                                 StringRef name) {
  std::vector<int64_t> indices;
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (fn.getArgAttr(i, mlir::qtrain::kHostVisibleAttrName))
        indices.push_back(i);
  return indices;
}

/// --cuda-float-kind with auto resolved: fp8 where the kernels of
/// --cuda-kinds may be fp8 (sm_89+), else bf16.
static std::string resolvedFloatKind() {
  if (cudaFloatKind != "auto")
    return cudaFloatKind;
  SmallVector<StringRef> kinds;
  StringRef(cudaKinds).split(kinds, ',');
  return llvm::is_contained(kinds, "fp8") ? "fp8" : "bf16";
}

/// Lowers `step` (a clone of the materialized training module) to the host
/// code and kernels of the bundle's step on the GPU (the passes of
/// qtrain-cuda-step-library) and records the arguments the host code reads
/// in `spec` (the library and its SHA-256 once it is linked).
static LogicalResult buildCudaStep(ModuleOp step, StringRef chip,
                                   StringRef toolkit, StringRef format,
                                   rt::CudaTargetSpec &spec) {
  PassManager map(step.getContext());
  mlir::qtrain::CudaStepOptions options;
  options.f32Kind = cudaF32Kind.getValue();
  options.floatKind = resolvedFloatKind();
  options.fp8Scale = cudaFp8Scale.getValue();
  options.reductionFanIn = cudaReductionFanIn.getValue();
  if (failed(mlir::qtrain::buildCUDAStepPipeline(
          map, options,
          [&](const Twine &message) {
            return step.emitError("qtrain-compile: the CUDA step: ") << message;
          })) ||
      failed(map.run(step)))
    return failure();
  spec.trainHostVisible = hostVisibleArguments(step, "train_step");
  spec.evalHostVisible = hostVisibleArguments(step, "eval_step");
  // Recorded in the manifest; LLVM has no use for them.
  step.walk([](func::FuncOp fn) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      fn.removeArgAttr(i, mlir::qtrain::kHostVisibleAttrName);
  });
  PassManager lower(step.getContext());
  mlir::qtrain::CudaStepKernelsOptions kernels;
  kernels.chip = chip.str();
  kernels.toolkit = toolkit.str();
  kernels.format = format.str();
  if (failed(mlir::qtrain::buildCUDAStepKernelsPipeline(
          lower, kernels, [&](const Twine &message) {
            return step.emitError("qtrain-compile: the CUDA step: ") << message;
          })))
    return failure();
  mlir::qtrain::buildCUDAStepHostPipeline(lower);
  return lower.run(step);
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

/// Where the bracket nesting of MLIR text `text` first passes `limit`
/// levels, or null. Brackets are (, [, { and < outside string literals and
/// comments; the > of "->" and ">=" closes nothing. Every recursion of
/// MLIR's parser (regions, attributes, types) sits inside one of them, so
/// this bounds its depth before it runs.
static const char *findNestingPast(StringRef text, unsigned limit) {
  unsigned depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    switch (text[i]) {
    case '"':
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        i = std::min(text.find('\n', i), e);
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > limit)
        return text.data() + i;
      break;
    case '>':
      if ((i > 0 && text[i - 1] == '-') || (i + 1 < e && text[i + 1] == '='))
        break;
      [[fallthrough]];
    case ')':
    case ']':
    case '}':
      depth -= depth > 0;
      break;
    default:
      break;
    }
  }
  return nullptr;
}

/// Creates a new, empty directory `path` + `suffix` + "-XXXXXX" next to
/// `path` (its parent directories too), on the same file system so that it
/// renames onto `path`, and returns its absolute name in `result`.
static std::error_code createSiblingDirectory(StringRef path, StringRef suffix,
                                              std::string &result) {
  llvm::SmallString<256> prefix(path);
  if (std::error_code ec = llvm::sys::fs::make_absolute(prefix))
    return ec;
  if (std::error_code ec = llvm::sys::fs::create_directories(
          llvm::sys::path::parent_path(prefix)))
    return ec;
  prefix += suffix;
  llvm::SmallString<256> unique;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(prefix, unique))
    return ec;
  result = std::string(unique);
  return {};
}

/// The whole compilation; main() runs it on a thread with a large stack.
static int compile(int argc, char **argv) {
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
  // 0 and negative values are no "keep the graph's batch": that is leaving
  // --batch out. NaN would compare false against every tensor's size and
  // so disable the size check.
  if (batch.getNumOccurrences() && batch <= 0)
    return fail("--batch=" + std::to_string(batch) +
                ": expected a positive batch size (leave --batch out to keep "
                "the graph's batch)");
  if (!std::isfinite(maxTensorGiB) || maxTensorGiB <= 0)
    return fail(llvm::formatv("--max-tensor-gib={0}: expected a finite "
                              "number of GiB above 0",
                              llvm::format("%g", maxTensorGiB.getValue())));
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
  if (inputGrad != "f32" && inputGrad != "bf16" && inputGrad != "int" &&
      inputGrad != "fp8")
    return fail("--input-grad must be f32, bf16, int or fp8, got '" +
                inputGrad + "'");
  if (gradFormat != "int" && gradFormat != "e5m2")
    return fail("--grad-format must be int or e5m2, got '" + gradFormat + "'");
  if (gradFormat == "e5m2") {
    if (gradList != std::vector<int>{8})
      return fail("--grad-format=e5m2 is the 8-bit backward in fp8: "
                  "--grad-bits must be 8, got " +
                  gradBits);
    if (policy == "none")
      return fail("--grad-format=e5m2 quantizes the errors of a quantized "
                  "policy (cpt, static or ldp); --policy=none has none");
    if (inputGrad == "int")
      return fail("--input-grad=int folds the weight's scales into the "
                  "error's integer grid; with --grad-format=e5m2 use f32, "
                  "bf16 or fp8");
  } else if (inputGrad == "fp8") {
    return fail("--input-grad=fp8 folds the weight's scales into fp8 "
                "errors: it needs --grad-format=e5m2");
  }
  // The pipeline's default (cpt/ldp:MIN:MAX, static:MAX or fp32 by policy).
  std::string scheduleText =
      !schedule.empty() ? schedule.getValue()
                        : mlir::qtrain::defaultSchedule(policy, bitList);
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
  // --target: cpu always; at most one cuda:CHIP.
  std::string cudaChip;
  {
    SmallVector<StringRef> targets;
    StringRef(target).split(targets, ',', -1, /*KeepEmpty=*/false);
    for (StringRef t : targets) {
      if (t == "cpu")
        continue;
      if (!t.consume_front("cuda:") || t.empty() || !cudaChip.empty())
        return fail("--target=" + target +
                    ": expected cpu, cuda:CHIP (e.g. cuda:sm_90) or "
                    "cpu,cuda:CHIP");
      cudaChip = t.str();
    }
  }
  if (cudaF32Kind != "f32" && cudaF32Kind != "tf32" && cudaF32Kind != "bf16")
    return fail("--cuda-f32-kind must be f32, tf32 or bf16, got '" +
                cudaF32Kind + "'");
  if (cudaFloatKind != "auto" && cudaFloatKind != "fp8" &&
      cudaFloatKind != "bf16" && cudaFloatKind != "f32")
    return fail("--cuda-float-kind must be auto, fp8, bf16 or f32, got '" +
                cudaFloatKind + "'");
  if (cudaFp8Scale != "fit" && cudaFp8Scale != "exact")
    return fail("--cuda-fp8-scale must be fit or exact, got '" + cudaFp8Scale +
                "'");
  if (cudaReductionFanIn < 0)
    return fail("--cuda-reduction-fan-in must not be negative, got " +
                std::to_string(cudaReductionFanIn));
  if (cudaFormat != "cubin" && cudaFormat != "ptx")
    return fail("--cuda-format must be cubin or ptx, got '" + cudaFormat + "'");
  for (const std::string &value :
       {cudaChip, cudaKinds.getValue(), cudaPath.getValue()})
    if (value.find_first_of(" {}'\"") != std::string::npos)
      return fail("--target, --cuda-kinds and --cuda-path may not contain "
                  "spaces, braces or quotes");
  if (maxNesting < 1 || maxNesting > kMaxNesting)
    return fail("--max-nesting=" + std::to_string(maxNesting) +
                ": expected 1 to " + std::to_string(kMaxNesting) + " levels");

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
  if (const char *deep = findNestingPast(
          sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer(),
          maxNesting)) {
    sourceMgr.PrintMessage(
        llvm::SMLoc::getFromPointer(deep), llvm::SourceMgr::DK_Error,
        "qtrain-compile: the input nests more than --max-nesting=" +
            std::to_string(maxNesting) +
            " levels of brackets (regions, attributes, types)");
    return 1;
  }
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
  // TOSA input is lowered to linalg on tensors first
  // (docs/passes/import.md).
  bool tosa = mlir::qtrain::hasTosaOps(*module);
  if (tosa) {
    PassManager lowerTosa(&context);
    mlir::qtrain::buildTosaToLinalgPipeline(lowerTosa);
    if (failed(lowerTosa.run(*module)))
      return 1;
  }

  // The step's pipeline as qtrain-opt runs it, qtrain-step{OPTIONS}
  // (lib/Pipelines), with qtrain-compile's flags as its options;
  // `assignment` holds the options that choose the float formats' groups
  // (precision-ratio=, precision-budget=, precision-report=).
  if (floatFormats)
    // Option values go into a pipeline string: no spaces, braces or quotes.
    for (const std::string &value :
         {precisionRatio.getValue(), precisionBudget.getValue(),
          precisionOrder.getValue(), precisionScores.getValue(),
          precisionReport.getValue(), precisionProfile.getValue()})
      if (value.find_first_of(" {}'\"") != std::string::npos)
        return fail("precision option value '" + value +
                    "' may not contain spaces, braces or quotes");
  auto pipelineOptions = [&](const std::string &assignment) {
    std::string options;
    if (liftParams || reinit)
      options += "lift-params=true ";
    if (reinit)
      options += "reinit=true ";
    if (batch > 0)
      options += "batch=" + std::to_string(batch) + " ";
    options += "policy=" + policy + " schedule=" + scheduleText +
               " bits=" + bits + " grad-bits=" + gradBits;
    if (inputGrad != "f32")
      options += " input-grad=" + inputGrad;
    if (gradFormat != "int")
      options += " grad-format=" + gradFormat;
    if (policy == "ldp")
      options += llvm::formatv(" ldp-lambda={0:e9} ldp-init={1:e9}",
                               ldpLambda.getValue(), ldpInit.getValue())
                     .str();
    if (floatFormats) {
      options += " precision-order=" + precisionOrder +
                 " precision-seed=" + std::to_string(precisionSeed) +
                 assignment;
      if (!precisionScores.empty())
        options += " precision-scores=" + precisionScores;
      if (!precisionProfile.empty())
        options += " precision-profile=" + precisionProfile;
      options += std::string(" precision-promotion=") +
                 (precisionPromotion ? "true" : "false");
    }
    options += " loss=" + loss;
    if (!trainBatchnorm)
      options += " train-batchnorm=false";
    if (!cudaChip.empty())
      options += " cuda-chip=" + cudaChip + " cuda-kinds=" + cudaKinds;
    if (policy != "none")
      options += std::string(" fp32=") + (fp32 ? "true" : "false") +
                 " max-variants=" + std::to_string(maxVariants);
    return options;
  };
  auto stepPipeline = [&](const std::string &assignment) {
    return "qtrain-step{" + pipelineOptions(assignment) + "}";
  };
  // Remarks of the passes are for qtrain-opt; keep the summary short.
  context.getDiagEngine().registerHandler([](Diagnostic &d) {
    return success(d.getSeverity() == DiagnosticSeverity::Remark);
  });

  std::string assignment;
  if (!precisionRatio.empty())
    assignment += " precision-ratio=" + precisionRatio;
  if (!precisionBudget.empty()) {
    if (!precisionRatio.empty()) {
      // qtrain-assign-precision says that only one of them may be given.
      assignment += " precision-budget=" + precisionBudget;
    } else {
      std::optional<std::string> ratio = searchPrecisionBudget(
          *module, precisionBudget, precisionPromotion, stepPipeline);
      if (!ratio)
        return 1;
      assignment += " precision-ratio=" + *ratio;
    }
  }
  if (!precisionReport.empty())
    assignment += " precision-report=" + precisionReport;
  // --print-pipeline: what qtrain-opt --pass-pipeline= runs to get the
  // module that becomes object code (qtrain-step, then the lowering).
  if (printPipeline) {
    llvm::outs() << "builtin.module(" << (tosa ? "qtrain-tosa-to-linalg," : "")
                 << "qtrain-compile{" << pipelineOptions(assignment) << "})\n";
    return 0;
  }
  std::string pipeline = stepPipeline(assignment);
  PassManager step(&context);
  if (failed(parsePassPipeline(pipeline, step, llvm::errs())))
    return fail("bad pipeline: " + pipeline);
  if (failed(step.run(*module)) || failed(writeModule(*module, dumpStep)))
    return 1;
  if (failed(checkTensorSizes(*module)))
    return 1;

  FailureOr<mlir::qtrain::BundleContents> contents =
      mlir::qtrain::collectBundleContents(*module);
  if (failed(contents))
    return 1;
  rt::Manifest &manifest = contents->manifest;
  // The CUDA target: the GPU kernels leave the step before the CPU
  // lowering, as PTX and a cubin (docs/cuda.md).
  std::optional<mlir::qtrain::CudaTarget> cuda;
  OwningOpRef<ModuleOp> stepModule;
  if (!cudaChip.empty()) {
    mlir::qtrain::CudaTargetOptions options;
    options.format = cudaFormat;
    if (!cudaPath.empty())
      options.cudaPath = cudaPath;
    else if (const char *env = std::getenv("CUDA_PATH"); env && *env)
      options.cudaPath = env;
    FailureOr<mlir::qtrain::CudaTarget> built =
        mlir::qtrain::buildCudaTarget(*module, manifest.sites.size(), options);
    if (failed(built))
      return 1;
    cuda = std::move(*built);
    manifest.cuda = cuda->spec;
    for (size_t i = 0; i < manifest.sites.size(); ++i)
      manifest.sites[i].cudaKernels = cuda->sites[i];
    // The whole step on the GPU, from the same materialized module: host
    // code and kernels (docs/cuda.md, "The step on the GPU"). Its kernels'
    // exp and log link the toolkit's libdevice.
    llvm::SmallString<256> libdevice(options.cudaPath);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
    if (!llvm::sys::fs::exists(libdevice)) {
      llvm::errs() << "qtrain-compile: warning: " << libdevice
                   << " not found: the bundle gets the GEMM kernels but no "
                      "step for the GPU (--cuda-path names the toolkit)\n";
    } else {
      stepModule = module->clone();
      if (failed(buildCudaStep(*stepModule, cudaChip, options.cudaPath,
                               cudaFormat, manifest.cuda)))
        return 1;
    }
  }
  int64_t numVariants = 0;
  std::map<std::string, int64_t> kernelKinds;
  mlir::qtrain::QTrainDialect::VariantAttrHelper variantAttr =
      context.getOrLoadDialect<mlir::qtrain::QTrainDialect>()
          ->getVariantAttrHelper();
  module->walk([&](func::FuncOp fn) {
    mlir::qtrain::VariantAttr variant = variantAttr.getAttr(fn);
    if (!variant)
      return;
    ++numVariants;
    ++kernelKinds[mlir::qtrain::stringifyKernelKind(
                      variant.getKernel().value_or(
                          mlir::qtrain::KernelKind::F32))
                      .str()];
  });

  // CPU lowering, packed entry points, object code, shared object.
  PassManager lowering(&context);
  if (failed(parsePassPipeline(
          (cudaEmulateStep
               ? "qtrain-emulate-cuda-step{f32-kind=" + cudaF32Kind +
                     " float-kind=" + resolvedFloatKind() +
                     " fp8-scale=" + cudaFp8Scale + " reduction-fan-in=" +
                     std::to_string(cudaReductionFanIn) + "}"
               : std::string("qtrain-lower-cpu")) +
              ",qtrain-packed-entry-points",
          lowering, llvm::errs())))
    return 1;
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
      failed(writeModule(*module, dumpLowered)))
    return 1;
  if (buffersOut)
    buffersOut->keep();
  std::string gradSchedule =
      policy == "none" ? "fp32" : "static:" + std::to_string(firstGradBits);
  // The ABI digest: the library carries what its manifest must say, as
  // the runtime reads it (rt::abiDescription of the parsed manifest).
  manifest.library = "model.so";
  manifest.schedule = rt::printSchedule(parsed);
  manifest.gradSchedule = gradSchedule;
  manifest.gradFormat = gradFormat;
  manifest.compiler.flags = commandLine;
  {
    rt::Manifest read;
    if (rt::Status s = rt::parseManifest(rt::printManifest(manifest),
                                         "manifest.json", read);
        s.failed())
      return fail("the manifest it would write does not read back: " +
                  s.message());
    std::string description = rt::abiDescription(read);
    if (failed(mlir::qtrain::addAbiDigest(
            *module, description,
            rt::sha256Hex(description.data(), description.size()))))
      return 1;
  }
  // The bundle is built in a fresh OUT.partial-XXXXXX and renamed into
  // place at the end, so OUT is never half written; an existing OUT is
  // replaced only if it is a bundle (or empty). Only directories made here
  // are ever removed.
  std::string staging;
  if (std::error_code ec =
          createSiblingDirectory(outputDir, ".partial", staging))
    return fail("cannot create a directory next to " + outputDir + ": " +
                ec.message());
  std::string old;
  auto abandon = [&](const std::string &message) {
    llvm::sys::fs::remove_directories(staging);
    // The empty OUT.old-XXXXXX made for the old bundle; remove() never
    // deletes it once it holds the old bundle.
    if (!old.empty())
      llvm::sys::fs::remove(old);
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
  // libQTrainMicrokernels.a next to this tool's bin/, in lib/), the C++ and
  // OpenMP runtimes they use, libc and libm (qtrain-copies-to-linalg turns
  // strided copies into loops).
  std::string self = llvm::sys::fs::getMainExecutable(argv[0], (void *)&fail);
  llvm::SmallString<256> microkernels(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(self)));
  llvm::sys::path::append(microkernels, "lib", "libQTrainMicrokernels.a");
  if (!llvm::sys::fs::exists(microkernels))
    return abandon("the microkernel library " + std::string(microkernels) +
                   " is missing; build the QTrainMicrokernels target");
  SmallVector<StringRef> linkArgs = {*clang,  "-shared", "-o",
                                     library, object,    microkernels};
  // The shared libraries the archive was built against (oneDNN where the
  // build found it, the OpenMP runtime of the step's thread pool) and the
  // rpath that finds them at run time, one a line in
  // libQTrainMicrokernels.link next to it.
  llvm::SmallString<256> needs(microkernels);
  llvm::sys::path::replace_extension(needs, "link");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> needsFile =
      llvm::MemoryBuffer::getFile(needs);
  if (!needsFile)
    return abandon("the microkernels' link list " + std::string(needs) +
                   " is missing; build the QTrainMicrokernels target");
  SmallVector<StringRef> needed;
  (*needsFile)->getBuffer().split(needed, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef lib : needed)
    if (!lib.trim().empty())
      linkArgs.push_back(lib.trim());
  // Builtins from compiler-rt (libclang-rt-22-dev): LLVM 22 lowers f32 to
  // bf16 conversions on x86 (the emulated GPU step's bf16 gathers) to
  // __truncsfbf2, which Debian 12's libgcc lacks. The unwinder stays
  // libgcc's, as libstdc++ uses it.
  linkArgs.append({"-lstdc++", "-lpthread", "-lm", "-rtlib=compiler-rt",
                   "-unwindlib=libgcc"});
  if (llvm::sys::ExecuteAndWait(*clang, linkArgs) != 0)
    return abandon("linking " + std::string(library) + " failed");
  llvm::sys::fs::remove(object);
  // The runtime checks the library against this before loading it.
  if (rt::Status s =
          rt::sha256File(std::string(library), manifest.librarySha256);
      s.failed())
    return abandon(s.message());
  if (stepModule) {
    manifest.cuda.stepLibrary = "cuda/step.so";
    llvm::SmallString<256> stepObject(staging), stepLibrary(staging);
    llvm::sys::path::append(stepObject, "cuda", "step.o");
    llvm::sys::path::append(stepLibrary, manifest.cuda.stepLibrary);
    if (std::error_code ec = llvm::sys::fs::create_directories(
            llvm::sys::path::parent_path(stepObject)))
      return abandon("cannot create " +
                     llvm::sys::path::parent_path(stepObject).str() + ": " +
                     ec.message());
    if (failed(
            mlir::qtrain::emitObjectFile(*stepModule, targetCpu, stepObject)))
      return abandon("");
    // The runtime's CUDA host ABI (qtrain_cuda_*, mgpu*) stays undefined:
    // the program that loads the library provides it (CudaHostAbi.h).
    SmallVector<StringRef> stepLink = {*clang, "-shared", "-o", stepLibrary,
                                       stepObject};
    if (llvm::sys::ExecuteAndWait(*clang, stepLink) != 0)
      return abandon("linking " + std::string(stepLibrary) + " failed");
    llvm::sys::fs::remove(stepObject);
    if (rt::Status s = rt::sha256File(std::string(stepLibrary),
                                      manifest.cuda.stepLibrarySha256);
        s.failed())
      return abandon(s.message());
    rt::Manifest read;
    if (rt::Status s = rt::parseManifest(rt::printManifest(manifest),
                                         "manifest.json", read);
        s.failed())
      return abandon("the manifest it would write does not read back: " +
                     s.message());
  }
  if (failed(
          mlir::qtrain::writeBundleFiles(*contents, staging, module->getLoc())))
    return abandon("");
  if (cuda) {
    llvm::SmallString<256> path(staging);
    llvm::sys::path::append(path, manifest.cuda.module);
    if (std::error_code ec = llvm::sys::fs::create_directories(
            llvm::sys::path::parent_path(path)))
      return abandon("cannot create " +
                     llvm::sys::path::parent_path(path).str() + ": " +
                     ec.message());
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
    if (ec)
      return abandon(std::string(path) + ": " + ec.message());
    os << cuda->module;
    os.close();
    if (os.has_error())
      return abandon(std::string(path) + ": " + os.error().message());
  }
  // Replace the old bundle: move it aside (onto an empty OUT.old-XXXXXX
  // made for it, which rename replaces), move the new one in, drop the old.
  bool replaced = llvm::sys::fs::exists(outputDir);
  if (replaced) {
    if (std::error_code ec = createSiblingDirectory(outputDir, ".old", old))
      return abandon("cannot create a directory next to " + outputDir + ": " +
                     ec.message());
    if (std::error_code ec = llvm::sys::fs::rename(outputDir, old))
      return abandon("cannot move the old " + outputDir +
                     " aside: " + ec.message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(staging, outputDir)) {
    std::string kept;
    if (replaced && !llvm::sys::fs::rename(old, outputDir))
      old.clear();
    else if (replaced)
      kept = " (the old bundle is in " + old + ")";
    return abandon("cannot move " + staging + " to " + outputDir + ": " +
                   ec.message() + kept);
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
               << "  sites: " << manifest.sites.size()
               << ", variant functions: " << numVariants
               << ", model.so: " << size / 1024 << " KiB\n"
               << "  kernels:";
  for (const auto &[kind, count] : kernelKinds)
    llvm::outs() << " " << kind << " " << count;
  if (kernelKinds.empty())
    llvm::outs() << " none";
  llvm::outs() << " (variant functions by kind)\n";
  if (cuda) {
    std::map<std::string, int64_t> perKind;
    for (const rt::CudaKernelSpec &k : manifest.cuda.kernels)
      ++perKind[k.kind];
    llvm::outs() << "  cuda: " << manifest.cuda.chip << " "
                 << manifest.cuda.format << ", " << manifest.cuda.kernels.size()
                 << " GEMM kernels (";
    bool first = true;
    for (const auto &[kind, count] : perKind) {
      llvm::outs() << (first ? "" : " ") << kind << " " << count;
      first = false;
    }
    llvm::outs() << "), " << manifest.cuda.module << ": "
                 << cuda->module.size() / 1024 << " KiB\n";
    if (!manifest.cuda.stepLibrary.empty()) {
      llvm::SmallString<256> path(outputDir);
      llvm::sys::path::append(path, manifest.cuda.stepLibrary);
      uint64_t stepSize = 0;
      llvm::sys::fs::file_size(path, stepSize);
      llvm::outs() << "  cuda step: " << manifest.cuda.stepLibrary << ", "
                   << stepSize / 1024
                   << " KiB (the whole step on the GPU, its kernels "
                   << (cudaFormat == "cubin" ? "in one cubin for " + cudaChip
                                             : std::string("in one PTX module"))
                   << ")\n";
    }
  }
  llvm::outs() << "  schedule: " << rt::printSchedule(parsed)
               << ", backward: " << gradSchedule
               << (gradFormat == "e5m2" ? " (errors in fp8 e5m2)" : "") << "\n"
               << "  BitOps per step (forward/backward bits):";
  if (manifest.sites.empty())
    llvm::outs() << " no kernel sites";
  for (const rt::VariantSpec &v : manifest.sites.empty()
                                      ? std::vector<rt::VariantSpec>{}
                                      : manifest.sites.front().variants) {
    int b = v.bits, g = v.gradBits;
    double total = 0;
    for (const rt::SiteSpec &site : manifest.sites)
      total += rt::bitOps(double(site.macs), b, g);
    llvm::outs() << "  " << (b ? std::to_string(b) : "fp32") << "/"
                 << (g ? std::to_string(g) : "fp32") << ": "
                 << llvm::format("%.3g", total);
  }
  llvm::outs() << "\n";
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  int status = 1;
  llvm::thread worker(std::optional<unsigned>(kStackBytes),
                      [&] { status = compile(argc, argv); });
  worker.join();
  return status;
}
