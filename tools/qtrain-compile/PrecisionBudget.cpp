//===- PrecisionBudget.cpp - qtrain-compile --precision-budget ------------===//
//
// The search for the smallest precision ratio whose step fits a memory
// budget, measured as the peak of the step's buffers.
//
//===----------------------------------------------------------------------===//

#include "PrecisionBudget.h"

#include "qtrain/Pipelines/Pipelines.h"
#include "qtrain/Search/Assignment.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <vector>

using namespace mlir;
namespace rt = ::qtrain::rt;

static void fail(const llvm::Twine &message) {
  llvm::errs() << "qtrain-compile: error: " << message << "\n";
}

/// "6.05 MiB".
static std::string mib(int64_t bytes) {
  return llvm::formatv("{0:F2} MiB", double(bytes) / double(1 << 20)).str();
}

namespace {
/// One choice of the budget search: the first `lowGroups` groups of the
/// order low.
struct BudgetTrial {
  int lowGroups = 0;
  /// The ratio= that makes this choice (the covered share, exact).
  std::string ratio;
  double covered = 0;
  /// The memory model's footprint, as assigned and all high.
  int64_t modelBytes = 0;
  int64_t modelBytesAllHigh = 0;
  /// The measured peak of the step's buffers.
  int64_t peakBytes = 0;
};
} // namespace

std::optional<std::string> searchPrecisionBudget(
    ModuleOp module, StringRef precisionBudget, bool precisionPromotion,
    llvm::function_ref<std::string(const std::string &)> stepPipeline) {
  MLIRContext *context = module.getContext();
  int64_t budgetBytes = 0;
  if (rt::Status s =
          ::qtrain::search::parseByteCount(precisionBudget.str(), budgetBytes);
      s.failed()) {
    fail("--precision-budget: " + s.message());
    return std::nullopt;
  }
  llvm::SmallString<128> reportPath;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "qtrain-precision", "json", reportPath)) {
    fail("cannot create a temporary file: " + ec.message());
    return std::nullopt;
  }
  llvm::FileRemover removeReport(reportPath);
  if (reportPath.str().find_first_of(" {}'\"") != std::string::npos) {
    fail("the temporary file " + reportPath +
         " has spaces, braces or quotes in its path; set TMPDIR");
    return std::nullopt;
  }
  // The group order and sizes, from the first trial's report.
  std::vector<int64_t> orderedIds, orderedElements;
  int64_t totalElements = 0;
  auto runTrial = [&](int lowGroups,
                      const std::string &ratio) -> std::optional<BudgetTrial> {
    OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
    std::string pipeline =
        stepPipeline(" precision-ratio=" + ratio +
                     " precision-report=" + reportPath.str().str());
    PassManager frontend(context);
    if (failed(parsePassPipeline(pipeline, frontend, llvm::errs()))) {
      fail("bad pipeline: " + pipeline);
      return std::nullopt;
    }
    PassManager buffers(context);
    mlir::qtrain::buildCPUBufferPipeline(buffers);
    if (failed(frontend.run(*copy)) || failed(buffers.run(*copy)))
      return std::nullopt;
    FailureOr<int64_t> peak = mlir::qtrain::stepBufferPeak(*copy);
    if (failed(peak))
      return std::nullopt;
    auto text = llvm::MemoryBuffer::getFile(reportPath);
    llvm::Expected<llvm::json::Value> json =
        text ? llvm::json::parse((*text)->getBuffer())
             : llvm::Expected<llvm::json::Value>(
                   llvm::errorCodeToError(text.getError()));
    if (!json) {
      fail("reading the assignment " + reportPath + ": " +
           llvm::toString(json.takeError()));
      return std::nullopt;
    }
    const llvm::json::Object *root = json->getAsObject();
    std::optional<int64_t> low, after, before;
    std::optional<double> covered;
    if (root) {
      low = root->getInteger("low_groups");
      after = root->getInteger("assigned_bytes_after");
      before = root->getInteger("assigned_bytes_before");
      covered = root->getNumber("covered");
    }
    const llvm::json::Array *order =
        root ? root->getArray("group_order") : nullptr;
    const llvm::json::Array *groups = root ? root->getArray("groups") : nullptr;
    if (!low || !after || !before || !covered || !order || !groups ||
        order->size() != groups->size() || *low != lowGroups) {
      fail("the assignment " + reportPath + " is not the one asked for (" +
           std::to_string(lowGroups) + " groups low at ratio=" + ratio + ")");
      return std::nullopt;
    }
    if (orderedElements.empty()) {
      for (const llvm::json::Value &id : *order) {
        std::optional<int64_t> index = id.getAsInteger();
        const llvm::json::Object *group =
            index && *index >= 0 && size_t(*index) < groups->size()
                ? (*groups)[*index].getAsObject()
                : nullptr;
        std::optional<int64_t> elements =
            group ? group->getInteger("elements") : std::nullopt;
        if (!elements || *elements <= 0) {
          fail("the assignment " + reportPath + " has a bad group order");
          return std::nullopt;
        }
        orderedIds.push_back(*index);
        orderedElements.push_back(*elements);
        totalElements += *elements;
      }
    }
    return BudgetTrial{lowGroups, ratio, *covered, *after, *before, *peak};
  };

  std::vector<BudgetTrial> tried;
  std::optional<BudgetTrial> first = runTrial(0, "0");
  if (!first)
    return std::nullopt;
  tried.push_back(*first);
  int numGroups = int(orderedElements.size());
  int64_t chosenElements = 0;
  for (int k = 1; k <= numGroups && tried.back().peakBytes > budgetBytes; ++k) {
    // The covered share of the first k groups, as the search computes it:
    // with it ratio= takes exactly these groups.
    chosenElements += orderedElements[k - 1];
    char ratio[40];
    std::snprintf(ratio, sizeof(ratio), "%.17g",
                  double(chosenElements) / double(totalElements));
    std::optional<BudgetTrial> trial = runTrial(k, ratio);
    if (!trial)
      return std::nullopt;
    tried.push_back(*trial);
  }
  std::string triedText;
  for (const BudgetTrial &t : tried)
    triedText += (triedText.empty() ? "" : ", ") + std::to_string(t.lowGroups) +
                 ": " + mib(t.peakBytes);
  const BudgetTrial &allHigh = tried.front();
  if (tried.back().peakBytes > budgetBytes) {
    const BudgetTrial *least = &tried.front();
    for (const BudgetTrial &t : tried)
      if (t.peakBytes < least->peakBytes)
        least = &t;
    std::string message =
        "--precision-budget=" + precisionBudget.str() + " (" +
        std::to_string(budgetBytes) +
        " bytes) cannot be met: the step's buffers peak at " +
        mib(least->peakBytes) + " at the least (" +
        std::to_string(least->lowGroups) + " of " + std::to_string(numGroups) +
        " groups low, model " + mib(least->modelBytes) +
        "); every group low peaks at " + mib(tried.back().peakBytes) +
        " (model " + mib(tried.back().modelBytes) +
        "); peaks by groups low: " + triedText;
    if (precisionPromotion)
      message += "; with promotion (the default) each low P and Y is "
                 "computed in both formats and its saved codes take the high "
                 "format's 2 bytes, so low groups save little or nothing: "
                 "--precision-promotion=false stores them in 1 byte";
    fail(message);
    return std::nullopt;
  }
  const BudgetTrial &chosen = tried.back();
  char r[32];
  std::snprintf(r, sizeof(r), "%.6g", chosen.covered);
  llvm::outs() << "qtrain-compile: precision budget " << mib(budgetBytes)
               << " (peak of the step's buffers): r = " << r << ", "
               << chosen.lowGroups << " of " << numGroups << " groups low";
  for (int k = 0; k < chosen.lowGroups; ++k)
    llvm::outs() << (k ? ", " : " (") << orderedIds[k];
  llvm::outs() << (chosen.lowGroups ? ")\n" : "\n") << "  model "
               << mib(chosen.modelBytes) << " of tensors (all high "
               << mib(allHigh.modelBytesAllHigh) << "); step buffers peak "
               << mib(chosen.peakBytes) << " (all high "
               << mib(allHigh.peakBytes) << ")\n"
               << "  tried (low groups: peak): " << triedText << "\n";
  return chosen.ratio;
}
