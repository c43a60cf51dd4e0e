//===- Bundle.h - Reading a compiled bundle ---------------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The runtime side of the compiler -> runtime seam (docs/bundle.md, format
/// version 1). A bundle is a directory with a manifest.json, a shared
/// library exporting the packed step entry points and every kernel variant,
/// and optional parameter files. openBundle() reads and validates all of
/// it up front, so that a Bundle, once open, is known to be usable:
///
///   * manifest.json parses and has every required field with its type
///     (unknown fields are ignored, so version-1 manifests may grow);
///   * `format` is "qtrain-bundle" and `version` is 1;
///   * shapes are static and positive; input.shape[0] == labels.shape[0] ==
///     batch; there is at least one parameter; parameter, state and site
///     names are unique; a variant's (bits, grad_bits) is unique within
///     its site; `controls` is exactly the ABI's [bits, grad_bits, seed,
///     step];
///   * the schedules parse (Schedule.h's grammar);
///   * every path is relative and stays in the bundle (no `..`);
///   * the library loads (dlopen RTLD_NOW | RTLD_LOCAL) and exports both
///     entry points and every variant symbol;
///   * `file` inits are exactly numel * 4 bytes; they are read here.
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

#include "qtrain/runtime/Status.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace qtrain::rt {

/// The bundle format version this runtime reads.
constexpr int kBundleFormatVersion = 1;

/// What went wrong, for callers (the C API) that map failures to codes.
/// Status itself carries only the message.
enum class ErrorKind {
  None,
  /// A null pointer, an out-of-range value or an invalid option.
  InvalidArgument,
  /// A file could not be read or the library could not be loaded.
  Io,
  /// The bundle is malformed: bad JSON, a missing or ill-typed field, a
  /// missing symbol, a parameter file of the wrong size.
  Format,
  /// Well-formed but not supported by this runtime (another format
  /// version, a learned schedule).
  Unsupported,
  /// The schedule asks for a (bits, grad_bits) some site has no variant for.
  MissingVariant,
  /// A buffer could not be allocated.
  OutOfMemory,
  /// A training step produced non-finite parameters or momentum that no
  /// loss scale can absorb: training diverged (Trainer::step()).
  Diverged,
};

/// Element types of bundle tensors.
enum class DType { F32, I64 };

/// A named tensor of static shape. Rank 0 is a scalar (numel 1).
struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  /// Product of the shape.
  int64_t numel = 1;
};

enum class InitKind {
  /// U(-b, b) with b = 1 / sqrt(fan_in): PyTorch's default for conv/linear
  /// weights (kaiming_uniform with a = sqrt(5)).
  KaimingUniform,
  /// U(-b, b) with b = 1 / sqrt(fan_in): PyTorch's default bias.
  BiasUniform,
  Zeros,
  /// All 1.0: PyTorch's default for normalization scales.
  Ones,
  /// Raw little-endian f32 values from a file in the bundle.
  File,
};

struct InitSpec {
  InitKind kind = InitKind::Zeros;
  /// KaimingUniform and BiasUniform.
  int64_t fanIn = 0;
  /// File: relative to the bundle directory.
  std::string path;
};

struct ParameterSpec : TensorSpec {
  InitSpec init;
};

struct StateSpec : TensorSpec {
  /// What the state is for: "ema", "loss_scale", "promotion", "overflow"
  /// (docs/bundle.md); other kinds are carried along.
  std::string kind;
  /// The names of its elements, when each stands for a tensor of the step
  /// (the manifest's optional "tensors"); empty otherwise.
  std::vector<std::string> tensors;
  /// The initial values (the manifest's optional "init", numel finite
  /// numbers, e.g. LDP's default lambda); empty: zeros.
  std::vector<float> init;
};

/// One precompiled kernel variant of a site.
struct VariantSpec {
  /// Forward bits; 0 is fp32.
  int bits = 0;
  /// Backward (error) bits; 0 is fp32.
  int gradBits = 0;
  /// The function the library exports for this variant.
  std::string symbol;
  /// The kernel kind of each product of the training step at this
  /// precision ("forward", "input_grad", "weight_grad" -> "i8", "i16",
  /// "f32" or "f64"); empty when the manifest does not say.
  std::map<std::string, std::string> kernels;
};

/// A quantized GEMM/conv of the compiled step and the variants it has.
struct SiteSpec {
  std::string name;
  std::string op;
  /// Multiply-accumulates of the forward product per step.
  int64_t macs = 0;
  /// Index j is the value the runtime writes to this site's slot.
  std::vector<VariantSpec> variants;
  /// LDP (the manifest's optional "precision"): the name and index of the
  /// scalar parameter p whose value gives the site's bits (ldpBits);
  /// empty and -1 otherwise.
  std::string precision;
  int64_t precisionParameter = -1;
};

struct CompilerInfo {
  std::string name;
  std::string version;
  std::string flags;
};

/// manifest.json as plain data (docs/bundle.md).
struct Manifest {
  std::string format;
  int version = 0;
  CompilerInfo compiler;
  /// Relative to the bundle directory.
  std::string library;
  /// The SHA-256 of the library (64 lowercase hex digits), checked before
  /// it is loaded; empty when the manifest has none (hand-made bundles).
  std::string librarySha256;
  std::string trainEntry;
  std::string evalEntry;
  int64_t batch = 0;
  int64_t classes = 0;
  /// dtype F32, shape[0] == batch.
  TensorSpec input;
  /// dtype I64, shape[0] == batch; named "labels".
  TensorSpec labels;
  std::vector<ParameterSpec> parameters;
  std::vector<StateSpec> state;
  std::vector<std::string> controls;
  /// The default schedules (Schedule.h strings); both parse.
  std::string schedule;
  std::string gradSchedule;
  std::vector<SiteSpec> sites;
};

/// Parses and validates manifest text (everything openBundle() checks that
/// needs no other file). `fileName` prefixes every message. On failure
/// `out` is unspecified.
Status parseManifest(std::string_view text, const std::string &fileName,
                     Manifest &out, ErrorKind *kind = nullptr);

/// What the runtime relies on from a manifest to call its library, as
/// text: one line per fact, each starting with the manifest path it comes
/// from ("parameters[1] param1 f32 [256] init bias_uniform fan_in 784").
/// It covers the entry points, batch, classes, input, labels, controls,
/// parameters (order, names, shapes, init), state (order, names, shapes,
/// kinds, element names, init), the default schedules and the sites (name,
/// op, MACs, precision parameter, and each variant's bits, symbol and
/// kernels); not the compiler's flags, the library's path or its SHA-256.
/// qtrain-compile embeds it and its SHA-256 in the library
/// (kAbiDescriptionSymbol, kAbiDigestSymbol); openBundle recomputes both
/// from the manifest it read and refuses a library compiled for another
/// (docs/bundle.md, "Trust").
std::string abiDescription(const Manifest &manifest);
/// The SHA-256 of abiDescription(manifest), 64 lowercase hex digits.
std::string abiDigest(const Manifest &manifest);
/// The library's data symbols: NUL-terminated strings.
constexpr const char *kAbiDigestSymbol = "qtrain_abi_digest";
constexpr const char *kAbiDescriptionSymbol = "qtrain_abi_description";

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
  /// allocations (qtrain/ukernels.h); bundles from qtrain-compile do.
  bool hasStepMemoryControl() const { return memorySetLimit != nullptr; }
  /// The most bytes the step's buffers may hold at once (0: no limit).
  /// InvalidArgument when the library has no such control.
  /// The limit belongs to the loaded library, so every Trainer of this
  /// bundle shares it.
  Status setStepMemoryLimit(int64_t bytes, ErrorKind *kind = nullptr) const;
  /// Runs `step` (the train or eval entry) on `args`. When an allocation
  /// inside it fails (out of memory, or past the limit), the step is
  /// abandoned: its buffers are released and OutOfMemory is returned with
  /// the sizes. The step's outputs are then unspecified.
  Status runStep(StepFunction step, void **args,
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

private:
  friend Status openBundle(const std::string &, std::unique_ptr<Bundle> &,
                           ErrorKind *);
  Bundle() = default;

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
  std::vector<std::vector<void *>> variantAddresses;
  std::vector<std::vector<float>> fileInits;
};

/// Opens the bundle directory `dir`: reads and validates its manifest,
/// loads its library and parameter files (see the file comment). On
/// failure `out` is left unchanged and `*kind` (when given) says what kind
/// of failure it was.
Status openBundle(const std::string &dir, std::unique_ptr<Bundle> &out,
                  ErrorKind *kind = nullptr);

/// Whether the bundle learns its precisions per site (LDP): some site names
/// a precision parameter.
bool learnsPrecisions(const Manifest &manifest);

/// "f32" or "i64".
std::string_view toString(DType dtype);
/// The manifest's spelling: "kaiming_uniform", "bias_uniform", "zeros",
/// "ones",
/// "file".
std::string_view toString(InitKind kind);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_BUNDLE_H
