//===- PrecisionBudget.h - qtrain-compile --precision-budget ----*- C++ -*-===//
//
// The budget search of qtrain-compile (docs/precision.md).
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_TOOLS_QTRAIN_COMPILE_PRECISIONBUDGET_H
#define QTRAIN_TOOLS_QTRAIN_COMPILE_PRECISIONBUDGET_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>

/// --precision-budget: the smallest r whose step fits the budget, measured
/// as the peak of the step's buffers (stepBufferPeak), not only as the
/// memory model's footprint. The choices are the prefixes of the group
/// order (as for qtrain-assign-precision's budget=); each is compiled to
/// buffers and measured, from none low upward, and the first that fits is
/// taken, so a step with low groups is chosen only if all high does not
/// fit: promotion (`precisionPromotion`), which can make low groups cost
/// more than they save, never makes the step larger than all high.
/// `stepPipeline` gives the qtrain-step pipeline text with extra options
/// (precision-ratio=, precision-report=) appended. Prints the choice;
/// returns the precision-ratio= value that makes it, or nothing after an
/// error.
std::optional<std::string> searchPrecisionBudget(
    mlir::ModuleOp module, llvm::StringRef precisionBudget,
    bool precisionPromotion,
    llvm::function_ref<std::string(const std::string &)> stepPipeline);

#endif // QTRAIN_TOOLS_QTRAIN_COMPILE_PRECISIONBUDGET_H
