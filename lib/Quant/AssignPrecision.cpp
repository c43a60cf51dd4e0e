//===- AssignPrecision.cpp - Float formats under a memory budget ----------===//
//
// qtrain-assign-precision: builds the memory model of PAPERS.md section 4
// from the forward graph (modules, their outputs and parameters, sized at
// the training batch), runs the search of lib/Search, and writes the chosen
// #qtrain.float formats on every tensor, with a remark per group and an
// optional JSON report.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Quant/Passes.h"

#include "QTrain/QTrainAttrs.h"
#include "qtrain/Search/Assignment.h"

#include "FloatFormatNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Remarks.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

namespace mlir::qtrain {
#define GEN_PASS_DEF_ASSIGNPRECISIONPASS
#include "qtrain/Quant/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;
namespace rt = ::qtrain::rt;
namespace search = ::qtrain::search;

namespace {

/// The memory model of a forward function: the search's modules, and where
/// each lives in the IR.
struct MemoryModel {
  std::vector<search::ModuleSpec> modules;
  /// Per module: the op that computes Y, or null for an input argument.
  SmallVector<Operation *> ops;
  /// Per module: its input argument, for inputs.
  SmallVector<BlockArgument> inputs;
  /// Per module, per ParamSpec: the parameter argument.
  SmallVector<SmallVector<BlockArgument>> params;
};

struct AssignPrecisionPass
    : mlir::qtrain::impl::AssignPrecisionPassBase<AssignPrecisionPass> {
  using AssignPrecisionPassBase::AssignPrecisionPassBase;
  void runOnOperation() override;

private:
  LogicalResult scoreFromProfile(func::FuncOp fn, const MemoryModel &model,
                                 const std::vector<search::Group> &groups,
                                 search::Options &options);
};

} // namespace

static bool isParamArg(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return false;
  auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return fn && fn.getArgAttr(arg.getArgNumber(), kParamAttrName);
}

/// Reshapes and casts: their result is their operand's memory.
static bool isAlias(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ReshapeOp,
             tensor::CastOp>(op);
}

static search::ModuleKind kindOf(Operation *op) {
  if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
    return search::ModuleKind::Linear;
  if (isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNhwcHwcfOp,
          linalg::Conv2DNhwcFhwcOp, linalg::Conv2DNgchwGfchwOp,
          linalg::Conv2DNgchwFgchwOp, linalg::Conv2DNhwgcGfhwcOp,
          linalg::DepthwiseConv2DNchwChwOp, linalg::DepthwiseConv2DNhwcHwcOp>(
          op))
    return search::ModuleKind::Conv;
  return search::ModuleKind::Other;
}

/// The parameters `v` is computed from through ops that read no data (weight
/// transposes, bias broadcasts), in first-seen order.
static void collectParams(Value v, const DenseMap<Value, int> &producer,
                          SetVector<Value> &params,
                          DenseSet<Operation *> &visited) {
  if (isParamArg(v)) {
    params.insert(v);
    return;
  }
  Operation *def = v.getDefiningOp();
  if (!def || !visited.insert(def).second)
    return;
  for (Value operand : def->getOperands())
    if (!producer.count(operand))
      collectParams(operand, producer, params, visited);
}

static FailureOr<MemoryModel> buildModel(func::FuncOp fn) {
  MemoryModel model;
  // Data values and the module whose memory they are.
  DenseMap<Value, int> producer;
  DenseMap<Value, std::pair<int, int>> paramOwner;
  auto numel = [](Type type) -> std::optional<int64_t> {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return std::nullopt;
    return tensor.getNumElements();
  };
  for (BlockArgument arg : fn.getArguments()) {
    if (isParamArg(arg) || !isa<RankedTensorType>(arg.getType()))
      continue;
    std::optional<int64_t> elements = numel(arg.getType());
    if (!elements)
      return fn.emitError("qtrain-assign-precision: input #")
             << arg.getArgNumber() << " has a dynamic shape";
    search::ModuleSpec spec;
    spec.name = "input " + std::to_string(arg.getArgNumber());
    spec.kind = search::ModuleKind::Input;
    spec.outputElements = *elements;
    producer[arg] = int(model.modules.size());
    model.modules.push_back(spec);
    model.ops.push_back(nullptr);
    model.inputs.push_back(arg);
    model.params.emplace_back();
  }
  for (Operation &op : fn.getBody().front()) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    Value firstData;
    for (Value operand : op.getOperands())
      if (producer.count(operand)) {
        firstData = operand;
        break;
      }
    if (!firstData)
      continue; // parameters, constants and shapes only
    if (isAlias(&op)) {
      producer[op.getResult(0)] = producer[firstData];
      continue;
    }
    if (op.getNumResults() != 1)
      return op.emitError("qtrain-assign-precision: an op with ")
             << op.getNumResults()
             << " results reads data; the memory model needs one output "
                "tensor per module";
    std::optional<int64_t> elements = numel(op.getResult(0).getType());
    if (!elements)
      return op.emitError("qtrain-assign-precision: the output is not a "
                          "statically shaped tensor: ")
             << op.getResult(0).getType();
    search::ModuleSpec spec;
    spec.name = describeOp(&op);
    spec.kind = kindOf(&op);
    spec.predecessor = producer[firstData];
    spec.outputElements = *elements;
    int index = int(model.modules.size());
    SetVector<Value> params;
    DenseSet<Operation *> visited;
    for (Value operand : op.getOperands())
      if (!producer.count(operand))
        collectParams(operand, producer, params, visited);
    SmallVector<BlockArgument> args;
    for (Value param : params) {
      // A parameter read by several modules (tied weights) is one tensor:
      // it is counted, and formatted, with its first reader.
      if (paramOwner.count(param))
        continue;
      auto arg = cast<BlockArgument>(param);
      std::optional<int64_t> n = numel(arg.getType());
      if (!n)
        return fn.emitError("qtrain-assign-precision: parameter #")
               << arg.getArgNumber() << " has a dynamic shape";
      paramOwner[param] = {index, int(args.size())};
      spec.params.push_back(
          {"param " + std::to_string(arg.getArgNumber()), *n});
      args.push_back(arg);
    }
    producer[op.getResult(0)] = index;
    model.modules.push_back(spec);
    model.ops.push_back(&op);
    model.inputs.push_back(BlockArgument());
    model.params.push_back(args);
  }
  if (model.modules.empty())
    return fn.emitError("qtrain-assign-precision: @")
           << fn.getSymName() << " has no input tensor";
  return model;
}

/// At most six significant digits, no trailing zeros: "0.5", "0.641509".
static std::string shortDecimal(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

/// "123 B", "4.5 KiB", "6.7 MiB".
static std::string formatBytes(int64_t bytes) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (bytes < 1024)
    os << bytes << " B";
  else if (bytes < 1024 * 1024)
    os << llvm::format("%.1f KiB", bytes / 1024.0);
  else
    os << llvm::format("%.2f MiB", bytes / (1024.0 * 1024.0));
  return out;
}

/// The name qtrain-insert-rounding gives tensor `t` (the manifest's
/// "tensors", and so the overflow profile's), for P and Y; "" otherwise.
static std::string profileName(const MemoryModel &model,
                               const search::TensorRef &t) {
  if (t.cls == search::TensorClass::P)
    return argumentTensorName(
        /*parameter=*/true, model.params[t.module][t.param].getArgNumber());
  if (t.cls != search::TensorClass::Y)
    return "";
  if (!model.ops[t.module])
    return argumentTensorName(/*parameter=*/false,
                              model.inputs[t.module].getArgNumber());
  return outputTensorName(model.ops[t.module]);
}

LogicalResult
AssignPrecisionPass::scoreFromProfile(func::FuncOp fn, const MemoryModel &model,
                                      const std::vector<search::Group> &groups,
                                      search::Options &options) {
  auto fail = [&](const Twine &why) {
    return fn.emitError("qtrain-assign-precision: profile '")
           << profile << "': " << why;
  };
  auto buffer = llvm::MemoryBuffer::getFile(profile);
  if (!buffer)
    return fail(buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail(llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Array *tensors = root ? root->getArray("tensors") : nullptr;
  if (!root || root->getString("format") != "qtrain-overflow-profile" ||
      !tensors)
    return fail("not a qtrain-overflow-profile (qtrain-run "
                "--overflow-profile) with a 'tensors' array");
  llvm::StringMap<double> mean;
  for (const llvm::json::Value &entry : *tensors) {
    const llvm::json::Object *t = entry.getAsObject();
    std::optional<StringRef> name = t ? t->getString("name") : std::nullopt;
    std::optional<double> value = t ? t->getNumber("mean") : std::nullopt;
    if (!name || !value || !(*value >= 0.0))
      return fail("every tensor needs a 'name' and a non-negative 'mean'");
    mean[*name] = *value;
  }
  // A group's risk: the largest mean overflow ratio of its P and Y. Names
  // must tell the tensors apart (two ops on one line would not).
  std::vector<double> risk(groups.size(), 0.0);
  int64_t matched = 0;
  llvm::StringSet<> seen;
  for (const search::Group &group : groups)
    for (const search::TensorRef &t : group.tensors) {
      std::string name = profileName(model, t);
      if (!name.empty() && !seen.insert(name).second)
        return fail("two tensors of this graph have the name '" + name +
                    "' (ops on one line); a profile cannot tell them apart");
      auto it = mean.find(name);
      if (it == mean.end())
        continue;
      ++matched;
      risk[group.id] = std::max(risk[group.id], it->second);
    }
  if (matched == 0)
    return fail("names none of this graph's P or Y tensors; profile a "
                "bundle compiled from the same graph with --precision-ratio=1");
  search::Assignment allLow;
  search::Options plain;
  if (rt::Status s = search::assignByRatio(groups, 1.0, plain, allLow);
      s.failed())
    return fail(s.message());
  std::vector<int64_t> saved;
  for (const search::Group &group : groups)
    saved.push_back(allLow.groupBitsBefore[group.id] -
                    allLow.groupBitsAfter[group.id]);
  if (rt::Status s =
          search::profiledScores(saved, risk, tolerance, options.scores);
      s.failed())
    return fail(s.message());
  for (const search::Group &group : groups)
    remark::analysis(fn.getLoc(), remark::RemarkOpts::name("profile-score")
                                      .category(getArgument())
                                      .function(fn.getSymName()))
        << ("group " + Twine(group.id) + ": saves " +
            formatBytes(search::bitsToBytes(saved[group.id])) +
            " when low, profiled overflow ratio " +
            shortDecimal(risk[group.id]) + ", score " +
            shortDecimal(options.scores[group.id]))
               .str();
  return success();
}

void AssignPrecisionPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  auto fn = module.lookupSymbol<func::FuncOp>(forward);
  if (!fn || fn.isExternal()) {
    module.emitError("qtrain-assign-precision: no function @") << forward;
    return signalPassFailure();
  }
  bool hasRatio = ratio >= 0.0;
  if (hasRatio == !budget.empty()) {
    fn.emitError("qtrain-assign-precision: give exactly one of ratio=R (in "
                 "[0, 1]) and budget=BYTES");
    return signalPassFailure();
  }
  std::optional<int64_t> budgetBytes;
  if (!hasRatio) {
    int64_t bytes = 0;
    if (rt::Status s = search::parseByteCount(budget, bytes); s.failed()) {
      fn.emitError("qtrain-assign-precision: budget ") << s.message();
      return signalPassFailure();
    }
    budgetBytes = bytes;
  }
  search::Options options;
  options.seed = seed;
  options.scores.assign(scores.begin(), scores.end());
  bool profiled = order == "profiled";
  if (profiled != !profile.empty()) {
    fn.emitError("qtrain-assign-precision: order=profiled and profile=FILE "
                 "come together");
    return signalPassFailure();
  }
  if (rt::Status s = search::parseOrder(profiled ? "scored" : order.getValue(),
                                        options.order);
      s.failed()) {
    fn.emitError("qtrain-assign-precision: ")
        << s.message() << " (or profiled)";
    return signalPassFailure();
  }

  FailureOr<MemoryModel> model = buildModel(fn);
  if (failed(model))
    return signalPassFailure();
  std::vector<search::Group> groups;
  if (rt::Status s = search::formGroups(model->modules, groups); s.failed()) {
    fn.emitError("qtrain-assign-precision: ") << s.message();
    return signalPassFailure();
  }
  if (profiled && failed(scoreFromProfile(fn, *model, groups, options)))
    return signalPassFailure();
  search::Assignment result;
  rt::Status status =
      hasRatio ? search::assignByRatio(groups, ratio, options, result)
               : search::assignByBudget(groups, *budgetBytes, options, result);
  if (status.failed()) {
    fn.emitError("qtrain-assign-precision: ") << status.message();
    return signalPassFailure();
  }
  numLowGroups = result.numLow;

  // Annotate every tensor; P and Y saturate, GY and GP may overflow.
  Builder b(ctx);
  auto formatFor = [&](int group, search::TensorClass cls) {
    bool saturate =
        cls == search::TensorClass::P || cls == search::TensorClass::Y;
    return toFormatAttr(ctx, result.formatOf(group, cls), saturate);
  };
  SmallVector<SmallVector<std::string>> groupModules(groups.size());
  for (const search::Group &group : groups)
    for (const search::TensorRef &t : group.tensors) {
      int m = t.module;
      if (t.cls == search::TensorClass::Y) {
        groupModules[group.id].push_back(model->modules[m].name);
        auto formats = b.getDictionaryAttr(
            {b.getNamedAttr("y", formatFor(group.id, search::TensorClass::Y)),
             b.getNamedAttr("gy",
                            formatFor(group.id, search::TensorClass::GY))});
        if (Operation *op = model->ops[m]) {
          op->setAttr(kFormatsAttrName, formats);
          op->setAttr(kGroupAttrName, b.getI64IntegerAttr(group.id));
        } else {
          unsigned arg = model->inputs[m].getArgNumber();
          fn.setArgAttr(arg, kFormatsAttrName, formats);
          fn.setArgAttr(arg, kGroupAttrName, b.getI64IntegerAttr(group.id));
        }
      } else if (t.cls == search::TensorClass::P) {
        unsigned arg = model->params[m][t.param].getArgNumber();
        fn.setArgAttr(
            arg, kFormatsAttrName,
            b.getDictionaryAttr(
                {b.getNamedAttr("p",
                                formatFor(group.id, search::TensorClass::P)),
                 b.getNamedAttr(
                     "gp", formatFor(group.id, search::TensorClass::GP))}));
        fn.setArgAttr(arg, kGroupAttrName, b.getI64IntegerAttr(group.id));
      }
    }

  // Remarks: one per group, on the op that starts it, and a summary.
  int64_t total = 0;
  for (const search::Group &group : groups)
    total += group.elements;
  for (const search::Group &group : groups) {
    int first = group.tensors.front().module;
    for (const search::TensorRef &t : group.tensors)
      if (t.cls == search::TensorClass::Y) {
        first = t.module;
        break;
      }
    Location loc = model->ops[first] ? model->ops[first]->getLoc()
                                     : model->inputs[first].getLoc();
    bool low = result.low[group.id];
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "group " << group.id << " ("
       << llvm::join(groupModules[group.id], ", ") << "): " << group.elements
       << " elements ("
       << llvm::formatv("{0:f3}", double(group.elements) / double(total)).str()
       << " of all), "
       << formatBytes(search::bitsToBytes(result.groupBitsBefore[group.id]))
       << " -> "
       << formatBytes(search::bitsToBytes(result.groupBitsAfter[group.id]))
       << ", " << (low ? "low" : "high") << ": P, Y "
       << formatFor(group.id, search::TensorClass::Y) << ", GY "
       << formatFor(group.id, search::TensorClass::GY) << ", GP "
       << formatFor(group.id, search::TensorClass::GP);
    // A low group is the optimization applied, a high one the opportunity
    // left (remark filters select them by kind).
    auto opts = remark::RemarkOpts::name(low ? "group-low" : "group-high")
                    .category(getArgument())
                    .function(fn.getSymName());
    if (low)
      remark::passed(loc, opts) << text;
    else
      remark::missed(loc, opts) << text;
  }
  remark::analysis(fn.getLoc(), remark::RemarkOpts::name("assignment")
                                    .category(getArgument())
                                    .function(fn.getSymName()))
      << llvm::formatv(
             "qtrain-assign-precision: order {0}, r = {1}: {2} of "
             "{3} groups low (covering {4:f4} of the elements); "
             "tensor memory {5} -> {6} ({7:f3}x)",
             order.getValue(), shortDecimal(result.ratio), result.numLow,
             groups.size(), result.covered, formatBytes(result.bytesBefore()),
             formatBytes(result.bytesAfter()),
             double(result.bytesAfter()) / double(result.bytesBefore()))
             .str();

  if (report.empty())
    return;
  // Master weights and the momentum buffer: fp32, outside the assignment.
  int64_t paramElements = 0;
  for (const search::ModuleSpec &m : model->modules)
    for (const search::ParamSpec &p : m.params)
      paramElements += p.elements;
  llvm::json::Array groupArray;
  for (const search::Group &group : groups) {
    llvm::json::Array tensors;
    for (const search::TensorRef &t : group.tensors) {
      std::string format;
      llvm::raw_string_ostream os(format);
      os << formatFor(group.id, t.cls);
      llvm::json::Object tensor{{"module", model->modules[t.module].name},
                                {"class", search::toString(t.cls)},
                                {"elements", t.elements},
                                {"format", format}};
      if (t.param >= 0)
        tensor["param"] = model->modules[t.module].params[t.param].name;
      tensors.push_back(std::move(tensor));
    }
    llvm::json::Array modules;
    for (const std::string &name : groupModules[group.id])
      modules.push_back(name);
    groupArray.push_back(llvm::json::Object{
        {"id", group.id},
        {"modules", std::move(modules)},
        {"elements", group.elements},
        {"ratio", double(group.elements) / double(total)},
        {"low", bool(result.low[group.id])},
        {"bytes_before", search::bitsToBytes(result.groupBitsBefore[group.id])},
        {"bytes_after", search::bitsToBytes(result.groupBitsAfter[group.id])},
        {"tensors", std::move(tensors)}});
  }
  llvm::json::Array orderArray;
  for (int id : result.order)
    orderArray.push_back(id);
  llvm::json::Object root{{"format", "qtrain-precision-assignment"},
                          {"version", 1},
                          {"function", fn.getSymName()},
                          {"order", order},
                          {"ratio", result.ratio},
                          {"covered", result.covered},
                          {"low_groups", result.numLow},
                          {"group_order", std::move(orderArray)},
                          {"assigned_bytes_before", result.bytesBefore()},
                          {"assigned_bytes_after", result.bytesAfter()},
                          {"master_weight_bytes", 4 * paramElements},
                          {"optimizer_state_bytes", 4 * paramElements},
                          {"groups", std::move(groupArray)}};
  if (budgetBytes)
    root["budget_bytes"] = *budgetBytes;
  std::error_code ec;
  llvm::raw_fd_ostream os(report, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    fn.emitError("qtrain-assign-precision: cannot write the report '")
        << report << "': " << ec.message();
    return signalPassFailure();
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}
