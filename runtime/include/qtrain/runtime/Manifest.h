//===- Manifest.h - The bundle manifest schema ------------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// manifest.json (docs/bundle.md) as plain C++ data, with its one reader
/// and its one writer side by side: the compiler fills a Manifest and
/// writes it with printManifest(), the runtime reads it back with
/// parseManifest(). Neither needs LLVM, so the schema lives once.
///
/// parseManifest() checks everything that needs no other file:
///
///   * the text parses and has every required field with its type
///     (unknown fields are ignored, so version-1 manifests may grow);
///   * `format` is "qtrain-bundle" and `version` is kBundleFormatVersion;
///   * shapes are static and positive; input.shape[0] == labels.shape[0] ==
///     batch; the input is f32 or i64, and only an i64 one has a
///     max_value; there is at least one parameter; parameter, state and site
///     names are unique; a variant's (bits, grad_bits) is unique within
///     its site; `controls` is exactly the ABI's [bits, grad_bits, seed,
///     step];
///   * the schedules parse (Schedule.h's grammar);
///   * every path is relative and stays in the bundle (no `..`).
///
/// Every error names the file and the JSON path of the offending field:
///   .../manifest.json: parameters[2].shape[1]: expected a positive integer
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_MANIFEST_H
#define QTRAIN_RUNTIME_MANIFEST_H

#include "qtrain/runtime/ErrorKind.h"
#include "qtrain/runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace qtrain::rt {

/// The manifest's `format`.
constexpr const char *kBundleFormat = "qtrain-bundle";
/// The bundle format version this code writes and reads.
constexpr int kBundleFormatVersion = 1;

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
  /// N(0, 1): PyTorch's default for embedding tables (nn.Embedding).
  Normal,
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
  /// "f32", "bf16" or "f64"); empty when the manifest does not say.
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
  /// LDP (the manifest's optional "precision"): the name of the scalar
  /// parameter p whose value gives the site's bits (ldpBits); empty
  /// otherwise. The reader also sets its index; the writer needs only the
  /// name.
  std::string precision;
  int64_t precisionParameter = -1;
  /// The bundle's CUDA target (docs/cuda.md): for each product of the site
  /// ("forward", "input_grad", "weight_grad"), the name of its GPU GEMM
  /// kernel per kind ("f32", "tf32", "bf16", "fp8", "i8"), an entry of
  /// CudaTargetSpec::kernels. Empty without a CUDA target.
  std::map<std::string, std::map<std::string, std::string>> cudaKernels;
};

/// The kinds of GPU GEMM kernels, in the manifest's spelling: fp32 on the
/// CUDA cores (exact fp32 products), tf32, bf16 and fp8 (e4m3 forward,
/// e5m2 errors) tensor cores with fp32 accumulation, and int8 tensor cores
/// on the centred codes of the integer grids up to 8 bits with exact int32
/// sums.
constexpr const char *kCudaKernelKinds[] = {"f32", "tf32", "bf16", "fp8", "i8"};

/// One generated GPU kernel of the bundle's CUDA module: the dense GEMM
///   C[b, i, j] = sum_k A[b, i, k] * B[b, j, k]
/// over row-major A [batch, m, k], B [batch, n, k] and C [batch, m, n]
/// (operands gathered K-contiguous, as the CPU's GEMMs read them). Its
/// parameters are the three device pointers (A, B, C), nothing else; it is
/// launched on `grid` x `block` threads with no dynamic shared memory.
struct CudaKernelSpec {
  /// The kernel's symbol in the module.
  std::string name;
  /// One of kCudaKernelKinds.
  std::string kind;
  /// Element encodings of A and B: "f32", "bf16" (bits of a bfloat16),
  /// "e4m3", "e5m2" (bytes of the OCP fp8 formats) or "s8" (centred codes);
  /// of C: "f32" or "s32".
  std::string a, b, c;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  std::vector<int64_t> grid, block;
};

/// The bundle's optional CUDA target: one module for one chip.
struct CudaTargetSpec {
  /// "sm_90".
  std::string chip;
  /// Relative to the bundle directory, e.g. "cuda/sm_90.cubin".
  std::string module;
  /// "cubin" (assembled by ptxas for `chip`) or "ptx" (the driver JIT-compiles
  /// it).
  std::string format;
  /// The SHA-256 of the module file, checked before it is loaded.
  std::string moduleSha256;
  std::vector<CudaKernelSpec> kernels;
  /// The whole step on the GPU (docs/cuda.md, "The step on the GPU"): a
  /// host library relative to the bundle directory, e.g. "cuda/step.so",
  /// with the packed entry points of `library` over device buffers and the
  /// kernels' PTX inside; empty when the bundle has none.
  std::string stepLibrary;
  /// The SHA-256 of stepLibrary.
  std::string stepLibrarySha256;
  /// The packed arguments of the train and eval steps whose buffers the
  /// step's host code reads or writes itself: the runtime places them in
  /// page-locked host memory the device maps, every other buffer in device
  /// memory. Ascending.
  std::vector<int64_t> trainHostVisible, evalHostVisible;
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
  /// dtype F32 (features) or I64 (token ids, read by the step as indices),
  /// shape[0] == batch.
  TensorSpec input;
  /// I64 inputs: the largest id the step can take (the manifest's optional
  /// input.max_value, the rows of the smallest table the ids index minus
  /// one); the runtime refuses a batch with an id outside [0, max_value].
  /// -1: not given.
  int64_t inputMaxValue = -1;
  /// dtype I64, shape[0] == batch; named "labels".
  TensorSpec labels;
  std::vector<ParameterSpec> parameters;
  std::vector<StateSpec> state;
  std::vector<std::string> controls;
  /// The default schedules (Schedule.h strings); both parse.
  std::string schedule;
  std::string gradSchedule;
  /// How the step quantizes CPT's errors: "int" (the paper's integer grid
  /// of the backward bits) or "e5m2" (fp8 scaled per tensor, at the
  /// backward bits 8 only). "grad_format" in the JSON, absent for "int".
  std::string gradFormat = "int";
  std::vector<SiteSpec> sites;
  /// The CUDA target; an empty `chip` when the bundle has none (a CPU-only
  /// bundle: the manifest then has no "cuda" field).
  CudaTargetSpec cuda;
};

/// Field by field: what parseManifest(printManifest(m)) gives back.
bool operator==(const TensorSpec &a, const TensorSpec &b);
bool operator==(const InitSpec &a, const InitSpec &b);
bool operator==(const ParameterSpec &a, const ParameterSpec &b);
bool operator==(const StateSpec &a, const StateSpec &b);
bool operator==(const VariantSpec &a, const VariantSpec &b);
bool operator==(const SiteSpec &a, const SiteSpec &b);
bool operator==(const CudaKernelSpec &a, const CudaKernelSpec &b);
bool operator==(const CudaTargetSpec &a, const CudaTargetSpec &b);
bool operator==(const CompilerInfo &a, const CompilerInfo &b);
bool operator==(const Manifest &a, const Manifest &b);

/// Parses and validates manifest text (see the file comment). `fileName`
/// prefixes every message. On failure `out` is unspecified.
Status parseManifest(std::string_view text, const std::string &fileName,
                     Manifest &out, ErrorKind *kind = nullptr);

/// The text of manifest.json for `manifest`: a JSON object with its keys
/// sorted, indented by two spaces, without a final newline. Optional
/// fields are left out when empty ("library_sha256", the input's
/// "max_value", a state's "tensors" and "init", a site's "precision"); a
/// variant's "kernels" is always written. parseManifest() reads it back to an
/// equal Manifest when `manifest` is valid.
std::string printManifest(const Manifest &manifest);

/// Whether the bundle learns its precisions per site (LDP): some site names
/// a precision parameter.
bool learnsPrecisions(const Manifest &manifest);

/// Whether the bundle has a CUDA target.
inline bool hasCudaTarget(const Manifest &manifest) {
  return !manifest.cuda.chip.empty();
}

/// The GPU kernel kind that serves a product whose CPU kernel kind is
/// `cpuKind` ("i8" -> "i8", "f32" -> `f32Kind` ("f32" or "tf32"),
/// "bf16" -> "bf16"); empty when no GPU kernel serves it ("i16" codes,
/// the "f64" reference).
std::string cudaKindFor(std::string_view cpuKind,
                        std::string_view f32Kind = "f32");

/// "f32" or "i64".
std::string_view toString(DType dtype);
/// The manifest's spelling: "kaiming_uniform", "bias_uniform", "zeros",
/// "ones", "file".
std::string_view toString(InitKind kind);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_MANIFEST_H
