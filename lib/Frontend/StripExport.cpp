//===- StripExport.cpp - Remove an exporter's additions ---------*- C++ -*-===//
//
// qtrain-strip-export: the ml_program globals and cf.asserts an exporter
// puts around the forward graph are folded, dropped or refused, and the
// entry point is named @forward (docs/passes/strip-export.md).
//
//===----------------------------------------------------------------------===//

#include "qtrain/Frontend/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Remarks.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_STRIPEXPORTPASS
#include "qtrain/Frontend/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

/// How many ops a condition may be computed through before it counts as
/// not constant.
static constexpr unsigned kMaxFoldDepth = 32;

namespace {

struct StripExportPass
    : mlir::qtrain::impl::StripExportPassBase<StripExportPass> {
  using StripExportPassBase::StripExportPassBase;
  void runOnOperation() override;

private:
  LogicalResult nameEntryPoint(ModuleOp module, SymbolTable &symbols);
  LogicalResult stripGlobals(ModuleOp module);
  LogicalResult stripAsserts(ModuleOp module);

  remark::RemarkOpts remarkOpts(StringRef name) {
    return remark::RemarkOpts::name(name).category(getArgument());
  }
};

} // namespace

/// The constant `value` folds to, computing it through ops whose operands
/// all fold (`arith.cmpi` of two constants, `arith.xori` with true, ...),
/// or null.
static Attribute foldToConstant(Value value, unsigned depth = 0) {
  Attribute attr;
  if (matchPattern(value, m_Constant(&attr)))
    return attr;
  Operation *def = value.getDefiningOp();
  if (!def || depth > kMaxFoldDepth || def->getNumRegions() != 0)
    return {};
  SmallVector<Attribute> operands;
  for (Value operand : def->getOperands()) {
    Attribute folded = foldToConstant(operand, depth + 1);
    if (!folded)
      return {};
    operands.push_back(folded);
  }
  SmallVector<OpFoldResult> results;
  if (failed(def->fold(operands, results)) ||
      results.size() != def->getNumResults())
    return {};
  return dyn_cast<Attribute>(results[cast<OpResult>(value).getResultNumber()]);
}

/// Erases `op` and then the ops that computed its operands, as far as
/// nothing else uses them.
static void eraseWithDeadOperands(Operation *op) {
  SmallVector<Operation *> worklist{op};
  while (!worklist.empty()) {
    Operation *dead = worklist.pop_back_val();
    SmallVector<Operation *> defs;
    for (Value operand : dead->getOperands())
      if (Operation *def = operand.getDefiningOp())
        defs.push_back(def);
    dead->erase();
    for (Operation *def : defs)
      if (!llvm::is_contained(worklist, def) && isOpTriviallyDead(def))
        worklist.push_back(def);
  }
}

LogicalResult StripExportPass::nameEntryPoint(ModuleOp module,
                                              SymbolTable &symbols) {
  if (symbols.lookup(forward))
    return success();
  SmallVector<func::FuncOp> entries;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn.isPublic() && !fn.isExternal())
      entries.push_back(fn);
  // Nothing to choose from, or a choice to leave to the user (forward=).
  if (entries.size() != 1)
    return success();
  func::FuncOp entry = entries.front();
  std::string old = entry.getSymName().str();
  if (failed(symbols.rename(entry, forward)))
    return entry.emitError("qtrain-strip-export: cannot rename @")
           << old << " to @" << forward;
  remark::passed(entry.getLoc(), remarkOpts("entry-point").function(forward))
      << "renamed the entry point @" + old + " to @" + forward;
  return success();
}

LogicalResult StripExportPass::stripGlobals(ModuleOp module) {
  for (auto global :
       llvm::make_early_inc_range(module.getOps<ml_program::GlobalOp>())) {
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(global, module);
    if (!uses)
      return global.emitError("qtrain-strip-export: cannot find the uses of "
                              "ml_program.global @")
             << global.getSymName();
    StringRef name = global.getSymName();
    if (uses->empty()) {
      remark::passed(global.getLoc(), remarkOpts("dropped-global"))
          << ("dropped ml_program.global @" + name + ", which nothing uses")
                 .str();
      global.erase();
      continue;
    }
    SmallVector<Operation *> loads;
    for (const SymbolTable::SymbolUse &use : *uses) {
      Operation *user = use.getUser();
      if (!isa<ml_program::GlobalLoadOp, ml_program::GlobalLoadConstOp>(user))
        return user->emitError("qtrain-strip-export: '")
               << user->getName() << "' on ml_program.global @" << name
               << " is not supported: a training step keeps no global "
                  "state (only loads of an immutable global are folded)";
      if (global.getIsMutable())
        return user->emitError("qtrain-strip-export: this reads the "
                               "mutable ml_program.global @")
               << name
               << ", which is not supported: a training step keeps no "
                  "global state (only immutable globals are folded)";
      auto value = dyn_cast_or_null<TypedAttr>(global.getValueAttr());
      if (!value || value.getType() != user->getResult(0).getType() ||
          !arith::ConstantOp::isBuildableWith(value, value.getType()))
        return user->emitError("qtrain-strip-export: ml_program.global @")
               << name << " has no value of type "
               << user->getResult(0).getType()
               << " to fold this load into (an extern or undefined global)";
      loads.push_back(user);
    }
    for (Operation *load : loads) {
      OpBuilder b(load);
      auto value = cast<TypedAttr>(global.getValueAttr());
      Value cst = arith::ConstantOp::create(b, load->getLoc(), value);
      load->getResult(0).replaceAllUsesWith(cst);
      load->erase();
    }
    remark::passed(global.getLoc(), remarkOpts("folded-global"))
        << ("folded ml_program.global @" + name + " into " +
            Twine(loads.size()) + " constant" + (loads.size() == 1 ? "" : "s"))
               .str();
    global.erase();
  }
  return success();
}

LogicalResult StripExportPass::stripAsserts(ModuleOp module) {
  SmallVector<cf::AssertOp> asserts;
  module.walk([&](cf::AssertOp op) { asserts.push_back(op); });
  for (cf::AssertOp op : asserts) {
    auto fn = op->getParentOfType<func::FuncOp>();
    StringRef fnName = fn ? fn.getSymName() : StringRef();
    Attribute folded = foldToConstant(op.getArg());
    auto condition = dyn_cast_or_null<IntegerAttr>(folded);
    if (condition && condition.getValue().isZero())
      return op.emitError("qtrain-strip-export: this cf.assert always fails: "
                          "\"")
             << op.getMsg() << "\"";
    if (!condition)
      remark::passed(op.getLoc(), remarkOpts("dropped-assert").function(fnName))
          << ("dropped cf.assert \"" + op.getMsg() +
              "\": its condition is not a constant, and a training step "
              "cannot raise")
                 .str();
    eraseWithDeadOperands(op);
  }
  return success();
}

void StripExportPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  if (failed(nameEntryPoint(module, symbols)) || failed(stripGlobals(module)) ||
      failed(stripAsserts(module)))
    return signalPassFailure();
}
