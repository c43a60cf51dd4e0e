//===- ArgumentsToDevice.cpp - Entry scalars through device memory --------===//
//
// qtrain-arguments-to-device: the scalar arguments of the CUDA step's entry
// points that kernels use (the Philox step and seed, the learning rate)
// reach the kernels through one device record that the entry point fills
// at its start, instead of kernel parameters. A step's launches then take
// the same parameters every step, so that a CUDA graph of the step is
// launched again as it is, without updating any of its nodes.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/Passes.h"

#include "qtrain/Codegen/CUDA/HostCode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_ARGUMENTSTODEVICEPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct ArgumentsToDevicePass
    : mlir::qtrain::impl::ArgumentsToDevicePassBase<ArgumentsToDevicePass> {
  using Base::Base;
  void runOnOperation() override;
};

/// A scalar that fits a 64-bit slot of the record.
bool isRecordable(Type type) {
  if (type.isIndex())
    return true;
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth() <= 64;
  if (auto real = dyn_cast<FloatType>(type))
    return real.getWidth() <= 64;
  return false;
}

/// `value` as the 64 bits of its slot.
Value toSlot(OpBuilder &b, Location loc, Value value) {
  Type i64 = b.getI64Type();
  Type type = value.getType();
  if (type.isIndex())
    return arith::IndexCastUIOp::create(b, loc, i64, value);
  if (auto real = dyn_cast<FloatType>(type))
    value = arith::BitcastOp::create(b, loc, b.getIntegerType(real.getWidth()),
                                     value);
  if (value.getType() == i64)
    return value;
  return arith::ExtUIOp::create(b, loc, i64, value);
}

/// The value of `type` a slot's 64 bits hold (toSlot's inverse).
Value fromSlot(OpBuilder &b, Location loc, Value bits, Type type) {
  if (type.isIndex())
    return arith::IndexCastUIOp::create(b, loc, type, bits);
  unsigned width = type.getIntOrFloatBitWidth();
  if (width < 64)
    bits = arith::TruncIOp::create(b, loc, b.getIntegerType(width), bits);
  if (isa<FloatType>(type))
    return arith::BitcastOp::create(b, loc, type, bits);
  return bits;
}

/// Where a function's kernels find its recorded scalars: its record (a
/// memref<Nxi64>: made by an entry point, an argument of any other
/// function) and the slot of each scalar.
struct Record {
  Value buffer;
  MemRefType type;
  DenseMap<Value, int64_t> slots;
};

/// The analysis and the rewrite for one module.
class Rewriter {
public:
  explicit Rewriter(ModuleOp module) : module(module) {}
  /// Returns the number of launches that now read a record.
  int64_t run();

private:
  /// Whether a kernel may use `value` (a function's argument, or host
  /// arithmetic on one): inside a launch, through scalar arithmetic, or
  /// through the arguments of the functions it is passed to.
  bool reachesKernels(Value value);
  /// Gives the entry points and the functions they call their records:
  /// an entry point a slot for each scalar argument kernels use; a callee
  /// its callers' record type, and a slot for each argument that every
  /// caller with such a record passes a value of that slot.
  void assignRecords();
  /// Whether `call` can pass its caller's record to a callee with
  /// `calleeRecord`; else it makes one for the call.
  bool passesRecord(func::CallOp call, const Record &calleeRecord);
  /// Stores `values` (value, slot) to a new host record of `type`, zeros
  /// elsewhere, and copies it to a new device record, before `before`.
  Value makeRecord(Operation *before, MemRefType type,
                   ArrayRef<std::pair<Value, int64_t>> values);
  /// `value` made before `before` (an op of a launch body's entry block):
  /// a load of its slot, or scalar arithmetic on such loads cloned from the
  /// host code. Null when nothing recorded reaches it.
  Value materialize(Value value, const Record &record, Operation *before,
                    DenseMap<Value, Value> &made);
  bool dependsOnRecord(Value value, const Record &record);
  /// Whether `launch` now reads `record`.
  bool rewriteLaunch(gpu::LaunchOp launch, const Record &record);

  ModuleOp module;
  SmallVector<func::FuncOp> functions;
  DenseMap<func::FuncOp, SmallVector<func::CallOp>> callers;
  DenseMap<func::FuncOp, Record> records;
  DenseMap<Value, bool> reaching;
};

bool Rewriter::reachesKernels(Value value) {
  if (auto it = reaching.find(value); it != reaching.end())
    return it->second;
  reaching[value] = false; // (no cycles in SSA, but calls may recurse)
  bool reaches = false;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    auto launch = user->getParentOfType<gpu::LaunchOp>();
    if (launch && !launch->isAncestor(value.getParentBlock()->getParentOp())) {
      reaches = true;
      break;
    }
    if (isScalarArithmetic(user) &&
        llvm::any_of(user->getResults(),
                     [&](Value result) { return reachesKernels(result); })) {
      reaches = true;
      break;
    }
    if (auto call = dyn_cast<func::CallOp>(user)) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (callee && !callee.isExternal() &&
          reachesKernels(callee.getArgument(use.getOperandNumber()))) {
        reaches = true;
        break;
      }
    }
  }
  reaching[value] = reaches;
  return reaches;
}

/// The functions of `callers`' call graph, callers before callees (functions
/// on a cycle of calls are left out).
static SmallVector<func::FuncOp>
callersFirst(ArrayRef<func::FuncOp> functions,
             const DenseMap<func::FuncOp, SmallVector<func::CallOp>> &callers) {
  DenseMap<func::FuncOp, unsigned> pending;
  DenseMap<func::FuncOp, SmallVector<func::FuncOp>> callees;
  for (func::FuncOp fn : functions)
    pending[fn] = 0;
  for (auto &[callee, calls] : callers)
    for (func::CallOp call : calls) {
      auto caller = call->getParentOfType<func::FuncOp>();
      if (!pending.count(caller))
        continue;
      ++pending[callee];
      callees[caller].push_back(callee);
    }
  SmallVector<func::FuncOp> order;
  for (func::FuncOp fn : functions)
    if (pending[fn] == 0)
      order.push_back(fn);
  for (size_t i = 0; i < order.size(); ++i)
    for (func::FuncOp callee : callees[order[i]])
      if (--pending[callee] == 0)
        order.push_back(callee);
  return order;
}

bool Rewriter::passesRecord(func::CallOp call, const Record &calleeRecord) {
  auto it = records.find(call->getParentOfType<func::FuncOp>());
  if (it == records.end() || it->second.type != calleeRecord.type)
    return false;
  for (auto [value, slot] : calleeRecord.slots) {
    Value operand = call.getOperand(cast<BlockArgument>(value).getArgNumber());
    auto from = it->second.slots.find(operand);
    if (from == it->second.slots.end() || from->second != slot)
      return false;
  }
  return true;
}

void Rewriter::assignRecords() {
  for (func::FuncOp fn : callersFirst(functions, callers)) {
    auto calls = callers.find(fn);
    Record record;
    if (calls == callers.end() || calls->second.empty()) {
      // An entry point: a slot for each scalar argument kernels use.
      if (!fn.isPublic())
        continue;
      for (BlockArgument argument : fn.getArguments())
        if (isRecordable(argument.getType()) && reachesKernels(argument))
          record.slots[argument] = record.slots.size();
      if (record.slots.empty())
        continue;
      record.type = MemRefType::get({int64_t(record.slots.size())},
                                    IntegerType::get(module.getContext(), 64));
      records[fn] = std::move(record);
      continue;
    }
    // A callee takes the record of its first caller that has one; an
    // argument has a slot when every caller with a record of that type
    // passes it a value of one slot. (Callers that do not make a record
    // of their own for the call.)
    SmallVector<const Record *> from;
    for (func::CallOp call : calls->second) {
      auto it = records.find(call->getParentOfType<func::FuncOp>());
      if (it == records.end())
        continue;
      if (from.empty() || from.front()->type == it->second.type)
        from.push_back(&it->second);
    }
    if (from.empty())
      continue;
    record.type = from.front()->type;
    for (BlockArgument argument : fn.getArguments()) {
      if (!isRecordable(argument.getType()) || !reachesKernels(argument))
        continue;
      std::optional<int64_t> slot;
      bool same = true;
      for (func::CallOp call : calls->second) {
        auto caller = records.find(call->getParentOfType<func::FuncOp>());
        if (caller == records.end() || caller->second.type != record.type)
          continue;
        auto it =
            caller->second.slots.find(call.getOperand(argument.getArgNumber()));
        if (it == caller->second.slots.end() || (slot && *slot != it->second)) {
          same = false;
          break;
        }
        slot = it->second;
      }
      if (same && slot)
        record.slots[argument] = *slot;
    }
    if (!record.slots.empty())
      records[fn] = std::move(record);
  }
}

Value Rewriter::makeRecord(Operation *before, MemRefType type,
                           ArrayRef<std::pair<Value, int64_t>> values) {
  Location loc = before->getLoc();
  // The host record on the stack of the function, made once in its entry
  // block (the call may sit in a loop).
  auto fn = before->getParentOfType<func::FuncOp>();
  OpBuilder top = OpBuilder::atBlockBegin(&fn.getBody().front());
  auto host = memref::AllocaOp::create(top, loc, type);
  OpBuilder b(before);
  SmallVector<Value> slots(type.getNumElements());
  for (auto [value, slot] : values)
    slots[slot] = value;
  for (auto [slot, value] : llvm::enumerate(slots)) {
    Value index = arith::ConstantIndexOp::create(b, loc, slot);
    Value bits = value ? toSlot(b, loc, value)
                       : arith::ConstantIntOp::create(b, loc, 0, 64);
    memref::StoreOp::create(b, loc, bits, host, index);
  }
  auto device = gpu::AllocOp::create(b, loc, type, Type(), ValueRange(),
                                     ValueRange(), ValueRange());
  gpu::MemcpyOp::create(b, loc, Type(), ValueRange(), device.getMemref(), host);
  return device.getMemref();
}

bool Rewriter::dependsOnRecord(Value value, const Record &record) {
  if (record.slots.count(value))
    return true;
  Operation *def = value.getDefiningOp();
  return def && isScalarArithmetic(def) &&
         llvm::any_of(def->getOperands(), [&](Value operand) {
           return dependsOnRecord(operand, record);
         });
}

Value Rewriter::materialize(Value value, const Record &record,
                            Operation *before, DenseMap<Value, Value> &made) {
  if (Value done = made.lookup(value))
    return done;
  if (!dependsOnRecord(value, record))
    return nullptr;
  OpBuilder b(before);
  Location loc = value.getLoc();
  Value result;
  if (auto it = record.slots.find(value); it != record.slots.end()) {
    Value index = arith::ConstantIndexOp::create(b, loc, it->second);
    Value bits = memref::LoadOp::create(b, loc, record.buffer, index);
    result = fromSlot(b, loc, bits, value.getType());
  } else {
    Operation *def = value.getDefiningOp();
    IRMapping mapping;
    for (Value operand : def->getOperands())
      if (Value inside = materialize(operand, record, before, made))
        mapping.map(operand, inside);
    b.setInsertionPoint(before);
    Operation *clone = b.clone(*def, mapping);
    for (auto [from, to] : llvm::zip(def->getResults(), clone->getResults()))
      made[from] = to;
    result = made.lookup(value);
  }
  made[value] = result;
  return result;
}

bool Rewriter::rewriteLaunch(gpu::LaunchOp launch, const Record &record) {
  Region &body = launch.getBody();
  // (Bodies of several blocks keep their parameters.)
  if (!body.hasOneBlock())
    return false;
  SetVector<Value> above;
  getUsedValuesDefinedAbove(body, above);
  Block &top = body.front();
  // Each top-level op of the body (a part between barriers, in a launch
  // with any) gets its own loads, made right before it: nothing crosses
  // a barrier, and no load sits in a loop.
  DenseMap<Operation *, DenseMap<Value, Value>> madeBefore;
  bool reads = false;
  for (Value value : above) {
    if (!dependsOnRecord(value, record))
      continue;
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : value.getUses())
      if (launch->isProperAncestor(use.getOwner()))
        uses.push_back(&use);
    for (OpOperand *use : uses) {
      Operation *owner = top.findAncestorOpInBlock(*use->getOwner());
      Value inside = materialize(value, record, owner, madeBefore[owner]);
      use->set(inside);
      reads = true;
    }
  }
  return reads;
}

int64_t Rewriter::run() {
  int64_t reading = 0;
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal())
      functions.push_back(fn);
  // Calls of the host code (a kernel's calls are not the host's).
  for (func::FuncOp fn : functions)
    fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (auto call = dyn_cast<func::CallOp>(op)) {
        auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
        if (callee && !callee.isExternal())
          callers[callee].push_back(call);
      }
      return WalkResult::advance();
    });

  assignRecords();

  // How each call passes a record, decided before any call changes.
  SmallVector<std::pair<func::CallOp, bool>> calls;
  for (auto &[callee, sites] : callers) {
    auto it = records.find(callee);
    if (it == records.end())
      continue;
    for (func::CallOp call : sites)
      calls.push_back({call, passesRecord(call, it->second)});
  }

  // The records themselves: an entry point fills one before its first
  // launch or call (after the argument reads qtrain-hoist-argument-reads
  // put first, which cost no wait there); any other function takes one
  // as a new last argument.
  for (func::FuncOp fn : functions) {
    auto it = records.find(fn);
    if (it == records.end())
      continue;
    Record &record = it->second;
    Block &entry = fn.getBody().front();
    if (callers.count(fn)) {
      SmallVector<Type> inputs(fn.getArgumentTypes());
      inputs.push_back(record.type);
      fn.setType(
          FunctionType::get(fn.getContext(), inputs, fn.getResultTypes()));
      record.buffer = entry.addArgument(record.type, fn.getLoc());
      continue;
    }
    Operation *first = entry.getTerminator();
    for (Operation &op : entry) {
      bool works = false;
      op.walk([&](Operation *nested) {
        if (isa<gpu::LaunchOp, func::CallOp>(nested))
          works = true;
      });
      if (works) {
        first = &op;
        break;
      }
    }
    SmallVector<std::pair<Value, int64_t>> values(record.slots.begin(),
                                                  record.slots.end());
    record.buffer = makeRecord(first, record.type, values);
    fn.walk([&](func::ReturnOp ret) {
      OpBuilder at(ret);
      gpu::DeallocOp::create(at, ret.getLoc(), Type(), ValueRange(),
                             record.buffer);
    });
  }
  for (auto [call, passes] : calls) {
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
    const Record &record = records.find(callee)->second;
    Value buffer;
    if (passes) {
      buffer =
          records.find(call->getParentOfType<func::FuncOp>())->second.buffer;
    } else {
      // A record for this call alone, from its operands.
      SmallVector<std::pair<Value, int64_t>> values;
      for (auto [argument, slot] : record.slots)
        values.push_back(
            {call.getOperand(cast<BlockArgument>(argument).getArgNumber()),
             slot});
      buffer = makeRecord(call, record.type, values);
      OpBuilder after(call->getContext());
      after.setInsertionPointAfter(call);
      gpu::DeallocOp::create(after, call.getLoc(), Type(), ValueRange(),
                             buffer);
    }
    call->insertOperands(call->getNumOperands(), buffer);
  }
  for (func::FuncOp fn : functions) {
    auto it = records.find(fn);
    if (it == records.end())
      continue;
    SmallVector<gpu::LaunchOp> launches;
    fn.walk([&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches)
      reading += rewriteLaunch(launch, it->second);
  }
  return reading;
}

} // namespace

void ArgumentsToDevicePass::runOnOperation() {
  numLaunches += Rewriter(getOperation()).run();
}
