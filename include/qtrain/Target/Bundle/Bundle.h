//===- Bundle.h - Write a training bundle -----------------------*- C++ -*-===//
//
// The compiler side of docs/bundle.md: what the manifest says about a
// materialized training module, the ABI digest, object code for the host,
// and the bundle directory (the packed entry points are a pass, Passes.h).
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_TARGET_BUNDLE_BUNDLE_H
#define QTRAIN_TARGET_BUNDLE_BUNDLE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::qtrain {

/// A tensor of the step's interface.
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype; // "f32" or "i64"
  /// Parameters: "kaiming_uniform", "bias_uniform" or "file".
  std::string init;
  int64_t fanIn = 0;
  /// The initial value (qtrain.init) of a "file" parameter, raw bytes.
  std::vector<char> data;
  /// State tensors: what they are for ("ema", "loss_scale", "promotion" or
  /// "overflow"), and the names of their elements (qtrain.tensors).
  std::string kind;
  std::vector<std::string> tensors;
  /// State tensors with a qtrain.init (LDP's lambda): the initial values.
  std::vector<float> initValues;
};

/// A kernel site and its precisions.
struct SiteInfo {
  std::string name, op;
  int64_t macs = 0;
  std::vector<std::pair<int, int>> precisions;
  /// Per precision, the kernel kind ("i8", "i16", "f32", "f64") of each
  /// product of the training step, by product name.
  std::vector<std::map<std::string, std::string>> kernels;
  /// LDP: the name of the parameter whose value gives the site's bits
  /// (qtrain.precision); empty otherwise.
  std::string precision;
};

/// What the manifest says, read from the module after
/// qtrain-materialize-variants and before lowering.
struct StepInfo {
  int64_t batch = 0, classes = 0;
  TensorInfo input, labels;
  std::vector<TensorInfo> parameters, state;
  std::vector<std::string> controls;
  std::vector<SiteInfo> sites;
  /// The SHA-256 of the linked library, 64 hex digits (manifest
  /// "library_sha256"); empty: not written.
  std::string librarySha256;
};

/// Reads @train_step, @eval_step and qtrain.sites; errors name what is
/// missing.
FailureOr<StepInfo> collectStepInfo(ModuleOp module);

/// Adds the library's ABI digest to a module lowered to the LLVM dialect:
/// exported constant NUL-terminated strings `qtrain_abi_description`
/// (`description`: what the runtime relies on from the manifest,
/// qtrain::rt::abiDescription) and `qtrain_abi_digest` (`digest`, its
/// SHA-256 in hex). The runtime recomputes both from the manifest it reads
/// and refuses a library compiled for another (docs/bundle.md, "Trust").
LogicalResult addAbiDigest(ModuleOp module, StringRef description,
                           StringRef digest);

/// Fails, with the reason in `error`, unless `cpu` ("native" or an LLVM
/// CPU name) names a CPU of the host's target.
LogicalResult checkTargetCpu(StringRef cpu, std::string &error);

/// Translates the LLVM-dialect module to LLVM IR, optimizes it (O3) and
/// emits an object file for the host triple and `cpu` ("native" for the
/// host CPU, or a name such as "x86-64" for a portable bundle).
LogicalResult emitObjectFile(ModuleOp module, StringRef cpu, StringRef path);

/// The text of manifest.json (what writeManifest writes).
std::string renderManifest(const StepInfo &info, StringRef library,
                           StringRef schedule, StringRef gradSchedule,
                           StringRef flags);

/// Writes manifest.json and params/*.bin into `dir`. `library` is the
/// shared object's file name, `flags` the compiler's command line.
LogicalResult writeManifest(const StepInfo &info, StringRef dir,
                            StringRef library, StringRef schedule,
                            StringRef gradSchedule, StringRef flags,
                            Location loc);

} // namespace mlir::qtrain

#endif // QTRAIN_TARGET_BUNDLE_BUNDLE_H
