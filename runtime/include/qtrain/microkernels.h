/*===- microkernels.h - qtrain's CPU GEMM microkernels (C API) -----*- C -*-===*
 *
 * Part of the qtrain project.
 *
 *===----------------------------------------------------------------------===*
 *
 * Hand-written GEMM kernels that generated code calls (the IREE "ukernel"
 * approach): `qtrain-microkernels` rewrites a linalg contraction whose
 * element types one of these serves into a call, and the bundle's model.so
 * links this library in. They are plain C functions over strided views so
 * that any operand layout (transposed or not, a subview) is served without a
 * copy: element (i, j) of a view is base[offset + i * s0 + j * s1].
 *
 * Every kernel accumulates: C += A * B, as a linalg contraction does into
 * its init. A is M x K, B is K x N, C is M x N. An A or B that shares
 * memory with C is read as it was before the call (copied first).
 *
 * The implementation packs panels of A and B (converting on the way: s8 ->
 * u8 for VNNI, f32 -> bf16) and runs AVX-512 microkernels when the CPU has
 * the features (detected once, at the first call), a portable C++ path
 * otherwise. QTRAIN_MICROKERNELS=portable forces the portable path.
 *
 * Exactness: the integer kernels are exact (two's complement, wrapping
 * like the linalg form) whenever the true sum fits the accumulator; their
 * overflow-free accumulation lengths are given by
 * qtrain_mk_max_accumulation_length(). f32 kernels accumulate with FMA in
 * K-blocks (not the sequential order of the loop form): within K * 2^-24
 * * sum |a||b| of the exact product. bf16 rounds A and B to bf16 (nearest
 * even) and accumulates in f32.
 *
 *===----------------------------------------------------------------------===*/

#ifndef QTRAIN_MICROKERNELS_H
#define QTRAIN_MICROKERNELS_H

#include <stdint.h>

/* Symbols a bundle's model.so exports (it links this library). */
#define QTRAIN_MK_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* C += A * B, f32. */
void qtrain_mk_gemm_f32(int64_t M, int64_t N, int64_t K, const float *a,
                        int64_t aOffset, int64_t aStrideM, int64_t aStrideK,
                        const float *b, int64_t bOffset, int64_t bStrideK,
                        int64_t bStrideN, float *c, int64_t cOffset,
                        int64_t cStrideM, int64_t cStrideN);

/* C += A * B with A and B rounded to bf16 (nearest even), f32 sums. */
void qtrain_mk_gemm_bf16(int64_t M, int64_t N, int64_t K, const float *a,
                         int64_t aOffset, int64_t aStrideM, int64_t aStrideK,
                         const float *b, int64_t bOffset, int64_t bStrideK,
                         int64_t bStrideN, float *c, int64_t cOffset,
                         int64_t cStrideM, int64_t cStrideN);

/* C += A * B, signed 8-bit codes, 32-bit sums (u8 x s8 VNNI: A is offset
 * by 128 while it is packed and the column sums of B take it out again). */
void qtrain_mk_gemm_s8s8s32(int64_t M, int64_t N, int64_t K, const int8_t *a,
                            int64_t aOffset, int64_t aStrideM, int64_t aStrideK,
                            const int8_t *b, int64_t bOffset, int64_t bStrideK,
                            int64_t bStrideN, int32_t *c, int64_t cOffset,
                            int64_t cStrideM, int64_t cStrideN);

/* C += A * B, signed 16-bit codes (9..16-bit grids), 32-bit sums
 * (vpdpwssd on pairs of k); exact (wrapping like the loop form) whenever
 * the true sum fits. */
void qtrain_mk_gemm_s16s16s32(int64_t M, int64_t N, int64_t K, const int16_t *a,
                              int64_t aOffset, int64_t aStrideM,
                              int64_t aStrideK, const int16_t *b,
                              int64_t bOffset, int64_t bStrideK,
                              int64_t bStrideN, int32_t *c, int64_t cOffset,
                              int64_t cStrideM, int64_t cStrideN);
/* C += A * B on centred codes c = q - 2^(b-1) of at most `aBits` / `bBits`
 * (1..4) bits, bit-serial: q's bit planes are packed 64 to a word and
 * sum q_a q_b = sum_ij 2^(i+j) popcount(a_i & b_j); the centring is taken
 * out with row and column sums. */
void qtrain_mk_gemm_bitserial(int64_t M, int64_t N, int64_t K, const int8_t *a,
                              int64_t aOffset, int64_t aStrideM,
                              int64_t aStrideK, const int8_t *b,
                              int64_t bOffset, int64_t bStrideK,
                              int64_t bStrideN, int32_t *c, int64_t cOffset,
                              int64_t cStrideM, int64_t cStrideN, int32_t aBits,
                              int32_t bBits);

/* Packed k-bit weights: a B operand (K x N centred codes of `bits` = 8 or 4
 * bits) packed once into the layout the kernel streams, stored as
 * q = code + 2^(bits-1): one byte per code at 8 bits, two codes per byte
 * at 4 bits. For a B that many products read (weights between updates);
 * qtrain_mk_gemm_s8_packed_b then multiplies A (signed 8-bit codes) by it
 * without packing B again. Sizes in bytes; -1 for other widths. */
int64_t qtrain_mk_packed_b_bytes(int64_t N, int64_t K, int32_t bits);
void qtrain_mk_pack_b(int64_t N, int64_t K, const int8_t *b, int64_t bOffset,
                      int64_t bStrideK, int64_t bStrideN, int32_t bits,
                      void *packed);
/* C += A * B with B packed by qtrain_mk_pack_b (same N, K, bits); exact
 * like qtrain_mk_gemm_s8s8s32 (sums wrap in 32 bits). */
void qtrain_mk_gemm_s8_packed_b(int64_t M, int64_t N, int64_t K,
                                const int8_t *a, int64_t aOffset,
                                int64_t aStrideM, int64_t aStrideK,
                                const void *packed, int32_t bits, int32_t *c,
                                int64_t cOffset, int64_t cStrideM,
                                int64_t cStrideN);

/* Y += conv2d(X, W), f32, as implicit GEMMs: X [N, C, H, W] (NCHW), W
 * [F, C, KH, KW], Y [N, F, OH, OW], each a strided 4-D view (base, offset,
 * four strides); no padding (pad X first), strides and dilations per
 * spatial dimension, OH = (H - dilationH (KH - 1) - 1) / strideH + 1 and
 * the same for OW. Per image, Y_n[f, (oh, ow)] += W[f, (c, kh, kw)] *
 * patches_n[(c, kh, kw), (oh, ow)], with the patches packed from X
 * straight into the kernel's panels (no im2col buffer). Accumulates like
 * qtrain_mk_gemm_f32 (FMA, K-blocked, K = C KH KW); X or W sharing memory
 * with Y are read as they were before the call. Images run in parallel
 * with qtrain_mk_set_num_threads. Sizes that do not fit (OH, OW too large
 * for H, W) run nothing: callers pass the shapes of a verified
 * convolution. */
void qtrain_mk_conv2d_nchw_f32(
    int64_t N, int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH,
    int64_t KW, int64_t OH, int64_t OW, int64_t strideH, int64_t strideW,
    int64_t dilationH, int64_t dilationW, const float *x, int64_t xOffset,
    int64_t xStrideN, int64_t xStrideC, int64_t xStrideH, int64_t xStrideW,
    const float *w, int64_t wOffset, int64_t wStrideF, int64_t wStrideC,
    int64_t wStrideKH, int64_t wStrideKW, float *y, int64_t yOffset,
    int64_t yStrideN, int64_t yStrideF, int64_t yStrideH, int64_t yStrideW);

/* The same with X and W rounded to bf16 (nearest even) and f32 sums, like
 * qtrain_mk_gemm_bf16 (K = C KH KW). */
void qtrain_mk_conv2d_nchw_bf16(
    int64_t N, int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH,
    int64_t KW, int64_t OH, int64_t OW, int64_t strideH, int64_t strideW,
    int64_t dilationH, int64_t dilationW, const float *x, int64_t xOffset,
    int64_t xStrideN, int64_t xStrideC, int64_t xStrideH, int64_t xStrideW,
    const float *w, int64_t wOffset, int64_t wStrideF, int64_t wStrideC,
    int64_t wStrideKH, int64_t wStrideKW, float *y, int64_t yOffset,
    int64_t yStrideN, int64_t yStrideF, int64_t yStrideH, int64_t yStrideW);

/* The same on signed 8-bit codes with 32-bit sums, exact like
 * qtrain_mk_gemm_s8s8s32 (K = C KH KW). */
void qtrain_mk_conv2d_nchw_s8s8s32(
    int64_t N, int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH,
    int64_t KW, int64_t OH, int64_t OW, int64_t strideH, int64_t strideW,
    int64_t dilationH, int64_t dilationW, const int8_t *x, int64_t xOffset,
    int64_t xStrideN, int64_t xStrideC, int64_t xStrideH, int64_t xStrideW,
    const int8_t *w, int64_t wOffset, int64_t wStrideF, int64_t wStrideC,
    int64_t wStrideKH, int64_t wStrideKW, int32_t *y, int64_t yOffset,
    int64_t yStrideN, int64_t yStrideF, int64_t yStrideH, int64_t yStrideW);

/* The longest K for which a kernel's sums cannot overflow its accumulator
 * for any codes of the given widths: kind is "s8s8s32" (bits <= 8),
 * "s16s16s32" (bits <= 16) or "bitserial" (bits <= 4). -1 for an unknown kind
 * or width. */
int64_t qtrain_mk_max_accumulation_length(const char *kind, int32_t aBits,
                                          int32_t bBits);

/* Threads a single call may use (default 1). The training step runs the
 * kernels on one thread; the GEMM benchmark uses this for its 2-thread
 * rows. */
void qtrain_mk_set_num_threads(int32_t threads);

/* "avx512" or "portable": the path the kernels take on this machine. */
const char *qtrain_mk_isa(void);

/* The allocator of generated code. qtrain-lower-cpu lowers buffer
 * allocation to MLIR's generic functions _mlir_memref_to_llvm_alloc,
 * _mlir_memref_to_llvm_aligned_alloc and _mlir_memref_to_llvm_free, which
 * this library implements on malloc while counting the bytes held: the
 * buffers of the training step, not the kernels' own packing space. */
void *_mlir_memref_to_llvm_alloc(uint64_t size);
void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size);
void _mlir_memref_to_llvm_free(void *ptr);

/* Bytes the generated code holds now and the most it held since the last
 * qtrain_step_memory_reset_peak() (which sets the peak to the current
 * bytes). Either pointer may be null. */
void qtrain_step_memory_stats(int64_t *current, int64_t *peak);
void qtrain_step_memory_reset_peak(void);

/* The most bytes the step's buffers may hold at once; 0 (the default): no
 * limit but malloc's. */
void qtrain_step_memory_set_limit(int64_t bytes);

/* An allocation that fails (malloc returns null, or the limit would be
 * passed) never returns null to generated code: it calls this handler with
 * the bytes asked for, the bytes held and the limit. The handler must not
 * return; qtrain's runtime longjmps out of the step and releases the
 * step's buffers (qtrain_step_memory_end). Without a handler, or
 * if it returns, the library prints the failure on stderr and exits the
 * process with status 70. */
typedef void (*qtrain_step_memory_failure_handler)(int64_t requested,
                                                   int64_t held, int64_t limit);
void qtrain_step_memory_set_failure_handler(
    qtrain_step_memory_failure_handler handler);

/* Brackets a step on the calling thread: the buffers this thread allocates
 * between qtrain_step_memory_begin and qtrain_step_memory_end belong to
 * the step whose token begin returned. With `release` nonzero, end frees
 * every buffer of that step still held: the buffers of a step abandoned
 * by the failure handler. Steps on other threads are not touched. */
int64_t qtrain_step_memory_begin(void);
void qtrain_step_memory_end(int64_t step, int32_t release);

#ifdef __cplusplus
}
#endif

#endif /* QTRAIN_MICROKERNELS_H */
