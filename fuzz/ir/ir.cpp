//===- ir.cpp - Fuzz the parser, verifiers and passes on mutated IR -------===//
//
// Part of the qtrain project.
//
// The input is MLIR text (seeds: every .mlir of test/ and examples/, split
// at "// -----"). It is parsed with every dialect qtrain registers and
// verified; if that succeeds, one qtrain pipeline, chosen by the input's
// length, runs on it. Parse errors, verifier errors and pass failures are
// fine (they are diagnostics); crashes, hangs, leaks and sanitizer reports
// are not.
//
//===----------------------------------------------------------------------===//

#include "qtrain/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

namespace {

/// The front-end pipelines of qtrain-compile, the pieces that lower the
/// qtrain dialect, and the CUDA step's host-code passes; each stops at the
/// first failure.
const char *const kPipelines[] = {
    "qtrain-insert-quant,qtrain-autodiff",
    "qtrain-insert-quant{policy=ldp},qtrain-autodiff,qtrain-form-kernels,"
    "qtrain-materialize-variants{bits=3:4 grad-bits=8},qtrain-integer-kernels",
    "qtrain-insert-quant{policy=static bits=4},qtrain-autodiff,"
    "qtrain-form-kernels,qtrain-materialize-variants{bits=4 grad-bits=8},"
    "qtrain-integer-kernels",
    "qtrain-assign-precision{ratio=1},qtrain-insert-quant{policy=none},"
    "qtrain-insert-rounding,qtrain-autodiff,qtrain-store-saved",
    // CPT with fp8 errors, up to the CUDA step's rewrite of their products.
    "qtrain-insert-quant{policy=static bits=4 grad-format=e5m2},"
    "qtrain-autodiff,qtrain-form-kernels,"
    "qtrain-materialize-variants{bits=4 grad-bits=8},qtrain-integer-kernels,"
    "qtrain-fp8-error-products,qtrain-float-operands",
    "convert-qtrain-to-linalg",
    "qtrain-integer-kernels",
    "qtrain-fp8-error-products,qtrain-float-operands",
    "qtrain-form-kernels,qtrain-materialize-variants",
    // The CUDA step's moves of host code and launches (on any IR).
    "qtrain-scalars-to-device,qtrain-defer-result-reads,"
    "qtrain-merge-launches,qtrain-hoist-argument-reads",
    "canonicalize",
};

DialectRegistry &registry() {
  static DialectRegistry *r = [] {
    auto *reg = new DialectRegistry();
    qtrain::registerAllDialects(*reg);
    qtrain::registerAllPasses();
    return reg;
  }();
  return *r;
}

/// Known crash of MLIR 22.1.8's own parser (fuzz/ir/upstream/): a
/// linalg.transpose whose `permutation =` is not followed by a well-formed
/// integer array. Such inputs are skipped so that the search goes on past
/// it.
bool hitsUpstreamTransposeCrash(const std::string &text) {
  auto space = [&](size_t &i) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' ||
                               text[i] == '\t' || text[i] == '\r'))
      ++i;
  };
  for (size_t at = text.find("permutation"); at != std::string::npos;
       at = text.find("permutation", at + 1)) {
    size_t i = at + 11;
    space(i);
    if (i < text.size() && text[i] == '=')
      ++i;
    space(i);
    if (i >= text.size() || text[i++] != '[')
      return true;
    space(i);
    if (i < text.size() && text[i] == ']')
      continue;
    while (true) {
      space(i);
      if (i < text.size() && text[i] == '-')
        ++i;
      size_t digits = i;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9')
        ++i;
      if (i == digits)
        return true;
      space(i);
      if (i < text.size() && text[i] == ',') {
        ++i;
        continue;
      }
      if (i < text.size() && text[i] == ']')
        break;
      return true;
    }
  }
  return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Inputs past 64 kB only slow the search down.
  if (size > 65536)
    return 0;
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  // Diagnostics are expected; keep them off stderr.
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  std::string text(reinterpret_cast<const char *>(data), size);
  if (hitsUpstreamTransposeCrash(text))
    return 0;
  // QTRAIN_IR_FUZZ_VERBOSE=1: say how far each input got (to check that
  // seeds reach the pipelines).
  static const bool verbose = std::getenv("QTRAIN_IR_FUZZ_VERBOSE");
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module || failed(verify(*module))) {
    if (verbose)
      llvm::errs() << "ir: " << (module ? "does not verify" : "does not parse")
                   << "\n";
    return 0;
  }
  const char *pipeline = kPipelines[size % std::size(kPipelines)];
  PassManager pm(&context);
  if (failed(parsePassPipeline(pipeline, pm, llvm::nulls())))
    __builtin_trap(); // the list above must parse
  bool ran = succeeded(pm.run(*module));
  if (verbose)
    llvm::errs() << "ir: " << pipeline << ": " << (ran ? "ran" : "failed")
                 << "\n";
  return 0;
}
