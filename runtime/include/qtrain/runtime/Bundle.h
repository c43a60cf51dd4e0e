//===- Bundle.h - Reading a compiled bundle ---------------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The runtime side of the compiler -> runtime seam (docs/bundle.md, format
/// version kBundleFormatVersion). A bundle is a directory with a
/// manifest.json (Manifest.h), a shared library exporting the packed step
/// entry points and every kernel variant, and optional parameter files.
/// openBundle() reads and validates all of it up front, so that a Bundle,
/// once open, is known to be usable:
///
///   * the manifest is valid (parseManifest(), Manifest.h);
///   * the library is a regular, complete shared object of this machine,
///     its SHA-256 is the manifest's `library_sha256` (when given), it
///     loads (dlopen RTLD_NOW | RTLD_LOCAL), its ABI digest (when it has
///     one, Abi.h) is the manifest's, and it exports both entry points and
///     every variant symbol;
///   * `file` inits are exactly numel * 4 bytes; they are read here;
///   * with a CUDA target (docs/cuda.md), the module file is a regular
///     file whose SHA-256 is the manifest's `cuda.module_sha256`, and it
///     looks like its `cuda.format`: a cubin is a 64-bit little-endian ELF
///     file for EM_CUDA (190), PTX is text with a `.version` and a
///     `.target <chip>` line. It is read here, not loaded: that needs the
///     driver (CudaDriver.h), which a CPU run never touches.
///
/// Every error names the file it is about and, for the manifest, the JSON
/// path of the offending field:
///   .../manifest.json: parameters[2].shape[1]: expected a positive integer
///
/// A Bundle owns the library handle and closes it when destroyed; share it
/// (std::shared_ptr) with the Trainers that use it.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_BUNDLE_H
#define QTRAIN_RUNTIME_BUNDLE_H

#include "qtrain/runtime/Abi.h"
#include "qtrain/runtime/ErrorKind.h"
#include "qtrain/runtime/Manifest.h"
#include "qtrain/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace qtrain::rt {

/// The packed entry points' type: `args[i]` points to the i-th argument.
using StepFunction = void (*)(void **args);

/// An open bundle: the validated manifest, the loaded library and the
/// contents of the parameter files. Not copyable.
class Bundle {
public:
  ~Bundle();
  Bundle(const Bundle &) = delete;
  Bundle &operator=(const Bundle &) = delete;

  /// The directory as given to openBundle() (without trailing slashes).
  const std::string &getDirectory() const { return directory; }
  const Manifest &getManifest() const { return manifest; }
  StepFunction getTrainStep() const { return trainStep; }
  StepFunction getEvalStep() const { return evalStep; }
  /// The library's allocator statistics (bytes held now, peak since the
  /// last reset), or null when it has none.
  using MemoryStatsFunction = void (*)(int64_t *current, int64_t *peak);
  MemoryStatsFunction getMemoryStats() const { return memoryStats; }
  void (*getMemoryResetPeak() const)() { return memoryResetPeak; }
  /// Whether the library's allocator takes a limit and reports failed
  /// allocations (qtrain/microkernels.h); bundles from qtrain-compile do.
  bool hasStepMemoryControl() const { return memorySetLimit != nullptr; }
  /// The most bytes the step's buffers may hold at once (0: no limit).
  /// InvalidArgument when the library has no such control.
  /// The limit belongs to the loaded library, so every Trainer of this
  /// bundle shares it.
  Status setStepMemoryLimit(int64_t bytes, ErrorKind *kind = nullptr) const;
  /// Runs `step` (the train or eval entry) on `args`, on `threads` threads
  /// of the library's thread pool (libraries without one run on the
  /// calling thread); results do not depend on the count. When an
  /// allocation inside it fails (out of memory, or past the limit), the
  /// step is abandoned: its buffers are released and OutOfMemory is
  /// returned with the sizes. The step's outputs are then unspecified.
  Status runStep(StepFunction step, void **args, int threads = 1,
                 ErrorKind *kind = nullptr) const;
  /// The address of variant `variant` of site `site`.
  void *getVariantAddress(size_t site, size_t variant) const {
    return variantAddresses[site][variant];
  }
  /// The values read from the file of parameter `index` when its init is
  /// File (numel floats), else empty.
  const std::vector<float> &getFileInit(size_t index) const {
    return fileInits[index];
  }
  /// The checked bytes of the CUDA module file (empty without a CUDA
  /// target); CudaModule::load() loads exactly these.
  const std::string &getCudaModuleImage() const { return cudaModuleImage; }
  /// The module file's path (the directory and cuda.module), for messages.
  std::string getCudaModulePath() const {
    return (directory == "/" ? "" : directory) + "/" + manifest.cuda.module;
  }

private:
  friend Status openBundle(const std::string &, std::unique_ptr<Bundle> &,
                           ErrorKind *);
  Bundle() = default;
  /// Looks up the library's step memory limit and failure handler
  /// (qtrain/microkernels.h) and installs the handler that lets runStep()
  /// abandon a step (StepRecovery.cpp); without all of them, neither
  /// setStepMemoryLimit() nor the recovery is available.
  void bindStepRecovery();

  std::string directory;
  Manifest manifest;
  void *handle = nullptr;
  StepFunction trainStep = nullptr;
  StepFunction evalStep = nullptr;
  MemoryStatsFunction memoryStats = nullptr;
  void (*memoryResetPeak)() = nullptr;
  void (*memorySetLimit)(int64_t) = nullptr;
  int64_t (*memoryBegin)() = nullptr;
  void (*memoryEnd)(int64_t, int32_t) = nullptr;
  void (*setNumThreads)(int32_t) = nullptr;
  std::vector<std::vector<void *>> variantAddresses;
  std::vector<std::vector<float>> fileInits;
  std::string cudaModuleImage;
};

/// Opens the bundle directory `dir`: reads and validates its manifest,
/// loads its library and parameter files (see the file comment). On
/// failure `out` is left unchanged and `*kind` (when given) says what kind
/// of failure it was.
Status openBundle(const std::string &dir, std::unique_ptr<Bundle> &out,
                  ErrorKind *kind = nullptr);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_BUNDLE_H
