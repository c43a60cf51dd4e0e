//===- MaterializeVariants.cpp - Kernel variants per precision --*- C++ -*-===//
//
// qtrain-materialize-variants: outlines the three products of every
// quantized layer (a kernel site) into one function per precision, with the
// bitwidths as constants, and dispatches to them through a slot the runtime
// fills each step.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Kernels/Passes.h"

#include "qtrain/Analysis/LayerMacs.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"
#include "qtrain/runtime/Schedule.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Remarks.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_MATERIALIZEVARIANTSPASS
#include "qtrain/Kernels/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

/// A precision a site can run at: forward and backward bits (0 = fp32).
struct Precision {
  unsigned bits, gradBits;
};

struct MaterializeVariantsPass
    : mlir::qtrain::impl::MaterializeVariantsPassBase<MaterializeVariantsPass> {
  using MaterializeVariantsPassBase::MaterializeVariantsPassBase;
  void runOnOperation() override;
};

} // namespace

/// The bitwidths of a --bits/--grad-bits option (rt::parseBitList).
static FailureOr<SmallVector<unsigned>>
parseBits(StringRef text, StringRef option, ModuleOp module) {
  std::vector<int> bits;
  if (::qtrain::rt::Status status = ::qtrain::rt::parseBitList(
          std::string_view(text.data(), text.size()), bits);
      status.failed()) {
    module.emitError("qtrain-materialize-variants: ")
        << option << ": " << status.message();
    return failure();
  }
  return SmallVector<unsigned>(bits.begin(), bits.end());
}

namespace {

/// One product of a site (a qtrain.kernel), outlined: what the variants
/// take and compute.
struct Outline {
  KernelOp kernel;
  Operation *product;
  int64_t site;
  StringRef kind;
  /// The ops cloned into every variant, in program order, product last.
  SmallVector<Operation *> ops;
  /// The values the variants take as arguments.
  SmallVector<Value> args;
};

} // namespace

static Outline outline(KernelOp kernel) {
  Outline result{kernel,
                 kernel.getProductOp(),
                 static_cast<int64_t>(kernel.getSite()),
                 kernel.getProduct(),
                 {},
                 {}};
  for (Operation &op : kernel.getBody().front().without_terminator())
    result.ops.push_back(&op);
  // Values from above, but constants and empty inits (cloned) and the
  // precisions of the quantizers (constants of each variant).
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(kernel.getBody(), above);
  llvm::DenseSet<Value> precisions;
  kernel.walk([&](FakeQuantOp quant) { precisions.insert(quant.getBits()); });
  for (Value v : above) {
    Operation *def = v.getDefiningOp();
    if (def && isa<arith::ConstantOp, tensor::EmptyOp>(def))
      continue;
    if (precisions.contains(v) &&
        llvm::all_of(v.getUses(), [&](OpOperand &use) {
          auto quant = dyn_cast<FakeQuantOp>(use.getOwner());
          return !kernel->isProperAncestor(use.getOwner()) ||
                 (quant && use.get() == quant.getBits());
        }))
      continue;
    result.args.push_back(v);
  }
  return result;
}

/// Builds the variant of `o` at precision `p` as a function.
static func::FuncOp buildVariant(ModuleOp module, const Outline &o, Precision p,
                                 StringRef name) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> argTypes;
  for (Value v : o.args)
    argTypes.push_back(v.getType());
  auto fn = func::FuncOp::create(
      b, o.product->getLoc(), name,
      FunctionType::get(ctx, argTypes, o.product->getResultTypes()));
  // Public: each variant is a symbol of the bundle's library. The kernel
  // verified the product's name.
  ctx->getLoadedDialect<QTrainDialect>()->getVariantAttrHelper().setAttr(
      fn, VariantAttr::get(ctx, o.site, *symbolizeProductKind(o.kind), p.bits,
                           p.gradBits, /*kernel=*/std::nullopt));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping map;
  for (auto [v, arg] : llvm::zip(o.args, entry->getArguments()))
    map.map(v, arg);
  Value bits = arith::ConstantOp::create(b, o.product->getLoc(),
                                         b.getI32IntegerAttr(p.bits));
  Value gradBits = arith::ConstantOp::create(b, o.product->getLoc(),
                                             b.getI32IntegerAttr(p.gradBits));
  // Constants and empty inits used by the cloned ops (padding values,
  // transpose destinations).
  for (Operation *op : o.ops) {
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(op->getRegions(), above);
    SmallVector<Value> used(op->getOperands());
    used.append(above.begin(), above.end());
    for (Value v : used) {
      Operation *def = v.getDefiningOp();
      if (def && isa<arith::ConstantOp, tensor::EmptyOp>(def) &&
          !map.contains(v))
        map.map(v, b.clone(*def)->getResult(0));
    }
  }
  for (Operation *op : o.ops) {
    if (auto quant = dyn_cast<FakeQuantOp>(op))
      map.map(quant.getBits(),
              quant.getRole() == Role::Error ? gradBits : bits);
    b.clone(*op, map);
  }
  SmallVector<Value> results;
  KernelOp kernel = o.kernel;
  for (Value v : kernel.getBody().front().getTerminator()->getOperands())
    results.push_back(map.lookup(v));
  func::ReturnOp::create(b, o.product->getLoc(), results);
  return fn;
}

void MaterializeVariantsPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  FailureOr<SmallVector<unsigned>> bitList = parseBits(bits, "bits", module);
  FailureOr<SmallVector<unsigned>> gradList =
      parseBits(gradBits, "grad-bits", module);
  if (failed(bitList) || failed(gradList))
    return signalPassFailure();
  SmallVector<Precision> precisions;
  if (fp32)
    precisions.push_back({0, 0});
  for (unsigned b : *bitList)
    for (unsigned g : *gradList)
      precisions.push_back({b, g});

  // The products of every site, per function.
  SmallVector<std::pair<func::FuncOp, SmallVector<Outline>>> work;
  /// Each site's forward op: its name, MACs and location.
  struct SiteInfo {
    std::string op = "unknown";
    int64_t macs = 0;
    Location loc;
  };
  llvm::SmallDenseMap<int64_t, SiteInfo> siteInfo;
  int64_t numSites = 0;
  for (auto fn : module.getOps<func::FuncOp>()) {
    SmallVector<Outline> outlines;
    fn.walk([&](KernelOp kernel) {
      Outline o = outline(kernel);
      numSites = std::max(numSites, o.site + 1);
      if (o.kind == "forward")
        siteInfo.try_emplace(
            o.site, SiteInfo{o.product->getName().getStringRef().str(),
                             countMacs(cast<linalg::LinalgOp>(o.product)),
                             kernel.getLoc()});
      outlines.push_back(std::move(o));
    });
    if (!outlines.empty())
      work.push_back({fn, std::move(outlines)});
  }
  if (work.empty()) {
    module.emitError("qtrain-materialize-variants: no kernel sites "
                     "(qtrain.kernel ops); run qtrain-form-kernels first");
    return signalPassFailure();
  }

  // Forward variants depend on bits only; backward ones on both.
  int64_t forwardPerSite = (fp32 ? 1 : 0) + bitList->size();
  int64_t backwardPerSite = precisions.size();
  int64_t forwardProducts = 0, backwardProducts = 0;
  for (auto &entry : work)
    for (Outline &o : entry.second)
      ++(o.kind == "forward" ? forwardProducts : backwardProducts);
  int64_t total =
      forwardProducts * forwardPerSite + backwardProducts * backwardPerSite;
  if (total > maxVariants) {
    module.emitError("qtrain-materialize-variants: ")
        << forwardProducts << " forward products x " << forwardPerSite << " + "
        << backwardProducts << " backward products x " << backwardPerSite
        << " = " << total << " variant functions exceed max-variants="
        << static_cast<unsigned>(maxVariants);
    return signalPassFailure();
  }

  auto slotsType = RankedTensorType::get({numSites}, IntegerType::get(ctx, 32));
  llvm::StringMap<func::FuncOp> created;
  for (auto &[fn, outlines] : work) {
    // The slots go after the last control or state argument.
    unsigned slotIndex = 0;
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
      if (fn.getArgAttr(i, kControlAttrName) ||
          fn.getArgAttr(i, kStateAttrName))
        slotIndex = i + 1;
    (void)fn.insertArgument(
        slotIndex, slotsType,
        DictionaryAttr::get(
            ctx, {NamedAttribute(StringAttr::get(ctx, kControlAttrName),
                                 StringAttr::get(ctx, "slots"))}),
        fn.getLoc());
    Value slots = fn.getArgument(slotIndex);

    // Results of products already replaced by their dispatch: a later
    // product (the next layer, the previous layer's backward) may read them.
    IRMapping replaced;
    // Products of one kind in one site (two activation operands give two
    // input gradients) get numbered names.
    llvm::StringMap<unsigned> kindCount;
    for (Outline &o : outlines) {
      std::string kind = o.kind.str();
      unsigned ordinal = kindCount[std::to_string(o.site) + "/" + kind]++;
      if (ordinal > 0)
        kind += std::to_string(ordinal);
      // Ops pulled into this product may read an earlier product, whose uses
      // now read its dispatch.
      for (Value &v : o.args)
        v = replaced.lookupOrDefault(v);
      // One function per distinct precision of this product.
      SmallVector<func::FuncOp> perCase;
      for (Precision p : precisions) {
        // Named after the step too: the evaluation step's forward products
        // read running ranges, so they take other arguments.
        std::string name = fn.getSymName().str() + "_site" +
                           std::to_string(o.site) + "_" + kind + "_b" +
                           std::to_string(p.bits);
        Precision used = p;
        if (o.kind == "forward")
          used.gradBits = 0;
        else
          name += "_g" + std::to_string(p.gradBits);
        func::FuncOp &variant = created[name];
        if (!variant) {
          variant = buildVariant(module, o, used, name);
          ++numVariants;
        }
        perCase.push_back(variant);
      }
      // The kernel becomes a switch on its site's slot.
      OpBuilder b(o.kernel);
      Location loc = o.kernel.getLoc();
      Value position = arith::ConstantIndexOp::create(b, loc, o.site);
      Value slot = tensor::ExtractOp::create(b, loc, slots, position);
      Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), slot);
      SmallVector<int64_t> cases = llvm::to_vector(
          llvm::seq<int64_t>(0, static_cast<int64_t>(perCase.size())));
      auto dispatch = scf::IndexSwitchOp::create(
          b, loc, o.kernel->getResultTypes(), index, cases, cases.size());
      auto fill = [&](Region &region, func::FuncOp callee) {
        Block *block = b.createBlock(&region);
        b.setInsertionPointToStart(block);
        auto call = func::CallOp::create(b, loc, callee, o.args);
        scf::YieldOp::create(b, loc, call.getResults());
      };
      for (auto [region, callee] :
           llvm::zip(dispatch.getCaseRegions(), perCase))
        fill(region, callee);
      // The runtime only writes valid indices; default to the first variant.
      fill(dispatch.getDefaultRegion(), perCase.front());
      o.kernel->replaceAllUsesWith(dispatch.getResults());
      replaced.map(o.kernel->getResults(), dispatch.getResults());
    }
    for (Outline &o : outlines)
      o.kernel->erase();
  }

  // What the bundle manifest needs: each site's op, MACs and variants.
  OpBuilder b(ctx);
  SmallVector<Attribute> sites;
  for (int64_t site = 0; site < numSites; ++site) {
    auto info = siteInfo.find(site);
    SmallVector<Attribute> variants;
    for (Precision p : precisions)
      variants.push_back(b.getDenseI32ArrayAttr(
          {static_cast<int32_t>(p.bits), static_cast<int32_t>(p.gradBits)}));
    bool known = info != siteInfo.end();
    sites.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("name", b.getStringAttr("site" + std::to_string(site))),
         b.getNamedAttr("op",
                        b.getStringAttr(known ? info->second.op : "unknown")),
         b.getNamedAttr("macs",
                        b.getI64IntegerAttr(known ? info->second.macs : 0)),
         b.getNamedAttr("variants", b.getArrayAttr(variants))}));
    if (known)
      remark::analysis(info->second.loc,
                       remark::RemarkOpts::name("site").category(getArgument()))
          << ("site " + Twine(site) + " (" + info->second.op + ", " +
              Twine(info->second.macs) + " MACs): " + Twine(precisions.size()) +
              " precisions")
                 .str();
  }
  module->setAttr(kSitesAttrName, b.getArrayAttr(sites));
}
