//===- Driver.h - Packing and loop nests of the CPU GEMMs -------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Everything around the microkernels: element policies (what a packed
/// element is and how an input becomes one), packing into the layouts of
/// Microkernels.h, the BLIS-style loop nest (N blocks, K blocks with B
/// packed, M blocks with A packed, then MR x NR tiles with the B panel kept
/// in L1) and the bit-serial GEMM. Included by both the AVX-512 and the
/// portable translation unit, in an anonymous namespace, so each compiles
/// its own copy for its own instruction set (packing vectorizes with
/// AVX-512 in the former).
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_KERNELS_CPU_DRIVER_H
#define QTRAIN_RUNTIME_KERNELS_CPU_DRIVER_H

#include "Microkernels.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace qtrain::mk {
namespace {

/// Per-thread, 64-byte aligned, grown on demand and kept between calls.
class Scratch {
public:
  template <class T>
  T *get(size_t count) {
    size_t need = count * sizeof(T) + 64;
    if (bytes.size() < need)
      bytes.resize(need);
    auto addr = reinterpret_cast<uintptr_t>(bytes.data());
    return reinterpret_cast<T *>((addr + 63) & ~uintptr_t(63));
  }

private:
  std::vector<unsigned char> bytes;
};
thread_local Scratch scratchA, scratchB, scratchSums, scratchLine, scratchImage,
    scratchFilter;
//===----------------------------------------------------------------------===//
// Element policies
//===----------------------------------------------------------------------===//

uint16_t toBF16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN stays a (quiet) NaN
    return uint16_t((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1); // nearest even
  return uint16_t(bits >> 16);
}
float fromBF16(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}

struct F32 {
  using In = float;
  using PA = float;
  using PB = float;
  using Acc = float;
  static constexpr int KG = 1;
  static constexpr int64_t KC = 1024, MC = 120, NC = 2048;
  static constexpr bool kOffsetA = false;
  static PA packA(float x) { return x; }
  static PB packB(float x) { return x; }
  static Acc mac(Acc acc, PA a, PB b) { return acc + a * b; }
  static Acc add(Acc x, Acc y) { return x + y; }
};

struct BF16 {
  using In = float;
  using PA = uint16_t;
  using PB = uint16_t;
  using Acc = float;
  static constexpr int KG = 2;
  static constexpr int64_t KC = 1024, MC = 120, NC = 2048;
  static constexpr bool kOffsetA = false;
  static PA packA(float x) { return toBF16(x); }
  static PB packB(float x) { return toBF16(x); }
  static Acc mac(Acc acc, PA a, PB b) {
    return acc + fromBF16(a) * fromBF16(b);
  }
  static Acc add(Acc x, Acc y) { return x + y; }
};

/// Signed codes run as u8 x s8: A is packed as a + 128 and the result is
/// corrected by 128 * (column sums of B). All sums wrap like the i32
/// arithmetic of the loop form (the column sums are uint32_t, so that this
/// holds for any K without signed overflow), so the result is exact
/// whenever the true sum fits.
struct S8 {
  using In = int8_t;
  using PA = uint8_t;
  using PB = int8_t;
  using Acc = int32_t;
  static constexpr int KG = 4;
  static constexpr int64_t KC = 2048, MC = 120, NC = 2048;
  static constexpr bool kOffsetA = true;
  static PA packA(int8_t x) { return uint8_t(x) ^ 0x80; }
  static PB packB(int8_t x) { return x; }
  static Acc mac(Acc acc, PA a, PB b) {
    return Acc(uint32_t(acc) + uint32_t(int32_t(a) * int32_t(b)));
  }
  static Acc add(Acc x, Acc y) { return Acc(uint32_t(x) + uint32_t(y)); }
};

/// 9..16-bit codes as int16 pairs (vpdpwssd takes pairs), 32-bit sums that
/// wrap like the loop form: exact whenever the true sum fits.
struct S16 {
  using In = int16_t;
  using PA = int16_t;
  using PB = int16_t;
  using Acc = int32_t;
  static constexpr int KG = 2;
  static constexpr int64_t KC = 1024, MC = 120, NC = 2048;
  static constexpr bool kOffsetA = false;
  static PA packA(int16_t x) { return x; }
  static PB packB(int16_t x) { return x; }
  static Acc mac(Acc acc, PA a, PB b) {
    return Acc(uint32_t(acc) + uint32_t(int32_t(a) * int32_t(b)));
  }
  static Acc add(Acc x, Acc y) { return Acc(uint32_t(x) + uint32_t(y)); }
};

/// 8-bit codes with the offset on B: A (a filter's codes) signed, B (an
/// image's codes + 128) unsigned, so that the correction is 128 x A's row
/// sums, known before the product, and B's panels are plain copies.
struct S8U8 {
  using In = int8_t;
  using PA = int8_t;
  using PB = uint8_t;
  using Acc = int32_t;
  static constexpr int KG = 4;
  static constexpr int64_t KC = 2048, MC = 120, NC = 2048;
  static constexpr bool kOffsetA = false;
  static PA packA(int8_t x) { return x; }
  static PB packB(int8_t x) { return uint8_t(x) ^ 0x80; }
  static Acc mac(Acc acc, PA a, PB b) {
    return Acc(uint32_t(acc) + uint32_t(int32_t(a) * int32_t(b)));
  }
  static Acc add(Acc x, Acc y) { return Acc(uint32_t(x) + uint32_t(y)); }
};

template <class P>
using Kernel = void (*)(int64_t, const typename P::PA *, const typename P::PB *,
                        typename P::Acc *, int64_t);

//===----------------------------------------------------------------------===//
// Packing
//===----------------------------------------------------------------------===//

// Every policy packs KG elements into 4 bytes, so a panel is an array of
// 32-bit groups: [g][MR] for A, [g][NR] for B.
static_assert(sizeof(float) == 4 && 2 * sizeof(uint16_t) == 4, "");

/// Converts `count` elements of a line (stride `stride`) into `dst`,
/// zero-filling up to `padded`; returns their sum when A is offset.
template <class P, class Out>
int64_t convertLine(const typename P::In *__restrict src, int64_t stride,
                    int64_t count, int64_t padded, Out *__restrict dst,
                    Out (*convert)(typename P::In)) {
  int64_t sum = 0;
  if (stride == 1) {
    for (int64_t k = 0; k < count; ++k)
      dst[k] = convert(src[k]);
  } else {
    for (int64_t k = 0; k < count; ++k)
      dst[k] = convert(src[k * stride]);
  }
  if constexpr (P::kOffsetA)
    for (int64_t k = 0; k < count; ++k)
      sum += dst[k];
  for (int64_t k = count; k < padded; ++k)
    dst[k] = 0;
  return sum;
}

/// Scatters a converted line's 32-bit groups into column `slot` of a panel
/// [g][width].
inline void scatterGroups(const void *line, int64_t groups, uint32_t *panel,
                          int width, int slot) {
  const auto *src = static_cast<const unsigned char *>(line);
  for (int64_t g = 0; g < groups; ++g)
    std::memcpy(&panel[g * width + slot], src + 4 * g, 4);
}

/// Packs rows [0, rows) x k [0, kc) of `a` into MR-row panels [g][MR][KG].
template <class P>
void packA(View<const typename P::In> a, int64_t rows, int64_t kc,
           int64_t groups, typename P::PA *dst) {
  constexpr int KG = P::KG;
  auto *line = scratchLine.get<typename P::PA>(groups * KG + 64);
  for (int64_t r0 = 0; r0 < rows; r0 += kMR) {
    auto *panel =
        reinterpret_cast<uint32_t *>(dst + (r0 / kMR) * groups * kMR * KG);
    for (int r = 0; r < kMR; ++r) {
      if (r0 + r < rows)
        convertLine<P>(&a.at(r0 + r, 0), a.s1, kc, groups * KG, line, P::packA);
      else
        std::fill(line, line + groups * KG, 0);
      scatterGroups(line, groups, panel, kMR, r);
    }
  }
}

/// Packs k [0, kc) x columns [0, cols) of `b` into NR-column panels
/// [g][NR][KG], adding each column's sum to colSums when A is offset.
template <class P>
void packB(View<const typename P::In> b, int64_t kc, int64_t cols,
           int64_t groups, typename P::PB *dst, uint32_t *colSums) {
  constexpr int KG = P::KG;
  using PB = typename P::PB;
  for (int64_t n0 = 0; n0 < cols; n0 += kNR) {
    PB *panel = dst + (n0 / kNR) * groups * kNR * KG;
    int width = int(std::min<int64_t>(kNR, cols - n0));
    if (b.s1 != 1) { // columns of B contiguous (or neither): by column
      auto *line = scratchLine.get<PB>(groups * KG + 64);
      for (int n = 0; n < kNR; ++n) {
        if (n < width) {
          int64_t sum = convertLine<P>(&b.at(0, n0 + n), b.s0, kc, groups * KG,
                                       line, P::packB);
          if constexpr (P::kOffsetA)
            colSums[n0 + n] += uint32_t(sum);
        } else {
          std::fill(line, line + groups * KG, 0);
        }
        scatterGroups(line, groups, reinterpret_cast<uint32_t *>(panel), kNR,
                      n);
      }
      continue;
    }
    // Rows of B contiguous: KG rows at a time, interleaved.
    for (int64_t g = 0; g < groups; ++g) {
      PB rowsOf[KG][kNR];
      for (int j = 0; j < KG; ++j) {
        int64_t k = g * KG + j;
        for (int n = 0; n < kNR; ++n)
          rowsOf[j][n] = k < kc && n < width ? P::packB(b.at(k, n0 + n)) : 0;
        if constexpr (P::kOffsetA)
          for (int n = 0; n < width; ++n)
            colSums[n0 + n] += uint32_t(rowsOf[j][n]);
      }
      PB *out = panel + g * kNR * KG;
      for (int n = 0; n < kNR; ++n)
        for (int j = 0; j < KG; ++j)
          out[n * KG + j] = rowsOf[j][n];
    }
  }
}

//===----------------------------------------------------------------------===//
// The loop nest
//===----------------------------------------------------------------------===//

template <class P>
using Gemm = GemmOperands<typename P::In, typename P::Acc>;

/// The loop nest of C (M x N) += A (M x K) * B (K x N) where A's panels
/// come from `packPanelsA(ic, pc, mc, kc, groups, dst)` (rows [ic, ic + mc)
/// x k [pc, pc + kc) as MR-row panels) and B's from `packPanelsB(pc, jc,
/// kc, nc, groups, dst, colSums)` (NR-column panels): views of A and B, or
/// the patches of an image.
///
/// `half`, when given, computes only the first MR / 2 rows of a tile (same
/// packed layout); tiles with that few rows use it (a GEMM or convolution
/// with 6 output rows would otherwise compute 12).
template <class P, class PackPanelsA, class PackPanelsB>
void blockedLoops(int64_t M, int64_t N, int64_t K, PackPanelsA packPanelsA,
                  PackPanelsB packPanelsB, View<typename P::Acc> c,
                  Kernel<P> kernel, Kernel<P> half = nullptr) {
  using Acc = typename P::Acc;
  constexpr int KG = P::KG;
  for (int64_t jc = 0; jc < N; jc += P::NC) {
    int64_t nc = std::min(P::NC, N - jc);
    int64_t nPanels = (nc + kNR - 1) / kNR;
    uint32_t *colSums = nullptr;
    if constexpr (P::kOffsetA) {
      colSums = scratchSums.get<uint32_t>(nc);
      std::fill(colSums, colSums + nc, 0);
    }
    for (int64_t pc = 0; pc < K; pc += P::KC) {
      int64_t kc = std::min(P::KC, K - pc);
      int64_t groups = (kc + KG - 1) / KG;
      auto *bp = scratchB.get<typename P::PB>(nPanels * groups * kNR * KG);
      packPanelsB(pc, jc, kc, nc, groups, bp, colSums);
      for (int64_t ic = 0; ic < M; ic += P::MC) {
        int64_t mc = std::min(P::MC, M - ic);
        int64_t mPanels = (mc + kMR - 1) / kMR;
        auto *ap = scratchA.get<typename P::PA>(mPanels * groups * kMR * KG);
        packPanelsA(ic, pc, mc, kc, groups, ap);
        for (int64_t jp = 0; jp < nPanels; ++jp) {
          const auto *bPanel = bp + jp * groups * kNR * KG;
          int64_t cols = std::min<int64_t>(kNR, nc - jp * kNR);
          for (int64_t ip = 0; ip < mPanels; ++ip) {
            const auto *aPanel = ap + ip * groups * kMR * KG;
            int64_t rows = std::min<int64_t>(kMR, mc - ip * kMR);
            Acc *tile = &c.at(ic + ip * kMR, jc + jp * kNR);
            Kernel<P> run = half && rows <= kMR / 2 ? half : kernel;
            if ((rows == kMR || (run == half && rows == kMR / 2)) &&
                cols == kNR && c.s1 == 1) {
              run(groups, aPanel, bPanel, tile, c.s0);
              continue;
            }
            alignas(64) Acc partial[kMR * kNR] = {};
            run(groups, aPanel, bPanel, partial, kNR);
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t n = 0; n < cols; ++n)
                tile[r * c.s0 + n * c.s1] =
                    P::add(tile[r * c.s0 + n * c.s1], partial[r * kNR + n]);
          }
        }
      }
    }
    if constexpr (P::kOffsetA)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < nc; ++n) {
          Acc &y = c.at(m, jc + n);
          y = Acc(uint32_t(y) - 128u * colSums[n]);
        }
  }
}

template <class P>
void gemmBlocked(Gemm<P> g, Kernel<P> kernel, Kernel<P> half = nullptr) {
  auto [M, N, K, a, b, c] = g;
  blockedLoops<P>(
      M, N, K,
      [a = a](int64_t ic, int64_t pc, int64_t mc, int64_t kc, int64_t groups,
              typename P::PA *dst) {
        packA<P>(a.sub(ic, pc), mc, kc, groups, dst);
      },
      [b = b](int64_t pc, int64_t jc, int64_t kc, int64_t nc, int64_t groups,
              typename P::PB *dst, uint32_t *colSums) {
        packB<P>(b.sub(pc, jc), kc, nc, groups, dst, colSums);
      },
      c, kernel, half);
}

//===----------------------------------------------------------------------===//
// Convolution as implicit GEMM
//===----------------------------------------------------------------------===//

/// out[0, length) = src[0, length), length <= NR: a fixed trip count with a
/// condition, which vectorizes into masked loads and stores (a
/// variable-length copy becomes a memmove call, too slow for runs of a few
/// elements).
template <class T>
inline void copyRun(T *__restrict out, const T *__restrict src, int length) {
#pragma clang loop unroll(disable) vectorize(enable) vectorize_width(16)
  for (int e = 0; e < kNR; ++e)
    if (e < length)
      out[e] = src[e];
}

/// A run of a panel row: `length` columns from slot `slot` that lie on one
/// output row, read from `offset` (relative to the row's tap) on.
struct PatchRun {
  int slot, length;
  int64_t offset;
};

/// Cuts the `width` columns from `first` (column j = (j / OW, j % OW)) into
/// runs along output rows; an output row is `rowStep` apart in the source,
/// an output column `colStep`. Returns the number of runs.
inline int patchRuns(int64_t first, int width, int64_t OW, int64_t rowStep,
                     int64_t colStep, PatchRun *runs) {
  int count = 0;
  for (int slot = 0; slot < width;) {
    int64_t j = first + slot;
    int64_t oh = j / OW, ow = j % OW;
    int length = int(std::min<int64_t>(width - slot, OW - ow));
    runs[count++] = {slot, length, oh * rowStep + ow * colStep};
    slot += length;
  }
  return count;
}

/// One panel row: the runs read from `base` (`step` apart), zero past
/// `width`.
template <class T>
inline void copyRuns(T *row, const T *base, const PatchRun *runs, int count,
                     int width, int64_t step) {
  for (int i = 0; i < count; ++i) {
    const T *src = base + runs[i].offset;
    T *out = row + runs[i].slot;
    if (step == 1) {
      copyRun(out, src, runs[i].length);
    } else {
      for (int e = 0; e < runs[i].length; ++e)
        out[e] = src[e * step];
    }
  }
  for (int e = width; e < kNR; ++e)
    row[e] = T(0);
}

/// Packs rows k [pc, pc + kc) x columns [jc, jc + nc) of image `x`'s
/// patches (k = (c, kh, kw), column j = (oh, ow)) into f32 panels [k][NR].
/// The columns of a panel are cut into runs along one output row; a run
/// reads X at a constant step (contiguous for stride 1), so each k copies a
/// few short pieces instead of gathering element by element.
inline void packPatches(const ConvOperands<float, float> &o, const float *x,
                        int64_t pc, int64_t jc, int64_t kc, int64_t nc,
                        float *dst) {
  const int64_t sC = o.xStrides[1], sH = o.xStrides[2], sW = o.xStrides[3];
  const int64_t step = o.strideW * sW;
  const int64_t kernelArea = o.KH * o.KW;
  for (int64_t n0 = 0; n0 < nc; n0 += kNR) {
    float *panel = dst + (n0 / kNR) * kc * kNR;
    int width = int(std::min<int64_t>(kNR, nc - n0));
    PatchRun runs[kNR];
    int numRuns = patchRuns(jc + n0, width, o.OW, o.strideH * sH, step, runs);
    int64_t c = pc / kernelArea, kh = (pc / o.KW) % o.KH, kw = pc % o.KW;
    for (int64_t r = 0; r < kc; ++r) {
      const float *base =
          x + c * sC + kh * o.dilationH * sH + kw * o.dilationW * sW;
      copyRuns(panel + r * kNR, base, runs, numRuns, width, step);
      if (++kw == o.KW) {
        kw = 0;
        if (++kh == o.KH) {
          kh = 0;
          ++c;
        }
      }
    }
  }
}

/// The same patches as bf16 panels [g][NR][2] (two k per 32-bit group,
/// rounded to bf16 like BF16::packB; a missing second k of the last group
/// is zero).
inline void packPatchesBF16(const ConvOperands<float, float> &o, const float *x,
                            int64_t pc, int64_t jc, int64_t kc, int64_t nc,
                            int64_t groups, uint16_t *dst) {
  const int64_t sC = o.xStrides[1], sH = o.xStrides[2], sW = o.xStrides[3];
  const int64_t step = o.strideW * sW;
  for (int64_t n0 = 0; n0 < nc; n0 += kNR) {
    uint16_t *panel = dst + (n0 / kNR) * groups * kNR * 2;
    int width = int(std::min<int64_t>(kNR, nc - n0));
    PatchRun runs[kNR];
    int numRuns = patchRuns(jc + n0, width, o.OW, o.strideH * sH, step, runs);
    int64_t c = pc / (o.KH * o.KW), kh = (pc / o.KW) % o.KH, kw = pc % o.KW;
    // Two k at a time into f32 rows, then one 32-bit word per column (a
    // loop that vectorizes; a missing second k is zero).
    alignas(64) float rows[2][kNR];
    for (int64_t g = 0; g < groups; ++g) {
      for (int j = 0; j < 2; ++j) {
        if (2 * g + j >= kc) {
          std::fill(rows[j], rows[j] + kNR, 0.0f);
          continue;
        }
        const float *base =
            x + c * sC + kh * o.dilationH * sH + kw * o.dilationW * sW;
        copyRuns(rows[j], base, runs, numRuns, width, step);
        if (++kw == o.KW) {
          kw = 0;
          if (++kh == o.KH) {
            kh = 0;
            ++c;
          }
        }
      }
      uint32_t *words = reinterpret_cast<uint32_t *>(panel + g * kNR * 2);
      for (int n = 0; n < kNR; ++n)
        words[n] =
            uint32_t(toBF16(rows[0][n])) | (uint32_t(toBF16(rows[1][n])) << 16);
    }
  }
}

/// Images [n0, n1) of a convolution with bf16 products and f32 sums: the
/// f32 one's implicit GEMMs with both operands packed as bf16.
inline void convBF16Blocked(const ConvOperands<float, float> &o,
                            Kernel<BF16> kernel) {
  int64_t depth = o.C * o.KH * o.KW, cols = o.OH * o.OW;
  for (int64_t n = o.n0; n < o.n1; ++n) {
    const float *x = o.x + n * o.xStrides[0];
    blockedLoops<BF16>(
        o.F, cols, depth,
        [&](int64_t ic, int64_t pc, int64_t mc, int64_t kc, int64_t groups,
            uint16_t *dst) {
          packA<BF16>(o.w.sub(ic, pc), mc, kc, groups, dst);
        },
        [&](int64_t pc, int64_t jc, int64_t kc, int64_t nc, int64_t groups,
            uint16_t *dst,
            uint32_t *) { packPatchesBF16(o, x, pc, jc, kc, nc, groups, dst); },
        View<float>{o.y + n * o.yImageStride, o.yStrideF, o.yStrideCol},
        kernel);
  }
}

/// Images [n0, n1) of an f32 convolution, each an implicit GEMM: W
/// [F, depth] is A, the image's patches B. (The other orientation, patches
/// as A and the filters along a tile's 32 columns, measured 15-80% slower
/// for every layer of the example models: narrower runs to pack, and C
/// written through partial tiles.)
inline void convF32Blocked(const ConvOperands<float, float> &o,
                           Kernel<F32> kernel, Kernel<F32> half = nullptr) {
  int64_t depth = o.C * o.KH * o.KW, cols = o.OH * o.OW;
  for (int64_t n = o.n0; n < o.n1; ++n) {
    const float *x = o.x + n * o.xStrides[0];
    blockedLoops<F32>(
        o.F, cols, depth,
        [&](int64_t ic, int64_t pc, int64_t mc, int64_t kc, int64_t groups,
            float *dst) { packA<F32>(o.w.sub(ic, pc), mc, kc, groups, dst); },
        [&](int64_t pc, int64_t jc, int64_t kc, int64_t nc, int64_t, float *dst,
            uint32_t *) { packPatches(o, x, pc, jc, kc, nc, dst); },
        View<float>{o.y + n * o.yImageStride, o.yStrideF, o.yStrideCol}, kernel,
        half);
  }
}

/// Images [n0, n1) of an 8-bit convolution. Each image's codes + 128 (u8)
/// are first laid out as 32-bit words of four codes that the depth orders
/// together, and the filter reordered to match (once per call, zero where a
/// word has no tap), so one group of 4 k of a patch column is one word: a
/// panel row of 32 columns is a few contiguous copies of words, with no
/// interleaving and no column sums. The word holds four channels at one
/// pixel (X4[c / 4][h][w][c % 4]), or, when that pads more (C = 1 pads
/// 4x), four taps along a row (X4[c][h][w][j] = x[c][h][w + j dW], groups
/// of 4 kw). The +128 comes off as 128 x the filter's row sums.
inline void convS8Blocked(const ConvOperands<int8_t, int32_t> &o,
                          Kernel<S8U8> kernel) {
  const int64_t H = (o.OH - 1) * o.strideH + (o.KH - 1) * o.dilationH + 1;
  const int64_t W = (o.OW - 1) * o.strideW + (o.KW - 1) * o.dilationW + 1;
  const int64_t channelWords = (o.C + 3) / 4 * o.KW,
                tapWords = o.C * ((o.KW + 3) / 4);
  const bool byTaps = tapWords < channelWords;
  // planes x KH x kwGroups words per patch column, each 4 k.
  const int64_t planes = byTaps ? o.C : (o.C + 3) / 4;
  const int64_t kwGroups = byTaps ? (o.KW + 3) / 4 : o.KW;
  const int64_t kwStep = byTaps ? 4 * o.dilationW : o.dilationW;
  const int64_t groupsPerPlane = o.KH * kwGroups;
  const int64_t depth = planes * groupsPerPlane * 4, cols = o.OH * o.OW;
  // Tap j of word group (plane, kh, g): its channel and kw, or none.
  auto tap = [&](int64_t plane, int64_t g, int j, int64_t &c, int64_t &kw) {
    c = byTaps ? plane : plane * 4 + j;
    kw = byTaps ? g * 4 + j : g;
    return c < o.C && kw < o.KW;
  };
  // The filter as [F, depth] in that order, and its row sums.
  int8_t *filter = scratchFilter.get<int8_t>(o.F * depth);
  std::vector<uint32_t> sums(size_t(o.F), 0);
  for (int64_t f = 0; f < o.F; ++f)
    for (int64_t word = 0; word < depth / 4; ++word) {
      int64_t plane = word / groupsPerPlane,
              kh = word % groupsPerPlane / kwGroups, g = word % kwGroups;
      for (int j = 0; j < 4; ++j) {
        int64_t c, kw;
        int8_t v = tap(plane, g, j, c, kw)
                       ? o.w.at(f, (c * o.KH + kh) * o.KW + kw)
                       : int8_t(0);
        filter[f * depth + word * 4 + j] = v;
        sums[size_t(f)] += uint32_t(v);
      }
    }
  View<const int8_t> a{filter, depth, 1};
  uint32_t *image = scratchImage.get<uint32_t>(planes * H * W);
  const int64_t sC = o.xStrides[1], sH = o.xStrides[2], sW = o.xStrides[3];
  for (int64_t n = o.n0; n < o.n1; ++n) {
    const int8_t *x = o.x + n * o.xStrides[0];
    for (int64_t plane = 0; plane < planes; ++plane)
      for (int64_t h = 0; h < H; ++h) {
        auto *bytes = reinterpret_cast<uint8_t *>(image + (plane * H + h) * W);
        for (int j = 0; j < 4; ++j) {
          int64_t c = byTaps ? plane : plane * 4 + j;
          int64_t shift = byTaps ? j * o.dilationW : 0;
          if (c >= o.C) { // a channel that only fills the word
            for (int64_t w = 0; w < W; ++w)
              bytes[4 * w + j] = 0x80;
            continue;
          }
          const int8_t *src = x + c * sC + h * sH;
          for (int64_t w = 0; w < W; ++w)
            bytes[4 * w + j] = w + shift < W
                                   ? uint8_t(src[(w + shift) * sW]) ^ 0x80
                                   : uint8_t(0x80);
        }
      }
    auto packPatchWords = [&](int64_t pc, int64_t jc, int64_t kc, int64_t nc,
                              int64_t groups, uint8_t *dst, uint32_t *) {
      for (int64_t n0 = 0; n0 < nc; n0 += kNR) {
        auto *panel =
            reinterpret_cast<uint32_t *>(dst) + (n0 / kNR) * groups * kNR;
        int width = int(std::min<int64_t>(kNR, nc - n0));
        PatchRun runs[kNR];
        int numRuns =
            patchRuns(jc + n0, width, o.OW, o.strideH * W, o.strideW, runs);
        for (int64_t gi = 0; gi < groups; ++gi) {
          int64_t word = pc / 4 + gi;
          int64_t plane = word / groupsPerPlane,
                  kh = word % groupsPerPlane / kwGroups, g = word % kwGroups;
          const uint32_t *base =
              image + (plane * H + kh * o.dilationH) * W + g * kwStep;
          copyRuns(panel + gi * kNR, base, runs, numRuns, width, o.strideW);
        }
      }
    };
    View<int32_t> y{o.y + n * o.yImageStride, o.yStrideF, o.yStrideCol};
    blockedLoops<S8U8>(
        o.F, cols, depth,
        [&](int64_t ic, int64_t pc, int64_t mc, int64_t kc, int64_t groups,
            int8_t *dst) { packA<S8U8>(a.sub(ic, pc), mc, kc, groups, dst); },
        packPatchWords, y, kernel);
    for (int64_t f = 0; f < o.F; ++f) {
      uint32_t correction = 128u * sums[size_t(f)];
      for (int64_t j = 0; j < cols; ++j) {
        int32_t &v = y.at(f, j);
        v = int32_t(uint32_t(v) - correction);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Bit-serial
//===----------------------------------------------------------------------===//

/// Writes the `bits` bit planes of q = code + 2^(bits-1) for K contiguous
/// codes: plane i at row[i * words ...], `words` words (zero past K).
/// Returns sum_k q.
using PackLine = int64_t (*)(const int8_t *codes, int64_t K, int bits,
                             int64_t words, uint64_t *row);

/// The plane rows of `lines` lines of K codes (line l, element k at
/// line.at(l, k)): plane i of line l is the word row l * bits + i. Strided
/// lines are gathered first. Stores sum_k q per line in `sums`.
void packPlanes(View<const int8_t> line, int64_t lines, int64_t K, int bits,
                int64_t words, uint64_t *planes, int64_t *sums,
                PackLine packLine) {
  int8_t *gathered = line.s1 == 1 ? nullptr : scratchLine.get<int8_t>(K);
  for (int64_t l = 0; l < lines; ++l) {
    const int8_t *codes = &line.at(l, 0);
    if (gathered) {
      for (int64_t k = 0; k < K; ++k)
        gathered[k] = line.at(l, k);
      codes = gathered;
    }
    sums[l] = packLine(codes, K, bits, words, planes + l * bits * words);
  }
}

/// Adds an 8 x 32 tile of A [g][8][4] (signed) times a packed B panel to
/// `tile` (row stride 32).
using PackedTile = void (*)(int64_t groups, const int8_t *a,
                            const uint8_t *panel, int bits, int32_t *tile);

/// Bytes of one packed panel of 32 columns.
inline int64_t packedPanelBytes(int64_t K, int bits) {
  return (K + 3) / 4 * (bits == 4 ? 64 : 128);
}

/// The packed-B GEMM: rows in blocks of 8 (A packed with its row sums),
/// B's panels streamed once per block; the centring of B (q = code + o)
/// comes off as o * (row sum of A).
void packedBlocked(PackedOperands o, PackedTile tileFn) {
  auto [M, N, K, a, packed, bits, c] = o;
  int64_t groups = (K + 3) / 4, panels = (N + kNR - 1) / kNR;
  int64_t panelBytes = packedPanelBytes(K, bits);
  int64_t offset = int64_t(1) << (bits - 1);
  int8_t *block = scratchA.get<int8_t>(groups * kPackedMR * 4);
  for (int64_t m0 = 0; m0 < M; m0 += kPackedMR) {
    int64_t rows = std::min<int64_t>(kPackedMR, M - m0);
    int64_t rowSums[kPackedMR] = {};
    for (int r = 0; r < kPackedMR; ++r)
      for (int64_t k = 0; k < groups * 4; ++k) {
        int8_t v = r < rows && k < K ? a.at(m0 + r, k) : 0;
        block[((k / 4) * kPackedMR + r) * 4 + k % 4] = v;
        rowSums[r] += v;
      }
    for (int64_t p = 0; p < panels; ++p) {
      alignas(64) int32_t tile[kPackedMR * kNR] = {};
      tileFn(groups, block, packed + p * panelBytes, bits, tile);
      int64_t cols = std::min<int64_t>(kNR, N - p * kNR);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t n = 0; n < cols; ++n) {
          int32_t &y = c.at(m0 + r, p * kNR + n);
          uint32_t t = uint32_t(tile[r * kNR + n]) -
                       uint32_t(uint64_t(offset * rowSums[r]));
          y = int32_t(uint32_t(y) + t);
        }
    }
  }
}

} // namespace
} // namespace qtrain::mk

#endif // QTRAIN_RUNTIME_KERNELS_CPU_DRIVER_H
