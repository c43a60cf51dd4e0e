//===- main.cpp - qtrain-cuda-check: a bundle's GPU kernels --------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// qtrain-cuda-check BUNDLE [--kernel=NAME] [--repeat=N] [--seed=S]
/// [--no-cublaslt]: runs every GEMM kernel of a bundle's CUDA target on
/// seeded random operands, compares each C with the exact sums computed
/// here (Reference.h), times the kernel (median of --repeat launches, CUDA
/// events) and the same GEMM in cuBLASLt (CublasLt.h), whose result is
/// checked too. One row per kernel, then a summary per kind (docs/cuda.md).
///
/// Exit codes: 0 every check passed; 1 the bundle or one of its kernels
/// failed (the bundle does not open or has no CUDA target, the module or a
/// kernel does not load or launch, a result is off its bound); 2 the check
/// cannot run here (the command line, no driver, no device, a device too
/// old for the module). Built on the runtime only: no LLVM, no CUDA at link
/// time.
///
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include "qtrain/runtime/CublasLt.h"

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/CudaDriver.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace qtrain::cudacheck;
using qtrain::rt::CublasLt;
namespace rt = qtrain::rt;

namespace {

const char *const kUsage = R"(usage: qtrain-cuda-check BUNDLE [options]

Checks the GPU GEMM kernels of a bundle compiled with
qtrain-compile --target=cuda:sm_XY against CPU references and times them
against cuBLASLt (docs/cuda.md). Needs an NVIDIA GPU and its driver.

  --kernel=NAME     check only this kernel of cuda.kernels
  --repeat=N        timed launches per kernel; the median is reported
                    (default 20; 0: no timing)
  --seed=S          the random operands' seed (default 1)
  --no-cublaslt     neither time nor check cuBLASLt

exit status: 0 all checks passed, 1 a check failed, 2 the check cannot run
here (bad command line, no CUDA driver or device, a device too old)
)";

/// The exit codes (see the file comment).
constexpr int kFailed = 1, kCannotRun = 2;
/// Workspace offered to cuBLASLt.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;
/// CPU reference work per kernel: larger GEMMs are checked on a sample of
/// rows (Reference.h).
constexpr int64_t kMaxReferenceMacs = int64_t(1) << 32;

[[noreturn]] void fatal(const std::string &message, int code) {
  std::fprintf(stderr, "qtrain-cuda-check: error: %s\n", message.c_str());
  std::exit(code);
}

struct Options {
  std::string bundle;
  std::string kernel;
  int64_t repeat = 20;
  uint64_t seed = 1;
  bool cublasLt = true;
};

int64_t parseInt(const std::string &flag, const std::string &text, int64_t min,
                 int64_t max) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || v < min || v > max)
    fatal(flag + ": expected an integer in [" + std::to_string(min) + ", " +
              std::to_string(max) + "], got '" + text + "'",
          kCannotRun);
  return v;
}

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) {
      if (!o.bundle.empty())
        fatal("more than one bundle: '" + o.bundle + "' and '" + arg + "'",
              kCannotRun);
      o.bundle = arg;
      continue;
    }
    size_t eq = arg.find('=');
    std::string flag = arg.substr(0, eq);
    bool hasValue = eq != std::string::npos;
    std::string value = hasValue ? arg.substr(eq + 1) : "";
    if (flag == "--kernel" && hasValue && !value.empty())
      o.kernel = value;
    else if (flag == "--repeat" && hasValue)
      o.repeat = parseInt(flag, value, 0, 100000);
    else if (flag == "--seed" && hasValue)
      o.seed = uint64_t(parseInt(flag, value, 0, INT64_MAX));
    else if (flag == "--no-cublaslt" && !hasValue)
      o.cublasLt = false;
    else
      fatal("unknown option or missing value '" + arg + "' (see --help)",
            kCannotRun);
  }
  if (o.bundle.empty())
    fatal("no bundle given (usage: qtrain-cuda-check BUNDLE [options]; see "
          "--help)",
          kCannotRun);
  return o;
}

/// The median of `values` (not empty).
double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t h = values.size() / 2;
  return values.size() % 2 ? values[h] : 0.5 * (values[h - 1] + values[h]);
}

/// Times `launch` (one enqueued GEMM): one warm-up, then the median of
/// `repeat` launches, each between two events, in microseconds.
template <typename Launch>
rt::Status timeLaunches(const rt::CudaDriver &driver, int64_t repeat,
                        Launch launch, double &microseconds) {
  rt::CudaEvent start, end;
  if (rt::Status s = rt::CudaEvent::create(driver, start); s.failed())
    return s;
  if (rt::Status s = rt::CudaEvent::create(driver, end); s.failed())
    return s;
  if (rt::Status s = launch(); s.failed())
    return s;
  std::vector<double> times;
  for (int64_t r = 0; r < repeat; ++r) {
    float ms = 0;
    rt::Status s = start.record();
    if (s.isOk())
      s = launch();
    if (s.isOk())
      s = end.record();
    if (s.isOk())
      s = end.synchronize();
    if (s.isOk())
      s = end.elapsedSince(start, ms);
    if (s.failed())
      return s;
    times.push_back(double(ms) * 1000.0);
  }
  microseconds = times.empty() ? NAN : median(times);
  return rt::Status::success();
}

/// One kernel's results, for its row and the summary.
struct Row {
  const rt::CudaKernelSpec *kernel = nullptr;
  Comparison generated;
  bool ran = false;
  std::string error;
  /// cuBLASLt: "" (ran), or why not ("skipped", "no algorithm", ...).
  std::string cublasNote;
  Comparison cublas;
  double generatedUs = NAN, cublasUs = NAN;
  bool failed() const {
    return !ran || !generated.passed || (cublasNote.empty() && !cublas.passed);
  }
};

std::string checkText(const Comparison &c) {
  char text[64];
  if (c.exact)
    return c.passed ? "exact" : "MISMATCH";
  std::snprintf(text, sizeof(text), "%.3g%s", c.worstRatio,
                c.passed ? "" : " FAIL");
  return text;
}

std::string number(double v, const char *format) {
  if (std::isinf(v) && v > 0)
    return "inf";
  if (!std::isfinite(v))
    return "-";
  char text[64];
  std::snprintf(text, sizeof(text), format, v);
  return text;
}

/// Checks and times kernel `index` of `module`.
Row checkKernel(const rt::CudaDriver &driver, const rt::CudaContext &context,
                const rt::CudaModule &module, size_t index,
                const CublasLt *cublasLt, const rt::CudaBuffer *workspace,
                const Options &o, unsigned threads) {
  const rt::CudaKernelSpec &k = module.getTarget().kernels[index];
  Row row;
  row.kernel = &k;
  Operands operands = makeOperands(k, o.seed);
  size_t cBytes = size_t(k.batch * k.m * k.n) * encodingBytes(k.c);
  rt::CudaBuffer a, b, c;
  auto fail = [&](const std::string &message) {
    row.error = message;
    return row;
  };
  if (rt::Status s = rt::CudaBuffer::allocate(driver, operands.a.size(), a);
      s.failed())
    return fail(s.message());
  if (rt::Status s = rt::CudaBuffer::allocate(driver, operands.b.size(), b);
      s.failed())
    return fail(s.message());
  if (rt::Status s = rt::CudaBuffer::allocate(driver, cBytes, c); s.failed())
    return fail(s.message());
  if (rt::Status s = a.upload(operands.a.data(), operands.a.size()); s.failed())
    return fail(s.message());
  if (rt::Status s = b.upload(operands.b.data(), operands.b.size()); s.failed())
    return fail(s.message());

  // C starts as NaN (f32) or -1 (s32), so an element no thread writes is
  // caught.
  std::vector<uint8_t> result(cBytes);
  auto runChecked = [&](auto launch, Comparison &out,
                        const Tolerance &tolerance) {
    if (rt::Status s = c.fill(0xff); s.failed())
      return s;
    if (rt::Status s = launch(); s.failed())
      return s;
    if (rt::Status s = context.synchronize(); s.failed())
      return s;
    if (rt::Status s = c.download(result.data(), cBytes); s.failed())
      return s;
    out = compareWithReference(k, operands, result, tolerance,
                               kMaxReferenceMacs, threads);
    return rt::Status::success();
  };
  auto generated = [&]() {
    return module.launch(index, a.get(), b.get(), c.get());
  };
  if (rt::Status s = runChecked(generated, row.generated, Tolerance());
      s.failed())
    return fail(s.message());
  row.ran = true;
  if (o.repeat > 0)
    if (rt::Status s =
            timeLaunches(driver, o.repeat, generated, row.generatedUs);
        s.failed())
      return fail(s.message());

  if (!cublasLt) {
    row.cublasNote = "skipped";
    return row;
  }
  CublasLt::PlanPtr plan;
  if (rt::Status s = cublasLt->plan(k, kWorkspaceBytes, plan, row.cublasNote);
      s.failed()) {
    row.cublasNote = s.message();
    row.error = "cuBLASLt: " + s.message();
    row.cublas.passed = false;
    return row;
  }
  if (!plan)
    return row;
  auto library = [&]() {
    return cublasLt->run(*plan, a.get(), b.get(), c.get(), workspace->get(),
                         workspace->size());
  };
  // cuBLASLt does not say how it rounds f32 to tf32: allow either way.
  Tolerance tolerance;
  if (k.kind == "tf32")
    tolerance.extraRelative = 0x1p-8;
  if (rt::Status s = runChecked(library, row.cublas, tolerance); s.failed()) {
    row.error = "cuBLASLt: " + s.message();
    row.cublas.passed = false;
    return row;
  }
  if (o.repeat > 0)
    if (rt::Status s = timeLaunches(driver, o.repeat, library, row.cublasUs);
        s.failed())
      row.error = "cuBLASLt: " + s.message();
  return row;
}

double flops(const rt::CudaKernelSpec &k) {
  return 2.0 * double(k.batch) * double(k.m) * double(k.n) * double(k.k);
}

void printRow(const Row &r) {
  const rt::CudaKernelSpec &k = *r.kernel;
  std::string shape = (k.batch > 1 ? std::to_string(k.batch) + "x" : "") +
                      std::to_string(k.m) + "x" + std::to_string(k.n) + "x" +
                      std::to_string(k.k);
  std::string check = r.ran ? checkText(r.generated) : "ERROR";
  std::string lt = !r.cublasNote.empty() ? "-" : checkText(r.cublas);
  double speed = r.cublasUs / r.generatedUs;
  std::printf("%-28s %-5s %-20s %-10s %-10s %10s %12s %7s %9s\n",
              k.name.c_str(), k.kind.c_str(), shape.c_str(), check.c_str(),
              lt.c_str(), number(r.generatedUs, "%.1f").c_str(),
              number(r.cublasUs, "%.1f").c_str(), number(speed, "%.2f").c_str(),
              number(flops(k) / (r.generatedUs * 1e6), "%.2f").c_str());
  if (r.ran && r.generated.rowsChecked < r.generated.rows)
    std::printf("    (checked %lld of %lld rows)\n",
                (long long)r.generated.rowsChecked,
                (long long)r.generated.rows);
  if (r.ran && !r.generated.passed)
    std::printf("    FAIL: %lld elements off; first %s\n",
                (long long)r.generated.failures,
                r.generated.firstFailure.c_str());
  if (r.cublasNote.empty() && !r.cublas.passed && r.cublas.failures > 0)
    std::printf("    cuBLASLt FAIL: %lld elements off; first %s\n",
                (long long)r.cublas.failures, r.cublas.firstFailure.c_str());
  if (!r.cublasNote.empty() && r.cublasNote != "skipped" && r.error.empty())
    std::printf("    cuBLASLt: %s\n", r.cublasNote.c_str());
  if (!r.error.empty())
    std::printf("    ERROR: %s\n", r.error.c_str());
}

} // namespace

int main(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
  std::unique_ptr<rt::Bundle> bundle;
  if (rt::Status s = rt::openBundle(o.bundle, bundle); s.failed())
    fatal(s.message(), kFailed);
  const rt::Manifest &m = bundle->getManifest();
  if (!rt::hasCudaTarget(m))
    fatal(o.bundle + ": the bundle has no CUDA target (compile it with "
                     "qtrain-compile --target=cuda:sm_90)",
          kFailed);
  std::vector<size_t> selected;
  for (size_t i = 0; i < m.cuda.kernels.size(); ++i)
    if (o.kernel.empty() || m.cuda.kernels[i].name == o.kernel)
      selected.push_back(i);
  if (selected.empty()) {
    std::string names;
    for (const rt::CudaKernelSpec &k : m.cuda.kernels)
      names += (names.empty() ? "" : ", ") + k.name;
    fatal(o.kernel.empty()
              ? o.bundle +
                    ": cuda.kernels is empty: the bundle has no kernel sites "
                    "(fp32, or the float formats), so no per-site GPU kernels "
                    "to check; its GPU step (cuda/step.so) is checked by "
                    "training it (scripts/device-check.sh)"
              : "--kernel=" + o.kernel + ": no such kernel (the bundle has " +
                    names + ")",
          kCannotRun);
  }

  std::unique_ptr<rt::CudaDriver> driver;
  if (rt::Status s = rt::CudaDriver::load(driver); s.failed())
    fatal(s.message(), kCannotRun);
  rt::CudaDevice device;
  if (rt::Status s = rt::selectCudaDevice(*driver, m.cuda, device); s.failed())
    fatal(s.message(), kCannotRun);
  std::unique_ptr<rt::CudaContext> context;
  if (rt::Status s = rt::CudaContext::open(*driver, device, context);
      s.failed())
    fatal(s.message(), kCannotRun);
  int worst = 0;
  {
    std::unique_ptr<rt::CudaModule> module;
    if (rt::Status s =
            rt::CudaModule::load(*driver, m.cuda, bundle->getCudaModuleImage(),
                                 bundle->getCudaModulePath(), module);
        s.failed())
      fatal(s.message(), kFailed);

    std::unique_ptr<CublasLt> cublasLt;
    rt::CudaBuffer workspace;
    std::string cublasLtState = "off (--no-cublaslt)";
    if (o.cublasLt) {
      rt::Status s = CublasLt::load(cublasLt);
      if (s.isOk())
        s = rt::CudaBuffer::allocate(*driver, kWorkspaceBytes, workspace);
      if (s.failed()) {
        cublasLt.reset();
        cublasLtState = "not available: " + s.message();
      } else {
        cublasLtState = cublasLt->getPath();
      }
    }
    std::printf("qtrain-cuda-check: %s: %zu of %zu GPU kernels (%s, %s) on "
                "device 0, %s (%s); seed %llu, median of %lld launches; "
                "cuBLASLt %s\n",
                o.bundle.c_str(), selected.size(), m.cuda.kernels.size(),
                m.cuda.module.c_str(), m.cuda.chip.c_str(), device.name.c_str(),
                device.chip().c_str(), (unsigned long long)o.seed,
                (long long)o.repeat, cublasLtState.c_str());
    std::printf("%-28s %-5s %-20s %-10s %-10s %10s %12s %7s %9s\n", "kernel",
                "kind", "[batch x]m x n x k", "err/bound", "cuBLASLt", "gen us",
                "cuBLASLt us", "speed", "TFLOP/s");
    std::fflush(stdout);

    unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<Row> rows;
    for (size_t index : selected) {
      rows.push_back(checkKernel(*driver, *context, *module, index,
                                 cublasLt.get(), &workspace, o, threads));
      printRow(rows.back());
      std::fflush(stdout);
      if (rows.back().failed() || !rows.back().error.empty())
        worst = kFailed;
    }

    // The summary per kind, in the manifest's order of kinds.
    std::printf("summary:\n");
    for (const char *kind : rt::kCudaKernelKinds) {
      int count = 0, failures = 0;
      double worstRatio = 0, genUs = 0, libUs = 0, work = 0;
      bool timedBoth = true, exact = std::string(kind) == "i8";
      for (const Row &r : rows) {
        if (r.kernel->kind != kind)
          continue;
        ++count;
        failures += r.failed() || !r.error.empty();
        worstRatio = std::max(worstRatio, r.generated.worstRatio);
        genUs += r.generatedUs;
        libUs += r.cublasUs;
        work += flops(*r.kernel);
        timedBoth = timedBoth && std::isfinite(r.cublasUs);
      }
      if (count == 0)
        continue;
      std::printf("  %-5s %d kernel%s, %s; worst err/bound %s; generated "
                  "%s us, cuBLASLt %s us (speed %s), %s TFLOP/s\n",
                  kind, count, count == 1 ? "" : "s",
                  failures ? (std::to_string(failures) + " FAILED").c_str()
                           : "all passed",
                  exact ? (failures ? "not exact" : "exact")
                        : number(worstRatio, "%.3g").c_str(),
                  number(genUs, "%.1f").c_str(),
                  number(timedBoth ? libUs : NAN, "%.1f").c_str(),
                  number(timedBoth ? libUs / genUs : NAN, "%.2f").c_str(),
                  number(work / (genUs * 1e6), "%.2f").c_str());
    }
    std::printf("qtrain-cuda-check: %s\n",
                worst ? "FAILED" : "all checks passed");
  }
  return worst;
}
