//===- Manifest.cpp - The bundle manifest -----------------------*- C++ -*-===//
//
// Reads the step's interface from a materialized training module into the
// manifest schema the runtime reads (qtrain/runtime/Manifest.h) and writes
// the bundle's manifest.json and parameter files (docs/bundle.md).
//
//===----------------------------------------------------------------------===//

#include "qtrain/Target/Bundle/Bundle.h"

#include "qtrain/Analysis/FreshInit.h"

#include "QTrain/QTrainDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::qtrain;
namespace rt = ::qtrain::rt;

static rt::TensorSpec tensorSpec(Type type, std::string name) {
  rt::TensorSpec spec;
  spec.name = std::move(name);
  auto tensor = cast<RankedTensorType>(type);
  spec.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  spec.dtype =
      tensor.getElementType().isF32() ? rt::DType::F32 : rt::DType::I64;
  spec.numel = tensor.getNumElements();
  return spec;
}

/// The largest token id that `ids` (an i64 tensor) can hold without the
/// step reading past a table: the rows of the smallest table dimension an
/// id, cast to an index inside a linalg body, extracts at, minus one
/// (std::nullopt when no id is used as an index: compared, as an integer
/// or an index, with a row as the gradient of a gather does, or converted
/// to a float, an id reads nothing). The ids are followed through reshapes and
/// slices. Fails, with an error at the op, where an id could become an index
/// this cannot bound (arithmetic on it, an index into a dynamic dimension, any
/// other use of the ids).
static FailureOr<std::optional<int64_t>> idBound(Value ids) {
  std::optional<int64_t> bound;
  auto unbounded = [](Operation *op) {
    return op->emitError("qtrain-compile: cannot bound the token ids used "
                         "here, so the runtime could not keep them inside "
                         "the step's tables (an id may only be cast to an "
                         "index for a tensor.extract of a static dimension, "
                         "compared, or converted to a float)");
  };
  SmallVector<Value> worklist = {ids};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
              tensor::ExtractSliceOp, tensor::CastOp>(user)) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (!generic || !generic.isDpsInput(&use))
        return unbounded(user);
      for (Operation *op : generic.getMatchingBlockArgument(&use).getUsers()) {
        if (isa<arith::CmpIOp, arith::SIToFPOp, arith::UIToFPOp>(op))
          continue;
        if (!isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
          return unbounded(op);
        for (OpOperand &index : op->getResult(0).getUses()) {
          if (isa<arith::CmpIOp>(index.getOwner()))
            continue;
          auto extract = dyn_cast<tensor::ExtractOp>(index.getOwner());
          if (!extract || index.getOperandNumber() == 0)
            return unbounded(index.getOwner());
          int64_t rows = extract.getTensor().getType().getDimSize(
              index.getOperandNumber() - 1);
          if (ShapedType::isDynamic(rows))
            return unbounded(extract);
          bound = std::min(bound.value_or(rows - 1), rows - 1);
        }
      }
    }
  }
  return bound;
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

/// The runtime's initialization for a fresh one.
static rt::InitKind toInitKind(FreshInitKind kind) {
  switch (kind) {
  case FreshInitKind::KaimingUniform:
    return rt::InitKind::KaimingUniform;
  case FreshInitKind::BiasUniform:
    return rt::InitKind::BiasUniform;
  case FreshInitKind::Ones:
    return rt::InitKind::Ones;
  case FreshInitKind::Zeros:
    return rt::InitKind::Zeros;
  case FreshInitKind::Normal:
    return rt::InitKind::Normal;
  }
  llvm_unreachable("unknown FreshInitKind");
}

FailureOr<BundleContents> mlir::qtrain::collectBundleContents(ModuleOp module) {
  auto train = module.lookupSymbol<func::FuncOp>("train_step");
  auto eval = module.lookupSymbol<func::FuncOp>("eval_step");
  auto sites = module->getAttrOfType<ArrayAttr>(kSitesAttrName);
  if (!train || !eval || !sites)
    return module.emitError(
        "qtrain-compile: the module needs @train_step, @eval_step and "
        "qtrain.sites (run qtrain-autodiff and qtrain-materialize-variants)");
  BundleContents contents;
  rt::Manifest &info = contents.manifest;
  info.format = rt::kBundleFormat;
  info.version = rt::kBundleFormatVersion;
  info.compiler.name = "qtrain-compile";
  info.compiler.version = "0.1.0";
  info.trainEntry = "qtrain_train_step";
  info.evalEntry = "qtrain_eval_step";
  auto logits = cast<RankedTensorType>(eval.getResultTypes()[0]);
  info.batch = logits.getDimSize(0);
  info.classes = logits.getDimSize(1);

  bool sawInput = false;
  // LDP: the precision parameter of each site, by site index.
  std::map<int64_t, std::string> precisionOf;
  // Names given by qtrain.name, which must be unique.
  std::set<std::string> usedNames;
  for (unsigned i = 0, e = train.getNumArguments(); i < e; ++i) {
    Type type = train.getArgumentTypes()[i];
    if (train.getArgAttr(i, kParamAttrName)) {
      rt::ParameterSpec param;
      static_cast<rt::TensorSpec &>(param) =
          tensorSpec(type, "param" + std::to_string(info.parameters.size()));
      std::vector<char> data;
      if (auto name = train.getArgAttrOfType<StringAttr>(i, kNameAttrName)) {
        param.name = name.getValue().str();
        if (!usedNames.insert(param.name).second)
          return train.emitError("qtrain-compile: two parameters are named '")
                 << param.name << "' (qtrain.name)";
      }
      if (auto site =
              train.getArgAttrOfType<IntegerAttr>(i, kPrecisionAttrName)) {
        param.name = "ldp_site" + std::to_string(site.getInt());
        precisionOf[site.getInt()] = param.name;
      }
      if (Attribute init = train.getArgAttr(i, kInitAttrName)) {
        FailureOr<std::vector<char>> found = rawData(init);
        if (failed(found))
          return train.emitError("qtrain-compile: the initial value of "
                                 "parameter #")
                 << i << " is not available (an elided or missing blob)";
        data = std::move(*found);
      }
      if (!data.empty()) {
        param.init.kind = rt::InitKind::File;
        param.init.path = "params/" + param.name + ".bin";
      } else {
        // Chosen on the forward graph (qtrain-lift-params, qtrain-autodiff);
        // without it, from @eval_step, which has the parameters first in
        // the same order (qtrain/Analysis/FreshInit.h).
        std::optional<FreshInit> fresh =
            readFreshInitAttr(train.getArgAttr(i, kFreshInitAttrName));
        if (!fresh)
          fresh = inferFreshInit(eval.getArgument(info.parameters.size()));
        param.init.kind = toInitKind(fresh->kind);
        if (param.init.kind == rt::InitKind::KaimingUniform ||
            param.init.kind == rt::InitKind::BiasUniform)
          param.init.fanIn = fresh->fanIn;
      }
      info.parameters.push_back(std::move(param));
      contents.paramFiles.push_back(std::move(data));
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
      rt::StateSpec state;
      static_cast<rt::TensorSpec &>(state) =
          tensorSpec(type, "state" + std::to_string(info.state.size()));
      info.state.push_back(std::move(state));
      info.state.back().kind = kind.getValue().str();
      if (auto names = train.getArgAttrOfType<ArrayAttr>(i, kTensorsAttrName))
        for (auto name : names.getAsValueRange<StringAttr>())
          info.state.back().tensors.push_back(name.str());
      if (auto init =
              train.getArgAttrOfType<DenseElementsAttr>(i, kInitAttrName))
        for (APFloat v : init.getValues<APFloat>())
          info.state.back().init.push_back(v.convertToFloat());
      continue;
    }
    // The momentum buffers follow the parameters.
    if (i < 2 * info.parameters.size())
      continue;
    // After the inputs come the labels, then lr, momentum, weight decay.
    unsigned labelsIndex = e - 4;
    if (i == labelsIndex) {
      info.labels = tensorSpec(type, "labels");
      if (info.labels.dtype != rt::DType::I64)
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
    Type element = cast<RankedTensorType>(type).getElementType();
    if (!element.isF32() && !element.isInteger(64))
      return train.emitError("qtrain-compile: the input batch is ")
             << type
             << "; bundles take f32 features or i64 token ids (the ABI's "
                "float * or int64_t *)";
    info.input = tensorSpec(type, "x");
    sawInput = true;
    if (element.isInteger(64)) {
      // Both steps read the tables; the eval step takes the input after
      // the parameters.
      for (Value ids :
           {train.getArgument(i), eval.getArgument(info.parameters.size())}) {
        FailureOr<std::optional<int64_t>> bound = idBound(ids);
        if (failed(bound))
          return failure();
        if (*bound)
          info.inputMaxValue = info.inputMaxValue < 0
                                   ? **bound
                                   : std::min(info.inputMaxValue, **bound);
      }
    }
  }
  if (!sawInput)
    return train.emitError("qtrain-compile: @train_step has no input batch");

  for (Attribute entry : sites) {
    auto dict = cast<DictionaryAttr>(entry);
    rt::SiteSpec site;
    site.name = cast<StringAttr>(dict.get("name")).str();
    site.op = cast<StringAttr>(dict.get("op")).str();
    site.macs = cast<IntegerAttr>(dict.get("macs")).getInt();
    for (Attribute variant : cast<ArrayAttr>(dict.get("variants"))) {
      auto bits = cast<DenseI32ArrayAttr>(variant).asArrayRef();
      rt::VariantSpec &v = site.variants.emplace_back();
      v.bits = bits[0];
      v.gradBits = bits[1];
      v.symbol =
          "train_step_" + site.name + "_forward_b" + std::to_string(v.bits);
    }
    if (auto it = precisionOf.find(int64_t(info.sites.size()));
        it != precisionOf.end())
      site.precision = it->second;
    info.sites.push_back(std::move(site));
  }
  if (!precisionOf.empty() &&
      (precisionOf.rbegin()->first >= int64_t(info.sites.size()) ||
       llvm::any_of(info.sites, [](const rt::SiteSpec &s) {
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
    rt::SiteSpec &s = info.sites[variant.getSite()];
    bool forward = variant.getProduct() == ProductKind::Forward;
    for (rt::VariantSpec &v : s.variants)
      if (v.bits == static_cast<int>(variant.getBits()) &&
          (forward || v.gradBits == static_cast<int>(variant.getGradBits())))
        v.kernels[stringifyProductKind(variant.getProduct()).str()] =
            stringifyKernelKind(variant.getKernel().value_or(KernelKind::F32))
                .str();
  }
  return contents;
}

LogicalResult mlir::qtrain::writeBundleFiles(const BundleContents &contents,
                                             StringRef dir, Location loc) {
  llvm::SmallString<256> paramsDir(dir);
  llvm::sys::path::append(paramsDir, "params");
  if (std::error_code ec = llvm::sys::fs::create_directories(paramsDir))
    return emitError(loc, "qtrain-compile: cannot create ")
           << paramsDir << ": " << ec.message();
  const rt::Manifest &manifest = contents.manifest;
  for (auto [p, data] :
       llvm::zip_equal(manifest.parameters, contents.paramFiles)) {
    if (p.init.kind != rt::InitKind::File)
      continue;
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, p.init.path);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return emitError(loc, "qtrain-compile: cannot write ")
             << path << ": " << ec.message();
    os.write(data.data(), data.size());
  }

  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "manifest.json");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return emitError(loc, "qtrain-compile: cannot write ")
           << path << ": " << ec.message();
  os << rt::printManifest(manifest) << "\n";
  return success();
}
