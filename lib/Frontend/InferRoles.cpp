//===- InferRoles.cpp - Roles in a training step with its backward --------===//
//
// qtrain-infer-roles: assigns qtrain.role to every tensor-valued op of a
// training step that already contains its backward pass (hand-written, or a
// joint forward/backward graph such as aot_autograd's lowered by
// torch-mlir), with the same meaning qtrain-autodiff gives them.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Frontend/Passes.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"

#include "mlir/IR/Remarks.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_INFERROLESPASS
#include "qtrain/Frontend/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct InferRolesPass : mlir::qtrain::impl::InferRolesPassBase<InferRolesPass> {
  using InferRolesPassBase::InferRolesPassBase;
  void runOnOperation() override;
};

} // namespace

static std::optional<Role> argRole(func::FuncOp fn, unsigned i) {
  if (fn.getArgAttr(i, kParamAttrName))
    return Role::Weight;
  if (auto role = fn.getArgAttrOfType<RoleAttr>(i, kRoleAttrName))
    return role.getValue();
  return std::nullopt;
}

void InferRolesPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  if (!fn || fn.isExternal() || !fn.getBody().hasOneBlock()) {
    module.emitError("qtrain-infer-roles: no function @")
        << entry << " with a body of one block (set entry=<name>)";
    return signalPassFailure();
  }

  // Seeds: parameters are weights; arguments marked as errors (the
  // cotangents a joint graph takes) start the backward pass.
  llvm::DenseMap<Value, Role> roles;
  bool hasParam = false, hasSeed = false;
  for (BlockArgument arg : fn.getArguments()) {
    std::optional<Role> role = argRole(fn, arg.getArgNumber());
    // Other tensor inputs (the data batch) are activations.
    if (!role && isa<RankedTensorType>(arg.getType()))
      role = Role::Activation;
    if (!role)
      continue;
    roles[arg] = *role;
    hasParam |= *role == Role::Weight;
    hasSeed |= *role == Role::Error;
  }
  if (!hasParam || !hasSeed) {
    fn.emitError("qtrain-infer-roles: @")
        << entry << " needs parameters ({qtrain.param}) and the gradient "
        << "that starts its backward pass (an argument with "
        << "{qtrain.role = #qtrain<role error>})";
    return signalPassFailure();
  }

  // Forward propagation: anything computed from an error is an error;
  // anything computed only from weights through layout ops is a weight;
  // everything else computed from tagged values is an activation.
  unsigned counts[4] = {0, 0, 0, 0};
  auto record = [&](Operation *op, Role role) {
    for (Value r : op->getResults())
      roles[r] = role;
    if (isa<tensor::EmptyOp, FakeQuantOp, GradQuantOp, GradRoundFloatOp,
            RangeEmaOp, RoundFloatOp>(op) ||
        llvm::none_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>))
      return;
    op->setAttr(kRoleAttrName, RoleAttr::get(ctx, role));
    ++counts[static_cast<unsigned>(role)];
  };
  // Ops that read no tagged value (constants, tensor.empty, fills of
  // constants) compute no data of the step and get no role.
  for (Operation &op : fn.getBody().front().without_terminator()) {
    bool fromError = false, allWeights = true, anyTagged = false;
    for (Value v : op.getOperands()) {
      auto it = roles.find(v);
      if (it == roles.end())
        continue;
      anyTagged = true;
      fromError |= it->second == Role::Error || it->second == Role::WeightGrad;
      allWeights &= it->second == Role::Weight;
    }
    if (!anyTagged)
      continue;
    if (fromError) {
      record(&op, Role::Error);
      continue;
    }
    bool layout = isa<linalg::TransposeOp, tensor::ExpandShapeOp,
                      tensor::CollapseShapeOp, FakeQuantOp>(op);
    record(&op, allWeights && layout ? Role::Weight : Role::Activation);
  }

  // The gradient of a parameter: a backward value returned by the step,
  // either marked {qtrain.role = #qtrain<role weight_grad>} as a result, or
  // consumed by an op that also reads a parameter of the same type (the
  // optimizer update).
  auto returnOp = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  auto markGrad = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || roles.lookup(v) != Role::Error)
      return;
    def->setAttr(kRoleAttrName, RoleAttr::get(ctx, Role::WeightGrad));
    roles[v] = Role::WeightGrad;
    ++counts[static_cast<unsigned>(Role::WeightGrad)];
    --counts[static_cast<unsigned>(Role::Error)];
  };
  for (auto [i, v] : llvm::enumerate(returnOp.getOperands())) {
    auto role = fn.getResultAttrOfType<RoleAttr>(i, kRoleAttrName);
    if (role && role.getValue() == Role::WeightGrad)
      markGrad(v);
  }
  for (Operation &op : fn.getBody().front().without_terminator()) {
    bool readsParam = llvm::any_of(op.getOperands(), [&](Value v) {
      auto arg = dyn_cast<BlockArgument>(v);
      return arg && fn.getArgAttr(arg.getArgNumber(), kParamAttrName);
    });
    if (!readsParam || roles.lookup(op.getResult(0)) != Role::Error)
      continue;
    for (Value v : op.getOperands()) {
      auto arg = dyn_cast<BlockArgument>(v);
      if (arg || roles.lookup(v) != Role::Error)
        continue;
      bool sameTypeAsParam = llvm::any_of(op.getOperands(), [&](Value p) {
        auto a = dyn_cast<BlockArgument>(p);
        return a && fn.getArgAttr(a.getArgNumber(), kParamAttrName) &&
               p.getType() == v.getType();
      });
      if (sameTypeAsParam)
        markGrad(v);
    }
  }
  remark::analysis(fn.getLoc(), remark::RemarkOpts::name("roles")
                                    .category(getArgument())
                                    .function(fn.getSymName()))
      << llvm::formatv("roles: {0} weight, {1} activation, {2} error, {3} "
                       "weight_grad",
                       counts[0], counts[1], counts[2], counts[3])
             .str();
}
