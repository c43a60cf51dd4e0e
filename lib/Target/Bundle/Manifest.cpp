//===- Manifest.cpp - The bundle manifest -----------------------*- C++ -*-===//
//
// Reads the step's interface from a materialized training module and writes
// manifest.json (docs/bundle.md).
//
//===----------------------------------------------------------------------===//

#include "qtrain/Target/Bundle/Bundle.h"

#include "QTrain/QTrainDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::qtrain;

static TensorInfo tensorInfo(Type type, std::string name) {
  TensorInfo info;
  info.name = std::move(name);
  auto tensor = cast<RankedTensorType>(type);
  info.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  info.dtype = tensor.getElementType().isF32() ? "f32" : "i64";
  return info;
}

/// The raw bytes of an initial value (a splat repeated to every element),
/// or failure when a blob's data is not available.
static FailureOr<std::vector<char>> rawData(Attribute init) {
  if (auto blob = dyn_cast<DenseResourceElementsAttr>(init)) {
    AsmResourceBlob *data = blob.getRawHandle().getBlob();
    if (!data)
      return failure();
    return std::vector<char>(data->getData().begin(), data->getData().end());
  }
  auto dense = dyn_cast<DenseElementsAttr>(init);
  if (!dense)
    return failure();
  ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat())
    return std::vector<char>(raw.begin(), raw.end());
  std::vector<char> bytes;
  for (int64_t i = 0, e = dense.getNumElements(); i < e; ++i)
    bytes.insert(bytes.end(), raw.begin(), raw.end());
  return bytes;
}

/// How the forward graph uses a rank-1 parameter: a bias broadcast into a
/// layer (its body yields the value) starts like PyTorch's bias; one that
/// scales (multiplies) starts at 1 and one that shifts (adds) at 0, as
/// PyTorch's normalization layers.
static StringRef vectorInit(Value param) {
  bool scales = false, shifts = false;
  for (OpOperand &use : param.getUses()) {
    auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!generic || use.getOperandNumber() >= generic.getNumDpsInputs())
      continue;
    BlockArgument arg = generic.getMatchingBlockArgument(&use);
    for (Operation *user : arg.getUsers()) {
      scales |= isa<arith::MulFOp, arith::DivFOp>(user);
      shifts |= isa<arith::AddFOp, arith::SubFOp>(user);
    }
  }
  if (scales)
    return "ones";
  if (shifts)
    return "zeros";
  return "bias_uniform";
}

FailureOr<StepInfo> mlir::qtrain::collectStepInfo(ModuleOp module) {
  auto train = module.lookupSymbol<func::FuncOp>("train_step");
  auto eval = module.lookupSymbol<func::FuncOp>("eval_step");
  auto sites = module->getAttrOfType<ArrayAttr>(kSitesAttrName);
  if (!train || !eval || !sites)
    return module.emitError(
        "qtrain-compile: the module needs @train_step, @eval_step and "
        "qtrain.sites (run qtrain-autodiff and qtrain-materialize-variants)");
  StepInfo info;
  auto logits = cast<RankedTensorType>(eval.getResultTypes()[0]);
  info.batch = logits.getDimSize(0);
  info.classes = logits.getDimSize(1);

  int64_t lastFanIn = 1;
  bool sawInput = false;
  // LDP: the precision parameter of each site, by site index.
  std::map<int64_t, std::string> precisionOf;
  for (unsigned i = 0, e = train.getNumArguments(); i < e; ++i) {
    Type type = train.getArgumentTypes()[i];
    if (train.getArgAttr(i, kParamAttrName)) {
      TensorInfo param =
          tensorInfo(type, "param" + std::to_string(info.parameters.size()));
      if (auto site =
              train.getArgAttrOfType<IntegerAttr>(i, kPrecisionAttrName)) {
        param.name = "ldp_site" + std::to_string(site.getInt());
        precisionOf[site.getInt()] = param.name;
      }
      if (Attribute init = train.getArgAttr(i, kInitAttrName)) {
        FailureOr<std::vector<char>> data = rawData(init);
        if (failed(data))
          return train.emitError("qtrain-compile: the initial value of "
                                 "parameter #")
                 << i << " is not available (an elided or missing blob)";
        param.data = std::move(*data);
      }
      if (!param.data.empty()) {
        param.init = "file";
      } else if (param.shape.size() >= 2) {
        param.init = "kaiming_uniform";
        param.fanIn = 1;
        for (size_t d = 1; d < param.shape.size(); ++d)
          param.fanIn *= param.shape[d];
        lastFanIn = param.fanIn;
      } else {
        // A bias: PyTorch bounds it by the fan-in of its layer's weight,
        // which precedes it. Normalization parameters start at 1 or 0.
        // @eval_step has the parameters first, in the same order.
        param.init = vectorInit(eval.getArgument(info.parameters.size())).str();
        param.fanIn = lastFanIn;
      }
      info.parameters.push_back(std::move(param));
      continue;
    }
    if (auto control =
            train.getArgAttrOfType<StringAttr>(i, kControlAttrName)) {
      // The slots are implied by the sites; the manifest lists the scalars.
      if (control.getValue() != "slots")
        info.controls.push_back(control.getValue().str());
      continue;
    }
    if (auto kind = train.getArgAttrOfType<StringAttr>(i, kStateAttrName)) {
      info.state.push_back(
          tensorInfo(type, "state" + std::to_string(info.state.size())));
      info.state.back().kind = kind.getValue().str();
      if (auto names = train.getArgAttrOfType<ArrayAttr>(i, kTensorsAttrName))
        for (auto name : names.getAsValueRange<StringAttr>())
          info.state.back().tensors.push_back(name.str());
      if (auto init =
              train.getArgAttrOfType<DenseElementsAttr>(i, kInitAttrName))
        for (APFloat v : init.getValues<APFloat>())
          info.state.back().initValues.push_back(v.convertToFloat());
      continue;
    }
    // The momentum buffers follow the parameters.
    if (i < 2 * info.parameters.size())
      continue;
    // After the inputs come the labels, then lr, momentum, weight decay.
    unsigned labelsIndex = e - 4;
    if (i == labelsIndex) {
      info.labels = tensorInfo(type, "labels");
      if (info.labels.dtype != "i64")
        return train.emitError("qtrain-compile: bundles need class labels "
                               "(the cross-entropy loss), got ")
               << type;
      continue;
    }
    if (i > labelsIndex)
      continue;
    if (sawInput || !isa<RankedTensorType>(type))
      return train.emitError("qtrain-compile: argument #")
             << i << " of @train_step (" << type
             << ") has no place in the bundle format, which takes one data "
                "input";
    info.input = tensorInfo(type, "x");
    sawInput = true;
  }
  if (!sawInput)
    return train.emitError("qtrain-compile: @train_step has no input batch");

  for (Attribute entry : sites) {
    auto dict = cast<DictionaryAttr>(entry);
    SiteInfo site;
    site.name = cast<StringAttr>(dict.get("name")).str();
    site.op = cast<StringAttr>(dict.get("op")).str();
    site.macs = cast<IntegerAttr>(dict.get("macs")).getInt();
    for (Attribute variant : cast<ArrayAttr>(dict.get("variants"))) {
      auto bits = cast<DenseI32ArrayAttr>(variant).asArrayRef();
      site.precisions.push_back({bits[0], bits[1]});
    }
    site.kernels.resize(site.precisions.size());
    if (auto it = precisionOf.find(int64_t(info.sites.size()));
        it != precisionOf.end())
      site.precision = it->second;
    info.sites.push_back(std::move(site));
  }
  if (!precisionOf.empty() &&
      (precisionOf.rbegin()->first >= int64_t(info.sites.size()) ||
       llvm::any_of(info.sites, [](const SiteInfo &s) {
         // Layers kept in full precision leave placeholder
         // sites that nothing reads.
         return s.precision.empty() && s.op != "unknown";
       })))
    return train.emitError("qtrain-compile: every kernel site of an LDP step "
                           "needs its own learnable precision, and every "
                           "precision parameter a site");

  // The kernel kind of each product of the training step at each precision
  // (qtrain-integer-kernels); a forward variant serves every backward bits.
  QTrainDialect::VariantAttrHelper variantAttr =
      module.getContext()
          ->getOrLoadDialect<QTrainDialect>()
          ->getVariantAttrHelper();
  for (auto fn : module.getOps<func::FuncOp>()) {
    VariantAttr variant = variantAttr.getAttr(fn);
    if (!variant || !fn.getSymName().starts_with("train_step_") ||
        variant.getSite() >= static_cast<int64_t>(info.sites.size()))
      continue;
    SiteInfo &s = info.sites[variant.getSite()];
    bool forward = variant.getProduct() == ProductKind::Forward;
    for (auto [i, p] : llvm::enumerate(s.precisions))
      if (p.first == static_cast<int>(variant.getBits()) &&
          (forward || p.second == static_cast<int>(variant.getGradBits())))
        s.kernels[i][stringifyProductKind(variant.getProduct()).str()] =
            stringifyKernelKind(variant.getKernel().value_or(KernelKind::F32))
                .str();
  }
  return info;
}

static llvm::json::Array shapeOf(const TensorInfo &t) {
  llvm::json::Array shape;
  for (int64_t d : t.shape)
    shape.push_back(d);
  return shape;
}

static llvm::json::Object tensorJson(const TensorInfo &t) {
  return llvm::json::Object{
      {"name", t.name}, {"shape", shapeOf(t)}, {"dtype", t.dtype}};
}

/// The manifest of docs/bundle.md as JSON; a "file" parameter's values go
/// to params/NAME.bin.
static llvm::json::Object manifestObject(const StepInfo &info,
                                         StringRef library, StringRef schedule,
                                         StringRef gradSchedule,
                                         StringRef flags) {
  llvm::json::Array parameters;
  for (const TensorInfo &p : info.parameters) {
    llvm::json::Object entry = tensorJson(p);
    if (p.init == "file") {
      entry["init"] = llvm::json::Object{{"kind", "file"},
                                         {"path", "params/" + p.name + ".bin"}};
    } else {
      llvm::json::Object init{{"kind", p.init}};
      if (p.init == "kaiming_uniform" || p.init == "bias_uniform")
        init["fan_in"] = p.fanIn;
      entry["init"] = std::move(init);
    }
    parameters.push_back(std::move(entry));
  }
  llvm::json::Array state;
  for (const TensorInfo &s : info.state) {
    llvm::json::Object entry = tensorJson(s);
    entry["kind"] = s.kind;
    if (!s.tensors.empty()) {
      llvm::json::Array names;
      for (const std::string &name : s.tensors)
        names.push_back(name);
      entry["tensors"] = std::move(names);
    }
    if (!s.initValues.empty()) {
      llvm::json::Array values;
      for (float v : s.initValues)
        values.push_back(double(v));
      entry["init"] = std::move(values);
    }
    state.push_back(std::move(entry));
  }
  llvm::json::Array controls;
  for (const std::string &c : info.controls)
    controls.push_back(c);
  llvm::json::Array sites;
  for (const SiteInfo &site : info.sites) {
    llvm::json::Array variants;
    for (auto [i, precision] : llvm::enumerate(site.precisions)) {
      auto [bits, gradBits] = precision;
      std::string symbol =
          "train_step_" + site.name + "_forward_b" + std::to_string(bits);
      llvm::json::Object kernels;
      for (const auto &[product, kind] : site.kernels[i])
        kernels[product] = kind;
      variants.push_back(llvm::json::Object{{"bits", bits},
                                            {"grad_bits", gradBits},
                                            {"symbol", symbol},
                                            {"kernels", std::move(kernels)}});
    }
    llvm::json::Object entry{{"name", site.name},
                             {"op", site.op},
                             {"macs", site.macs},
                             {"variants", std::move(variants)}};
    if (!site.precision.empty())
      entry["precision"] = site.precision;
    sites.push_back(std::move(entry));
  }
  llvm::json::Object labels{{"shape", shapeOf(info.labels)},
                            {"dtype", info.labels.dtype}};
  llvm::json::Object manifest{
      {"format", "qtrain-bundle"},
      {"version", 1},
      {"compiler", llvm::json::Object{{"name", "qtrain-compile"},
                                      {"version", "0.1.0"},
                                      {"flags", flags}}},
      {"library", library},

      {"entry", llvm::json::Object{{"train", "qtrain_train_step"},
                                   {"eval", "qtrain_eval_step"}}},
      {"batch", info.batch},
      {"classes", info.classes},
      {"input", tensorJson(info.input)},
      {"labels", std::move(labels)},
      {"parameters", std::move(parameters)},
      {"state", std::move(state)},
      {"controls", std::move(controls)},
      {"schedule", schedule},
      {"grad_schedule", gradSchedule},
      {"sites", std::move(sites)}};

  if (!info.librarySha256.empty())
    manifest["library_sha256"] = info.librarySha256;
  return manifest;
}

std::string mlir::qtrain::renderManifest(const StepInfo &info,
                                         StringRef library, StringRef schedule,
                                         StringRef gradSchedule,
                                         StringRef flags) {
  return llvm::formatv("{0:2}",
                       llvm::json::Value(manifestObject(info, library, schedule,
                                                        gradSchedule, flags)))
      .str();
}

LogicalResult mlir::qtrain::writeManifest(const StepInfo &info, StringRef dir,
                                          StringRef library, StringRef schedule,
                                          StringRef gradSchedule,
                                          StringRef flags, Location loc) {
  llvm::SmallString<256> paramsDir(dir);
  llvm::sys::path::append(paramsDir, "params");
  if (std::error_code ec = llvm::sys::fs::create_directories(paramsDir))
    return emitError(loc, "qtrain-compile: cannot create ")
           << paramsDir << ": " << ec.message();
  for (const TensorInfo &p : info.parameters) {
    if (p.init != "file")
      continue;
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, "params/" + p.name + ".bin");
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return emitError(loc, "qtrain-compile: cannot write ")
             << path << ": " << ec.message();
    os.write(p.data.data(), p.data.size());
  }

  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "manifest.json");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return emitError(loc, "qtrain-compile: cannot write ")
           << path << ": " << ec.message();
  os << renderManifest(info, library, schedule, gradSchedule, flags) << "\n";
  return success();
}
