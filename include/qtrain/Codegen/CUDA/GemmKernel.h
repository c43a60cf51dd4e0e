//===- GemmKernel.h - Tensor-core GEMM kernels per precision ----*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The GPU GEMM kernels of the CUDA target (docs/cuda.md), as a plain
/// builder the pass qtrain-cuda-gemm-kernels calls: one gpu.func per shape
/// and kind computing
///
///   C[b, i, j] = sum_k A[b, i, k] * B[b, j, k]
///
/// over dense row-major A [batch, m, k], B [batch, n, k], C [batch, m, n]
/// (the operands K-contiguous, the layout the CPU's GEMMs gather them in).
/// Kinds: f32 (fp32 FMA on the CUDA cores), tf32 and bf16
/// (`mma.sync` m16n8k8 / m16n8k16, f32 sums), fp8 (e4m3 and e5m2 in any
/// pairing, `mma.sync` m16n8k32, f32 sums) and i8 (centred s8 codes,
/// `mma.sync` m16n8k32 with exact s32 sums). A block of four warps computes
/// a 64 x 32 tile of C; each warp 16 rows, four 16 x 8 tensor-core tiles
/// sharing one A fragment per step of k (fewer tiles for n below 32).
///
/// A product with few tiles of C and a long k (a weight gradient: m x n
/// the weight, k the batch's positions) splits k: each of `splits` blocks
/// per tile sums one chunk of k, stores its values in the kernel's
/// workspace, and the tile's block that finishes last adds them up in
/// split order (counted in a zero-initialized global between fences). C
/// is written once, by that block; the kernel's parameters stay A, B, C.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_CODEGEN_CUDA_GEMMKERNEL_H
#define QTRAIN_CODEGEN_CUDA_GEMMKERNEL_H

#include "QTrain/QTrainAttrs.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include <array>
#include <string>

namespace mlir::qtrain {

/// Element encodings of the kernels' operands and results.
enum class GemmEncoding { F32, BF16, E4M3, E5M2, S8, S32 };

/// The manifest's spelling: f32, bf16, e4m3, e5m2, s8, s32.
StringRef stringifyGemmEncoding(GemmEncoding encoding);

/// The element type a kernel's buffer holds for `encoding`: f32, i16 (bf16
/// bits), i8 (fp8 bytes or codes) or i32.
Type getGemmStorageType(MLIRContext *ctx, GemmEncoding encoding);

/// How an operand holding values of a reduced float format (#qtrain.float)
/// runs on an fp8 kernel: each value times 2^scaleExponent, rounded to
/// `encoding` (e4m3 or e5m2), is the byte the kernel reads.
struct Fp8Operand {
  GemmEncoding encoding = GemmEncoding::E4M3;
  int scaleExponent = 0;
  /// The smallest magnitude (of the format's values) that fp8 holds
  /// exactly: below it, the fp8 grid is coarser than the format's.
  double exactFrom = 0;
  /// The largest magnitude that fp8 holds: larger finite values saturate
  /// to it.
  double exactTo = 0;
};

/// The scale of getFp8Operand.
enum class Fp8Scale {
  /// The largest power of two that keeps the format's largest value finite
  /// in fp8: no value saturates (FP(4, 3, 4): 2^3, 30 becomes 240;
  /// FP(5, 2, 0): 2^-1, 114688 becomes 57344), the smallest binades lose
  /// one bit.
  Fit,
  /// The power of two that maps the format's smallest normal onto fp8's:
  /// every value is exact (FP(4, 3, 4): 2^4; FP(5, 2, 0): 2^0) except the
  /// top ones, which saturate (FP(4, 3, 4): +-30 becomes +-28; FP(5, 2, 0):
  /// 65536 and up become 57344).
  Exact,
};

/// The fp8 form of `format`'s values: FP(4, 3, x) on e4m3 and FP(5, 2, x)
/// on e5m2, scaled as `scale` says. +-inf stays +-inf on e5m2 (NaN on
/// e4m3, which has no inf); NaN stays NaN. None for other formats.
std::optional<Fp8Operand> getFp8Operand(FloatFormatAttr format,
                                        Fp8Scale scale = Fp8Scale::Fit);

/// Whether every value of `format` is a bf16 value (at most 7 mantissa
/// bits, normals and subnormals inside bf16's range): a bf16 kernel reads
/// them exactly (FP(4, 3, 4), FP(5, 2, 0); not FP(6, 9, 0)).
bool isBf16Exact(FloatFormatAttr format);

/// The #qtrain.float whose codes are `encoding`'s bytes for the finite
/// values the kernels read: FP(4, 3, 0) for e4m3 (up to 448), FP(5, 2, 0)
/// for e5m2 (up to 57344).
FloatFormatAttr getFp8CodeFormat(MLIRContext *ctx, GemmEncoding encoding);

/// What one kernel computes.
struct GemmKernelSpec {
  /// f32, tf32, bf16, fp8 or i8.
  std::string kind;
  GemmEncoding a = GemmEncoding::F32, b = GemmEncoding::F32,
               c = GemmEncoding::F32;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  /// Split k: the terms each split sums (a multiple of kStep(); k when not
  /// split) and how many splits there are.
  int64_t kChunk = 0, splits = 1;

  /// The operand encodings a kind reads; fp8 reads e4m3 unless the operand
  /// is an error (e5m2).
  static FailureOr<GemmKernelSpec> get(StringRef kind, int64_t batch, int64_t m,
                                       int64_t n, int64_t k,
                                       bool aIsError = false,
                                       bool bIsError = false);

  /// Rows of C per block (16 per warp), threads per block.
  static constexpr int64_t kTileM = 64, kThreads = 128;
  /// Columns of C per block: 32 for f32 (a column per lane); for the
  /// tensor-core kinds 8 per 16 x 8 tile, as many tiles (at most four) as n
  /// needs, so a narrow C (LeNet's 6 channels) makes no idle products.
  int64_t tileN() const;
  /// Splitting k: a kernel with fewer tiles of C than kSplitBlocks splits
  /// k until it has about that many blocks (two per multiprocessor of an
  /// H100), at most kMaxSplits ways (the last block reads that many values
  /// per element) and into chunks of at least kMinChunk terms.
  static constexpr int64_t kSplitBlocks = 264, kMaxSplits = 128,
                           kMinChunk = 256;
  /// The tiles of C: x over n, y over m.
  int64_t tilesX() const { return (n + tileN() - 1) / tileN(); }
  int64_t tilesY() const { return (m + kTileM - 1) / kTileM; }
  /// z runs over batch x splits (the split fastest).
  std::array<int64_t, 3> grid() const {
    return {tilesX(), tilesY(), batch * splits};
  }
  std::array<int64_t, 3> block() const { return {kThreads, 1, 1}; }
  /// The k of one tensor-core step (1 for f32).
  int64_t kStep() const;

  /// The kernel's symbol: qtrain_gemm_KIND_AxB_bBATCH_mM_nN_kK, with
  /// _sSPLITS when k is split. Kernels of one name compute the same thing.
  std::string name() const;
  /// The kernel's description (kGemmAttrName): kind, a, b, c, batch, m, n,
  /// k, splits, k_chunk, grid and block.
  DictionaryAttr toAttr(Builder &builder) const;
  /// The spec a description gives, or failure if it is not one.
  static FailureOr<GemmKernelSpec> fromAttr(DictionaryAttr attr);
};

/// The runtime's offer of a product to its GEMM library (CudaHostAbi.h):
///   i32 qtrain_cuda_gemm(A, B, C pointers, kind, A encoding, B encoding,
///                        batch, m, n, k)
/// with the kind's position in gemmKernelKinds() and GemmEncoding's values;
/// 1 when the library took the product, 0 when the kernel must run.
inline constexpr llvm::StringLiteral kLibraryGemmFunction = "qtrain_cuda_gemm";

/// The kinds the builder knows, in the manifest's order.
ArrayRef<StringRef> gemmKernelKinds();

/// Whether an i8 kernel's s32 sums are exact for `k` terms of centred
/// 8-bit codes (|c| <= 128): k * 2^14 < 2^31.
inline bool i8SumsFitInt32(int64_t k) { return k < (int64_t(1) << 17); }

/// The kernel for `spec` in `module` (spec.name(), described by
/// kGemmAttrName), appended on first use. The kernel's arguments are the
/// three static 1-D memrefs of A, B and C (their elements: f32, i16 bf16
/// bits, i8 fp8 bytes or codes; f32 or i32).
gpu::GPUFuncOp buildGemmKernel(OpBuilder &builder, Location loc,
                               gpu::GPUModuleOp module,
                               const GemmKernelSpec &spec);

} // namespace mlir::qtrain

#endif // QTRAIN_CODEGEN_CUDA_GEMMKERNEL_H
