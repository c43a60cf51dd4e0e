//===- ShareFunctions.cpp - One body for functions equal up to constants --===//
//
// qtrain-share-functions: private functions whose bodies are the same up to
// the values of scalar constants (the per-bitwidth variants of a site, and
// the variants of sites with the same shapes) become one shared function
// that takes the differing constants as arguments; every call passes its
// former callee's values. The step then lowers and compiles each body once
// instead of once per variant and layer.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/CodeBits.h"
#include "qtrain/Codegen/CPU/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_SHAREFUNCTIONSPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;

namespace {

/// A constant that may become an argument: a scalar integer (not i1, which
/// folds into control flow) or float. Index constants stay: they are loop
/// bounds and offsets, which the loop passes need as constants.
bool isParameter(Operation &op) {
  auto constant = dyn_cast<arith::ConstantOp>(op);
  if (!constant)
    return false;
  Type type = constant.getType();
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth() > 1;
  return isa<FloatType>(type);
}

/// The constant that may become an argument and defines `value`, if any.
arith::ConstantOp parameterOf(Value value) {
  Operation *def = value.getDefiningOp();
  return def && isParameter(*def) ? cast<arith::ConstantOp>(def)
                                  : arith::ConstantOp();
}

/// The uses of parameters in `fn`, in walk order. Functions are compared at
/// these uses, not at the constants themselves: canonicalization uniques
/// equal constants, so a variant whose zero point happens to equal another
/// of its constants has one constant fewer, in another place, than its
/// siblings, and the constants' order and number say nothing.
SmallVector<OpOperand *> parameterUses(func::FuncOp fn) {
  SmallVector<OpOperand *> uses;
  fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isParameter(*op))
      return;
    for (OpOperand &operand : op->getOpOperands())
      if (parameterOf(operand.get()))
        uses.push_back(&operand);
  });
  return uses;
}

/// The ops of `block` that are compared one by one: all but parameters.
auto comparedOps(Block &block) {
  return llvm::make_filter_range(
      block, [](Operation &op) { return !isParameter(op); });
}

/// Whether two `qtrain.code_bits` hints make qtrain-microkernels pick the
/// same kernel with the same arguments: equal, or both too wide for the
/// bit-serial GEMM (the only kernel that reads the widths).
bool sameCodeBits(Attribute a, Attribute b) {
  if (a == b)
    return true;
  auto bitsA = dyn_cast_or_null<DenseI32ArrayAttr>(a);
  auto bitsB = dyn_cast_or_null<DenseI32ArrayAttr>(b);
  auto valid = [](DenseI32ArrayAttr bits) {
    return bits && bits.size() == 2 && bits[0] >= 1 && bits[0] <= 8 &&
           bits[1] >= 1 && bits[1] <= 8;
  };
  return valid(bitsA) && valid(bitsB) &&
         !mlir::qtrain::usesBitSerialGemm(bitsA[0], bitsA[1]) &&
         !mlir::qtrain::usesBitSerialGemm(bitsB[0], bitsB[1]);
}

bool sameAttributes(Operation &a, Operation &b) {
  // Inherent attributes (an index constant's value) live in properties.
  if (a.getPropertiesAsAttribute() != b.getPropertiesAsAttribute())
    return false;
  DictionaryAttr attrsA = a.getRawDictionaryAttrs();
  DictionaryAttr attrsB = b.getRawDictionaryAttrs();
  if (attrsA == attrsB)
    return true;
  if (attrsA.size() != attrsB.size())
    return false;
  StringRef codeBits =
      mlir::qtrain::QTrainDialect::CodeBitsAttrHelper::getNameStr();
  for (auto [x, y] : llvm::zip_equal(attrsA, attrsB)) {
    if (x.getName() != y.getName())
      return false;
    if (x.getName() == codeBits ? !sameCodeBits(x.getValue(), y.getValue())
                                : x.getValue() != y.getValue())
      return false;
  }
  return true;
}

bool sameRegion(Region &a, Region &b, IRMapping &map);

/// `a` and `b` are the same op up to parameter values, on operands that
/// correspond under `map` (which then maps `a`'s results to `b`'s).
bool sameOp(Operation &a, Operation &b, IRMapping &map) {
  if (a.getName() != b.getName() || a.getNumOperands() != b.getNumOperands() ||
      a.getNumResults() != b.getNumResults() ||
      a.getNumRegions() != b.getNumRegions() ||
      a.getNumSuccessors() != b.getNumSuccessors() ||
      a.getResultTypes() != b.getResultTypes() || !sameAttributes(a, b))
    return false;
  for (auto [x, y] : llvm::zip_equal(a.getOperands(), b.getOperands())) {
    // Parameters correspond by use: their values may differ.
    bool paramX = static_cast<bool>(parameterOf(x));
    if (paramX != static_cast<bool>(parameterOf(y)))
      return false;
    if (paramX ? x.getType() != y.getType() : map.lookupOrNull(x) != y)
      return false;
  }
  for (auto [x, y] : llvm::zip_equal(a.getSuccessors(), b.getSuccessors()))
    if (map.lookupOrNull(x) != y)
      return false;
  map.map(a.getResults(), b.getResults());
  for (auto [x, y] : llvm::zip_equal(a.getRegions(), b.getRegions()))
    if (!sameRegion(x, y, map))
      return false;
  return true;
}

bool sameRegion(Region &a, Region &b, IRMapping &map) {
  if (a.getBlocks().size() != b.getBlocks().size())
    return false;
  for (auto [x, y] : llvm::zip_equal(a, b)) {
    if (x.getArgumentTypes() != y.getArgumentTypes())
      return false;
    map.map(&x, &y);
    map.map(x.getArguments(), y.getArguments());
  }
  for (auto [x, y] : llvm::zip_equal(a, b)) {
    auto opsX = comparedOps(x), opsY = comparedOps(y);
    if (llvm::range_size(opsX) != llvm::range_size(opsY))
      return false;
    for (auto [opA, opB] : llvm::zip_equal(opsX, opsY))
      if (!sameOp(opA, opB, map))
        return false;
  }
  return true;
}

bool sameUpToConstants(func::FuncOp a, func::FuncOp b) {
  if (a.getFunctionType() != b.getFunctionType() ||
      a.getAllArgAttrs() != b.getAllArgAttrs() ||
      a.getAllResultAttrs() != b.getAllResultAttrs())
    return false;
  IRMapping map;
  return sameRegion(a.getBody(), b.getBody(), map);
}

/// A hash that equal-up-to-constants functions share: the function type and
/// each op's name, result types and region shape, in walk order, parameters
/// left out.
llvm::hash_code shapeHash(func::FuncOp fn) {
  llvm::hash_code hash = hash_value(fn.getFunctionType());
  fn.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isParameter(*op))
      return;
    hash = llvm::hash_combine(hash, op->getName(), op->getNumOperands(),
                              op->getNumRegions());
    for (Type type : op->getResultTypes())
      hash = llvm::hash_combine(hash, type);
  });
  return hash;
}

/// The first member's name without its trailing `_b8`-like parts (the
/// bitwidths of a variant), and "_shared".
std::string sharedName(func::FuncOp first) {
  StringRef name = first.getSymName();
  auto isWidth = [](StringRef part) {
    StringRef digits = part.ltrim("abcdefghijklmnopqrstuvwxyz");
    return digits.size() < part.size() && !digits.empty() &&
           llvm::all_of(digits, llvm::isDigit);
  };
  for (size_t cut = name.rfind('_');
       cut != StringRef::npos && cut > 0 && isWidth(name.drop_front(cut + 1));
       cut = name.rfind('_'))
    name = name.take_front(cut);
  return (name + "_shared").str();
}

struct ShareFunctionsPass
    : mlir::qtrain::impl::ShareFunctionsPassBase<ShareFunctionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The calls of each function; a function referenced other than by
    // func.call (or public) keeps its body.
    llvm::DenseMap<StringAttr, SmallVector<func::CallOp>> calls;
    llvm::DenseSet<StringAttr> otherUses;
    if (std::optional<SymbolTable::UseRange> uses =
            SymbolTable::getSymbolUses(&module.getBodyRegion())) {
      for (const SymbolTable::SymbolUse &use : *uses) {
        StringAttr root = use.getSymbolRef().getRootReference();
        auto call = dyn_cast<func::CallOp>(use.getUser());
        if (call && call.getCalleeAttr() == use.getSymbolRef())
          calls[root].push_back(call);
        else
          otherUses.insert(root);
      }
    } else {
      return;
    }
    // Candidates grouped by hash, then into classes of equal functions.
    llvm::MapVector<llvm::hash_code, SmallVector<SmallVector<func::FuncOp>>>
        byHash;
    for (auto fn : module.getOps<func::FuncOp>()) {
      // Leaves only: the calls recorded above stay the module's calls.
      if (fn.isExternal() || otherUses.contains(fn.getSymNameAttr()) ||
          fn.walk([](func::CallOp) {
              return WalkResult::interrupt();
            }).wasInterrupted())
        continue;
      SmallVector<SmallVector<func::FuncOp>> &classes = byHash[shapeHash(fn)];
      auto same = llvm::find_if(classes, [&](SmallVector<func::FuncOp> &group) {
        return sameUpToConstants(group.front(), fn);
      });
      if (same == classes.end())
        classes.push_back({fn});
      else
        same->push_back(fn);
    }
    SymbolTable symbols(module);
    for (auto &[hash, classes] : byHash)
      for (SmallVector<func::FuncOp> &group : classes)
        if (group.size() > 1)
          share(symbols, group, calls);
  }

  void share(SymbolTable &symbols, MutableArrayRef<func::FuncOp> group,
             llvm::DenseMap<StringAttr, SmallVector<func::CallOp>> &calls) {
    // Each member's parameter value at each use. The uses where they
    // differ become arguments, one per distinct column of values (the uses
    // of one constant, say, share an argument).
    SmallVector<SmallVector<TypedAttr>> values;
    for (func::FuncOp fn : group)
      values.push_back(
          llvm::map_to_vector(parameterUses(fn), [](OpOperand *use) {
            return parameterOf(use->get()).getValue();
          }));
    auto column = [&](size_t use) {
      return llvm::map_to_vector(
          values, [&](ArrayRef<TypedAttr> own) { return own[use]; });
    };
    // columns[k]: the members' values of argument k; argumentOf: the
    // argument of each use that becomes one.
    SmallVector<SmallVector<TypedAttr>> columns;
    llvm::DenseMap<size_t, size_t> argumentOf;
    for (size_t use = 0, e = values.front().size(); use < e; ++use) {
      SmallVector<TypedAttr> own = column(use);
      if (llvm::all_equal(own))
        continue;
      auto *found = llvm::find(columns, own);
      argumentOf[use] = found - columns.begin();
      if (found == columns.end())
        columns.push_back(std::move(own));
    }

    func::FuncOp shared = group.front().clone();
    shared.setSymName(sharedName(group.front()));
    shared.setPrivate();
    symbols.insert(shared, Block::iterator(group.front()));
    SmallVector<OpOperand *> sharedUses = parameterUses(shared);
    unsigned firstArgument = shared.getNumArguments();
    SmallVector<Value> arguments(columns.size());
    for (size_t use = 0, e = sharedUses.size(); use < e; ++use) {
      auto it = argumentOf.find(use);
      if (it == argumentOf.end())
        continue;
      Value &argument = arguments[it->second];
      if (!argument) {
        arith::ConstantOp constant = parameterOf(sharedUses[use]->get());
        unsigned index = firstArgument + it->second;
        // Arguments are added in order of first use, which is column order.
        if (failed(shared.insertArgument(index, constant.getType(), {},
                                         constant.getLoc()))) {
          shared.emitOpError("qtrain-share-functions: cannot add an argument");
          return signalPassFailure();
        }
        argument = shared.getArgument(index);
      }
      sharedUses[use]->set(argument);
    }
    shared.walk([](arith::ConstantOp constant) {
      if (isParameter(*constant) && constant->use_empty())
        constant.erase();
    });
    ++numShared;
    numArguments += columns.size();

    // The call of `shared` with the values of member `member`, built by `b`.
    auto callShared = [&](OpBuilder &b, Location loc, ValueRange arguments,
                          size_t member) {
      SmallVector<Value> operands(arguments);
      for (ArrayRef<TypedAttr> values : columns)
        operands.push_back(arith::ConstantOp::create(b, loc, values[member]));
      return func::CallOp::create(b, loc, shared, operands);
    };
    for (auto [member, fn] : llvm::enumerate(group)) {
      for (func::CallOp call : calls.lookup(fn.getSymNameAttr())) {
        OpBuilder b(call);
        func::CallOp replacement =
            callShared(b, call.getLoc(), call.getOperands(), member);
        call.replaceAllUsesWith(replacement.getResults());
        call.erase();
      }
      ++numMerged;
      if (fn.isPrivate()) {
        symbols.erase(fn);
        continue;
      }
      // A public member keeps its symbol (the manifest names the forward
      // variants and the runtime resolves them), as a call of the shared
      // body that the step itself never makes.
      fn.getBody().getBlocks().clear();
      Block *body = fn.addEntryBlock();
      OpBuilder b = OpBuilder::atBlockBegin(body);
      func::CallOp call =
          callShared(b, fn.getLoc(), body->getArguments(), member);
      func::ReturnOp::create(b, fn.getLoc(), call.getResults());
    }
  }
};

} // namespace
