//===- QTrainDialect.cpp - The qtrain dialect -------------------*- C++ -*-===//
//
// Registers the qtrain attributes and ops and verifies the discardable
// attributes the dialect owns (qtrain.schedule, qtrain.param, qtrain.role).
//
//===----------------------------------------------------------------------===//

#include "QTrain/QTrainDialect.h"
#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::qtrain;

#include "QTrain/QTrainDialect.cpp.inc"

void QTrainDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "QTrain/QTrainOps.cpp.inc"
      >();
}

std::string mlir::qtrain::verifyFormatsAttr(Attribute attr) {
  auto dict = dyn_cast<DictionaryAttr>(attr);
  if (!dict)
    return "must be a dictionary";
  for (NamedAttribute entry : dict) {
    if (!llvm::is_contained({"y", "gy", "p", "gp"}, entry.getName().getValue()))
      return "has an unknown key '" + entry.getName().str() +
             "' (keys are y, gy, p and gp)";
    if (!isa<FloatFormatAttr>(entry.getValue()))
      return "entry '" + entry.getName().str() + "' must be a #qtrain.float";
  }
  return "";
}

/// qtrain.formats and qtrain.group, on ops and arguments alike.
static std::optional<LogicalResult> verifyFormatAttrs(Operation *op,
                                                      NamedAttribute attr) {
  if (attr.getName() == kFormatsAttrName) {
    std::string why = verifyFormatsAttr(attr.getValue());
    if (why.empty())
      return success();
    return op->emitError() << "'" << kFormatsAttrName << "' " << why << ", got "
                           << attr.getValue();
  }
  if (attr.getName() == kGroupAttrName) {
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    if (index && index.getType().isInteger(64) && index.getInt() >= 0)
      return success();
    return op->emitError() << "'" << kGroupAttrName
                           << "' must be a non-negative i64, got "
                           << attr.getValue();
  }
  return std::nullopt;
}

LogicalResult QTrainDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  if (std::optional<LogicalResult> result = verifyFormatAttrs(op, attr))
    return *result;
  if (attr.getName() == kScheduleAttrName ||
      attr.getName() == kGradScheduleAttrName) {
    if (isScheduleAttr(attr.getValue()))
      return success();
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' must be a precision schedule "
                              "(#qtrain.cyclic, #qtrain.static or "
                              "#qtrain.learned), got "
                           << attr.getValue();
  }
  if (attr.getName() == kGradFormatAttrName) {
    auto format = dyn_cast<StringAttr>(attr.getValue());
    if (format && format.getValue() == "e5m2" && isa<ModuleOp>(op))
      return success();
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' must be \"e5m2\" on a module, got "
                           << attr.getValue();
  }
  // On an op, a role is the role of its results.
  if (attr.getName() == kRoleAttrName) {
    if (isa<RoleAttr>(attr.getValue()))
      return success();
    return op->emitError() << "'" << kRoleAttrName
                           << "' must be a #qtrain.role, got "
                           << attr.getValue();
  }
  if (attr.getName() == getVariantAttrHelper().getName()) {
    if (isa<VariantAttr>(attr.getValue()))
      return success();
    return op->emitError() << "'" << VariantAttrHelper::getNameStr()
                           << "' must be a #qtrain.variant, got "
                           << attr.getValue();
  }
  if (attr.getName() == kSitesAttrName) {
    if (isa<ArrayAttr>(attr.getValue()))
      return success();
    return op->emitError() << "'" << kSitesAttrName
                           << "' must be an array, got " << attr.getValue();
  }
  if (attr.getName() == kGemmAttrName) {
    auto gemm = dyn_cast<DictionaryAttr>(attr.getValue());
    auto positive = [&](StringRef key) {
      auto v = gemm.getAs<IntegerAttr>(key);
      return v && v.getInt() > 0;
    };
    auto dims = [&](StringRef key) {
      auto list = gemm.getAs<ArrayAttr>(key);
      return list && list.size() == 3 && llvm::all_of(list, [](Attribute d) {
               auto v = dyn_cast<IntegerAttr>(d);
               return v && v.getInt() > 0;
             });
    };
    if (gemm &&
        llvm::all_of(
            std::initializer_list<StringRef>{"kind", "a", "b", "c"},
            [&](StringRef key) { return gemm.getAs<StringAttr>(key); }) &&
        llvm::all_of(std::initializer_list<StringRef>{"batch", "m", "n", "k"},
                     positive) &&
        dims("grid") && dims("block"))
      return success();
    return op->emitError() << "'" << kGemmAttrName
                           << "' must be a dictionary of kind, a, b, c "
                              "(strings), batch, m, n, k (positive integers) "
                              "and grid, block (three positive integers), got "
                           << attr.getValue();
  }
  if (attr.getName() == kDecodeAttrName) {
    if (isa<UnitAttr>(attr.getValue()))
      return success();
    return op->emitError() << "'" << kDecodeAttrName
                           << "' must be a unit attribute";
  }
  if (attr.getName() == kLayerAttrName) {
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    if (index && index.getType().isInteger(64) && index.getInt() >= 0)
      return success();
    return op->emitError() << "'" << kLayerAttrName
                           << "' must be a non-negative i64, got "
                           << attr.getValue();
  }
  if (attr.getName() == kProductAttrName) {
    auto product = dyn_cast<StringAttr>(attr.getValue());
    if (product && symbolizeProductKind(product.getValue()))
      return success();
    return op->emitError() << "'" << kProductAttrName
                           << "' must be \"forward\", \"input_grad\" or "
                              "\"weight_grad\", got "
                           << attr.getValue();
  }
  if (attr.getName() == getCodeBitsAttrHelper().getName()) {
    auto bits = dyn_cast<DenseI32ArrayAttr>(attr.getValue());
    if (bits && bits.size() == 2 &&
        llvm::all_of(bits.asArrayRef(),
                     [](int32_t b) { return b >= 1 && b <= 16; }))
      return success();
    return op->emitError() << "'" << CodeBitsAttrHelper::getNameStr()
                           << "' must be array<i32: a, b> with 1 <= a, b <= "
                              "16, got "
                           << attr.getValue();
  }
  if (attr.getName() == getBf16OperandsAttrHelper().getName()) {
    if (isa<UnitAttr>(attr.getValue()))
      return success();
    return op->emitError() << "'" << Bf16OperandsAttrHelper::getNameStr()
                           << "' must be a unit attribute";
  }
  if (attr.getName() == getFloatOperandsAttrHelper().getName()) {
    auto formats = dyn_cast<ArrayAttr>(attr.getValue());
    if (formats && formats.size() == 2 &&
        llvm::all_of(formats, llvm::IsaPred<FloatFormatAttr>))
      return success();
    return op->emitError() << "'" << FloatOperandsAttrHelper::getNameStr()
                           << "' must be an array of two #qtrain.float, got "
                           << attr.getValue();
  }
  if (attr.getName() == kDropoutAttrName) {
    auto p = dyn_cast<FloatAttr>(attr.getValue());
    if (p && p.getValueAsDouble() >= 0.0 && p.getValueAsDouble() < 1.0)
      return success();
    return op->emitError() << "'" << kDropoutAttrName
                           << "' must be a probability in [0, 1), got "
                           << attr.getValue();
  }
  return op->emitError() << "unknown qtrain attribute '"
                         << attr.getName().getValue() << "' on an operation";
}

/// Whether `name` may name a parameter: a bundle file name, params/NAME.bin.
static bool isParameterName(StringRef name) {
  return !name.empty() && name.size() <= 200 && name.front() != '.' &&
         llvm::all_of(name, [](char c) {
           return llvm::isAlnum(c) || c == '_' || c == '.' || c == '-';
         });
}

/// Checks the argument and result attributes the dialect defines.
static LogicalResult verifyValueAttribute(Operation *op, NamedAttribute attr,
                                          bool isArgument) {
  if (std::optional<LogicalResult> result = verifyFormatAttrs(op, attr);
      isArgument && result)
    return *result;
  if (isArgument && attr.getName() == kParamAttrName) {
    if (isa<UnitAttr>(attr.getValue()))
      return success();
    return op->emitError() << "'" << kParamAttrName
                           << "' must be a unit attribute";
  }
  if (attr.getName() == kRoleAttrName) {
    if (isa<RoleAttr>(attr.getValue()))
      return success();
    return op->emitError() << "'" << kRoleAttrName
                           << "' must be a #qtrain.role, got "
                           << attr.getValue();
  }
  if (isArgument && attr.getName() == kNameAttrName) {
    auto name = dyn_cast<StringAttr>(attr.getValue());
    if (name && isParameterName(name.getValue()))
      return success();
    return op->emitError() << "'" << kNameAttrName
                           << "' must be a string of letters, digits, '_', "
                              "'.' and '-' that does not start with '.' (a "
                              "file name), got "
                           << attr.getValue();
  }
  if (attr.getName() == kStateAttrName) {
    auto kind = dyn_cast<StringAttr>(attr.getValue());
    if (kind &&
        llvm::is_contained({"ema", "loss_scale", "promotion", "overflow",
                            "ldp_lambda", "bn_mean", "bn_var"},
                           kind.getValue()))
      return success();
    return op->emitError() << "'" << kStateAttrName
                           << "' must be \"ema\", \"loss_scale\", "
                              "\"promotion\", \"overflow\", "
                              "\"ldp_lambda\", \"bn_mean\" or \"bn_var\", got "
                           << attr.getValue();
  }
  if (isArgument && attr.getName() == kFreshInitAttrName) {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    auto kind = dict ? dict.getAs<StringAttr>("kind") : StringAttr();
    auto fanIn = dict ? dict.getAs<IntegerAttr>("fan_in") : IntegerAttr();
    bool bounded =
        kind && llvm::is_contained({"kaiming_uniform", "bias_uniform"},
                                   kind.getValue());
    if (dict && dict.size() == 2 && kind && fanIn &&
        fanIn.getType().isInteger(64) &&
        (bounded ? fanIn.getInt() > 0
                 : fanIn.getInt() >= 0 &&
                       llvm::is_contained({"ones", "zeros", "normal"},
                                          kind.getValue())))
      return success();
    return op->emitError() << "'" << kFreshInitAttrName
                           << "' must be {kind = \"kaiming_uniform\" | "
                              "\"bias_uniform\" | \"ones\" | \"zeros\" | "
                              "\"normal\", "
                              "fan_in = N : i64} with N > 0 for the uniform "
                              "kinds, got "
                           << attr.getValue();
  }
  if (isArgument && attr.getName() == kPrecisionAttrName) {
    auto site = dyn_cast<IntegerAttr>(attr.getValue());
    if (site && site.getType().isInteger(64) && site.getInt() >= 0)
      return success();
    return op->emitError() << "'" << kPrecisionAttrName
                           << "' must be a non-negative i64 (the layer), got "
                           << attr.getValue();
  }
  if (!isArgument && attr.getName() == kLossTermAttrName) {
    if (isa<UnitAttr>(attr.getValue()))
      return success();
    return op->emitError() << "'" << kLossTermAttrName
                           << "' must be a unit attribute";
  }
  if (attr.getName() == kTensorsAttrName) {
    auto names = dyn_cast<ArrayAttr>(attr.getValue());
    if (names && llvm::all_of(names, llvm::IsaPred<StringAttr>))
      return success();
    return op->emitError() << "'" << kTensorsAttrName
                           << "' must be an array of strings, got "
                           << attr.getValue();
  }
  if (isArgument && attr.getName() == kHostVisibleAttrName) {
    if (isa<UnitAttr>(attr.getValue()))
      return success();
    return op->emitError() << "'" << kHostVisibleAttrName
                           << "' must be a unit attribute";
  }
  if (isArgument && attr.getName() == kControlAttrName) {
    auto name = dyn_cast<StringAttr>(attr.getValue());
    if (name &&
        llvm::is_contained({"bits", "grad_bits", "seed", "step", "slots"},
                           name.getValue()))
      return success();
    return op->emitError() << "'" << kControlAttrName
                           << "' must be \"bits\", \"grad_bits\", \"seed\", "
                              "\"step\" or \"slots\", got "
                           << attr.getValue();
  }
  return op->emitError() << "unknown qtrain attribute '"
                         << attr.getName().getValue() << "' on a "
                         << (isArgument ? "region argument" : "result");
}

/// Checks `qtrain.init`, the initial value of a parameter: elements of the
/// argument's type.
static LogicalResult verifyInitAttribute(Operation *op, unsigned regionIndex,
                                         unsigned argIndex,
                                         NamedAttribute attr) {
  Type argType;
  if (auto fn = dyn_cast<FunctionOpInterface>(op))
    argType = fn.getArgumentTypes()[argIndex];
  else if (!op->getRegion(regionIndex).empty())
    argType = op->getRegion(regionIndex).getArgument(argIndex).getType();
  auto init = dyn_cast<ElementsAttr>(attr.getValue());
  if (init && init.getType() == argType)
    return success();
  return op->emitError() << "'" << kInitAttrName
                         << "' must be an elements attribute of the "
                            "argument's type "
                         << argType << ", got " << attr.getValue();
}

LogicalResult QTrainDialect::verifyRegionArgAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned argIndex,
                                                      NamedAttribute attr) {
  if (attr.getName() == kInitAttrName)
    return verifyInitAttribute(op, regionIndex, argIndex, attr);
  return verifyValueAttribute(op, attr, /*isArgument=*/true);
}

LogicalResult QTrainDialect::verifyRegionResultAttribute(Operation *op,
                                                         unsigned regionIndex,
                                                         unsigned resultIndex,
                                                         NamedAttribute attr) {
  return verifyValueAttribute(op, attr, /*isArgument=*/false);
}
