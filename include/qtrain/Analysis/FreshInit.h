//===- FreshInit.h - PyTorch's default init of a parameter ------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The initialization PyTorch gives a layer's parameter by default, chosen
/// from how the forward graph uses the parameter: the weight of a
/// convolution or matmul is kaiming-uniform over its layer's fan-in, the
/// bias of such a layer bias-uniform over the same fan-in, the scale of a
/// normalization ones and its shift zeros. The fan-in is the product of the
/// layer's reduction loops (in_channels / groups * kh * kw for every
/// convolution layout, K for a matmul whatever the layout of its weight), not
/// a guess from the parameter's shape. A table that a `linalg.generic` reads
/// with `tensor.extract` at computed indices (an embedding lookup) is
/// N(0, 1), as nn.Embedding's, even when a layer also uses it (tied
/// weights take the embedding's init in PyTorch).
///
/// qtrain-lift-params asks it for the parameters it initializes afresh and
/// qtrain-autodiff for the hand-written parameters without an initial
/// value; both record the answer as the argument attribute qtrain.fresh_init,
/// which the bundle manifest turns into the parameter's `init`.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_ANALYSIS_FRESHINIT_H
#define QTRAIN_ANALYSIS_FRESHINIT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <string>

namespace mlir::qtrain {

/// The runtime's initializations other than a file (rt::InitKind).
enum class FreshInitKind { KaimingUniform, BiasUniform, Ones, Zeros, Normal };

struct FreshInit {
  FreshInitKind kind = FreshInitKind::Zeros;
  /// KaimingUniform and BiasUniform: the bound is 1 / sqrt(fanIn).
  int64_t fanIn = 0;
  /// Whether a use put the parameter in a layer's weight position; when
  /// false the choice comes from the shape alone.
  bool fromUse = false;
  /// Why, for remarks: "the filter of linalg.conv_2d_nchw_fchw, fan_in 9
  /// (reduction loops 1x3x3)".
  std::string reason;
};

/// The name the manifest uses: "kaiming_uniform", "bias_uniform", "ones",
/// "zeros", "normal".
StringRef stringifyFreshInitKind(FreshInitKind kind);
std::optional<FreshInitKind> symbolizeFreshInitKind(StringRef name);

/// The initialization of `param` (a function argument or a constant's
/// result) from its uses. Without a recognized use, a tensor of rank 2 or
/// more gets kaiming-uniform with fan_in = prod(shape[1:]) and anything
/// else zeros.
FreshInit inferFreshInit(Value param);

/// qtrain.fresh_init's value: {kind = "...", fan_in = N : i64}.
DictionaryAttr getFreshInitAttr(MLIRContext *ctx, const FreshInit &init);
/// The initialization an attribute built by getFreshInitAttr describes, or
/// nullopt for anything else.
std::optional<FreshInit> readFreshInitAttr(Attribute attr);

} // namespace mlir::qtrain

#endif // QTRAIN_ANALYSIS_FRESHINIT_H
