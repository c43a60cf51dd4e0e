//===- FloatFormatNames.h - Shared by the float-format passes ---*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What qtrain-assign-precision and qtrain-insert-rounding must agree on:
/// the names of the step's tensors (insert-rounding writes them into the
/// manifest, the overflow profile repeats them, and assign-precision maps a
/// profile back to its groups by them) and the #qtrain.float of a format.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_LIB_TRANSFORMS_FLOATFORMATNAMES_H
#define QTRAIN_LIB_TRANSFORMS_FLOATFORMATNAMES_H

#include "QTrain/QTrainAttrs.h"
#include "qtrain/runtime/FloatFormat.h"

#include "mlir/IR/Operation.h"
#include "llvm/Support/Path.h"

#include <string>

namespace mlir::qtrain {

/// An op's name without "linalg." and where it is:
/// "conv_2d_nchw_fchw at model.mlir:43".
inline std::string describeOp(Operation *op) {
  StringRef name = op->getName().getStringRef();
  name.consume_front("linalg.");
  std::string text = name.str();
  if (auto file = dyn_cast<FileLineColLoc>(op->getLoc()))
    text += " at " + llvm::sys::path::filename(file.getFilename()).str() + ":" +
            std::to_string(file.getLine());
  return text;
}

/// "P of argument N" (a parameter) or "Y of argument N" (an input).
inline std::string argumentTensorName(bool parameter, unsigned argNumber) {
  return (parameter ? "P of argument " : "Y of argument ") +
         std::to_string(argNumber);
}

/// "Y of <describeOp(op)>": the output of a module op.
inline std::string outputTensorName(Operation *op) {
  return "Y of " + describeOp(op);
}

/// `format` as a #qtrain.float.
inline FloatFormatAttr toFormatAttr(MLIRContext *ctx,
                                    const ::qtrain::rt::FloatFormat &format,
                                    bool saturate) {
  return FloatFormatAttr::get(ctx, format.exponentBits, format.mantissaBits,
                              format.extraBias, saturate);
}

} // namespace mlir::qtrain

#endif // QTRAIN_LIB_TRANSFORMS_FLOATFORMATNAMES_H
