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

#include "qtrain/runtime/Manifest.h"

#include <string>
#include <vector>

namespace mlir::qtrain {

/// What a bundle holds besides its library: the manifest, in the schema
/// the runtime reads (qtrain/runtime/Manifest.h), and the initial values
/// of its "file" parameters.
struct BundleContents {
  ::qtrain::rt::Manifest manifest;
  /// By parameter index: the raw bytes of a File parameter's values
  /// (its init.path, params/NAME.bin); empty for the others.
  std::vector<std::vector<char>> paramFiles;
};

/// Reads the manifest from a module after qtrain-materialize-variants and
/// before lowering: @train_step, @eval_step and qtrain.sites give the
/// interface and the sites; errors name what is missing. The library, the
/// compiler's flags, the schedules and the library's SHA-256 are left for
/// the caller to fill.
FailureOr<BundleContents> collectBundleContents(ModuleOp module);

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

/// Writes manifest.json (qtrain::rt::printManifest) and params/*.bin into
/// `dir`.
LogicalResult writeBundleFiles(const BundleContents &contents, StringRef dir,
                               Location loc);

} // namespace mlir::qtrain

#endif // QTRAIN_TARGET_BUNDLE_BUNDLE_H
