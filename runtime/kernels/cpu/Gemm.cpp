//===- Gemm.cpp - Blocked, packed GEMMs over the microkernels -------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The C API of microkernels.h: a BLIS-style loop nest (N blocks, K blocks
/// with B packed, M blocks with A packed, then MR x NR tiles with the B
/// panel kept in L1) around the microkernels of Microkernels.h, the
/// portable microkernels, CPU feature dispatch, the bit-serial GEMM and the
/// thread split.
///
//===----------------------------------------------------------------------===//

#include "qtrain/microkernels.h"

#include "Driver.h"
#include "LibraryConv.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <omp.h>
#include <utility>
#include <vector>

namespace qtrain::mk {

//===----------------------------------------------------------------------===//
// CPU features
//===----------------------------------------------------------------------===//

namespace {
bool forcedPortable() {
  const char *isa = std::getenv("QTRAIN_MICROKERNELS");
  return isa && std::strcmp(isa, "portable") == 0;
}
bool cpuHasAvx512Base() {
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
  return !forcedPortable() && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}
} // namespace

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define QTRAIN_CPU_HAS(feature) __builtin_cpu_supports(feature)
#else
#define QTRAIN_CPU_HAS(feature) false
#endif

bool hasAvx512F32() {
  static const bool has = cpuHasAvx512Base();
  return has;
}
bool hasAvx512BF16() {
  static const bool has = hasAvx512F32() && QTRAIN_CPU_HAS("avx512bf16");
  return has;
}
bool hasAvx512Vnni() {
  static const bool has = hasAvx512F32() && QTRAIN_CPU_HAS("avx512vnni");
  return has;
}
bool hasAvx512Popcnt() {
  static const bool has = hasAvx512F32() && QTRAIN_CPU_HAS("avx512vpopcntdq");
  return has;
}

namespace {

//===----------------------------------------------------------------------===//
// Operands, scratch, threads
//===----------------------------------------------------------------------===//

std::atomic<int> numThreads{1};

/// Runs fn(m0, m1, n0, n1) over a split of the M x N output, on up to
/// numThreads threads, cutting the longer side at multiples of `align`.
template <class Fn>
void parallelSplit(int64_t M, int64_t N, int64_t K, int64_t align, Fn fn) {
  int threads = numThreads.load(std::memory_order_relaxed);
  bool splitM = M >= N;
  int64_t side = splitM ? M : N;
  int64_t chunks = std::min<int64_t>(threads, (side + align - 1) / align);
  // Below ~2 MFLOP a thread costs more than it saves.
  if (chunks <= 1 || M * N * K < (int64_t(1) << 20)) {
    fn(0, M, 0, N);
    return;
  }
  int64_t per = ((side + chunks - 1) / chunks + align - 1) / align * align;
  auto run = [&](int64_t t) {
    int64_t lo = t * per, hi = std::min(side, lo + per);
    if (lo >= hi)
      return;
    splitM ? fn(lo, hi, 0, N) : fn(0, M, lo, hi);
  };
  // One chunk per thread of the run's OpenMP pool (the pool generated code
  // runs its parallel loops on): each output element is computed by one
  // thread in the same order whatever the split.
#pragma omp parallel for num_threads(int(chunks)) schedule(static, 1)
  for (int64_t t = 0; t < chunks; ++t)
    run(t);
}

/// The portable microkernel: same packed layouts, plain C++.
template <class P>
void portableKernel(int64_t groups, const typename P::PA *a,
                    const typename P::PB *b, typename P::Acc *c, int64_t ldc) {
  constexpr int KG = P::KG;
  typename P::Acc acc[kMR][kNR] = {};
  for (int64_t g = 0; g < groups; ++g, a += kMR * KG, b += kNR * KG)
    for (int r = 0; r < kMR; ++r)
      for (int n = 0; n < kNR; ++n)
        for (int j = 0; j < KG; ++j)
          acc[r][n] = P::mac(acc[r][n], a[r * KG + j], b[n * KG + j]);
  for (int r = 0; r < kMR; ++r)
    for (int n = 0; n < kNR; ++n)
      c[r * ldc + n] = P::add(c[r * ldc + n], acc[r][n]);
}

template <class P>
void portableGemm(Gemm<P> g) {
  gemmBlocked<P>(g, portableKernel<P>);
}

/// The bytes an rows x cols view spans.
template <class T>
std::pair<uintptr_t, uintptr_t> spanOf(View<T> v, int64_t rows, int64_t cols) {
  auto at = [&](int64_t i, int64_t j) {
    return reinterpret_cast<uintptr_t>(v.p + i * v.s0 + j * v.s1);
  };
  uintptr_t lo = std::min(
      {at(0, 0), at(rows - 1, 0), at(0, cols - 1), at(rows - 1, cols - 1)});
  uintptr_t hi = std::max(
      {at(0, 0), at(rows - 1, 0), at(0, cols - 1), at(rows - 1, cols - 1)});
  return {lo, hi + sizeof(T)};
}

/// An input view that shares memory with the output is read from a
/// row-major copy taken before anything is written (the values a
/// contraction reads are those before it runs). `copy` keeps the storage.
template <class In, class Acc>
View<const In> unaliased(View<const In> in, int64_t rows, int64_t cols,
                         View<Acc> out, int64_t outRows, int64_t outCols,
                         std::vector<In> &copy) {
  auto [inLo, inHi] = spanOf(in, rows, cols);
  auto [outLo, outHi] = spanOf(out, outRows, outCols);
  if (inHi <= outLo || outHi <= inLo)
    return in;
  copy.resize(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      copy[size_t(i * cols + j)] = in.at(i, j);
  return {copy.data(), cols, 1};
}

/// Splits the product over the threads and runs `blocked` on each part.
template <class In, class Acc>
void gemm(int64_t M, int64_t N, int64_t K, View<const In> a, View<const In> b,
          View<Acc> c, void (*blocked)(GemmOperands<In, Acc>)) {
  if (M <= 0 || N <= 0 || K <= 0)
    return;
  std::vector<In> aCopy, bCopy;
  a = unaliased(a, M, K, c, M, N, aCopy);
  b = unaliased(b, K, N, c, M, N, bCopy);
  // An output narrower than a tile's 12 rows (a convolution with few
  // filters: N = 6 of 32 columns) runs transposed, C^T = B^T A^T, so that
  // its N lands on the rows (s8 at N = 6: 3.3 -> 2.4 ms); every kernel is
  // symmetric in its operands (the s8 one offsets whichever is A).
  if (N < kMR && M > N) {
    auto t = [](auto v) { return decltype(v){v.p, v.s1, v.s0}; };
    gemm<In, Acc>(N, M, K, t(b), t(a), t(c), blocked);
    return;
  }
  parallelSplit(M, N, K, std::max(kMR, kNR),
                [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
                  blocked({m1 - m0, n1 - n0, K, a.sub(m0, 0), b.sub(0, n0),
                           c.sub(m0, n0)});
                });
}

void portableBinaryTile(int ra, int rb, int64_t words, const uint64_t *a,
                        const uint64_t *b, int64_t stride, uint64_t *out) {
  for (int i = 0; i < ra; ++i)
    for (int j = 0; j < rb; ++j) {
      uint64_t sum = 0;
      for (int64_t w = 0; w < words; ++w)
        sum += uint64_t(
            __builtin_popcountll(a[i * stride + w] & b[j * stride + w]));
      out[i * rb + j] = sum;
    }
}

int64_t portablePackLine(const int8_t *codes, int64_t K, int bits,
                         int64_t words, uint64_t *row) {
  int offset = 1 << (bits - 1);
  uint8_t mask = uint8_t((1 << bits) - 1);
  int64_t sum = 0;
  for (int64_t w = 0; w < words; ++w) {
    uint64_t plane[8] = {};
    for (int64_t k = w * 64; k < std::min(K, w * 64 + 64); ++k) {
      uint8_t q = uint8_t(codes[k] + offset) & mask;
      sum += q;
      for (int i = 0; i < bits; ++i)
        plane[i] |= uint64_t((q >> i) & 1) << (k % 64);
    }
    for (int i = 0; i < bits; ++i)
      row[i * words + w] = plane[i];
  }
  return sum;
}

/// Code e (0..127) of group g of a packed panel.
uint8_t packedCode(const uint8_t *panel, int64_t g, int e, int bits) {
  if (bits == 8)
    return panel[g * 128 + e];
  uint8_t byte = panel[g * 64 + e % 64];
  return e < 64 ? byte & 0x0f : byte >> 4;
}

void portablePackedTile(int64_t groups, const int8_t *a, const uint8_t *panel,
                        int bits, int32_t *tile) {
  for (int64_t g = 0; g < groups; ++g)
    for (int r = 0; r < kPackedMR; ++r)
      for (int n = 0; n < kNR; ++n) {
        uint32_t sum = 0;
        for (int j = 0; j < 4; ++j)
          sum += uint32_t(int32_t(a[(g * kPackedMR + r) * 4 + j]) *
                          int32_t(packedCode(panel, g, n * 4 + j, bits)));
        tile[r * kNR + n] = int32_t(uint32_t(tile[r * kNR + n]) + sum);
      }
}

void portablePacked(PackedOperands o) { packedBlocked(o, portablePackedTile); }

/// The bit-serial GEMM without AVX-512: bit-plane rows of A and B, popcount
/// sums per tile of plane rows, planes combined and centring taken out per
/// output.
void portableBitSerial(BitSerialOperands o) {
  auto [M, N, K, a, b, c, aBits, bBits] = o;
  int64_t words = ((K + 63) / 64 + 7) / 8 * 8;
  int mTile = std::max(1, 4 / aBits), nTile = std::max(1, 4 / bBits);
  int64_t mPad = (M + mTile - 1) / mTile * mTile;
  int64_t nPad = (N + nTile - 1) / nTile * nTile;
  uint64_t *aPlanes = scratchA.get<uint64_t>(mPad * aBits * words);
  uint64_t *bPlanes = scratchB.get<uint64_t>(nPad * bBits * words);
  std::fill(aPlanes, aPlanes + mPad * aBits * words, 0);
  std::fill(bPlanes, bPlanes + nPad * bBits * words, 0);
  int64_t *sums = scratchSums.get<int64_t>(M + N);
  packPlanes(a, M, K, aBits, words, aPlanes, sums, portablePackLine);
  // Columns of B are lines of its transpose.
  packPlanes({b.p, b.s1, b.s0}, N, K, bBits, words, bPlanes, sums + M,
             portablePackLine);
  int64_t oa = 1 << (aBits - 1), ob = 1 << (bBits - 1);
  int ra = mTile * aBits, rb = nTile * bBits;
  uint64_t out[16];
  for (int64_t m0 = 0; m0 < M; m0 += mTile)
    for (int64_t n0 = 0; n0 < N; n0 += nTile) {
      portableBinaryTile(ra, rb, words, aPlanes + m0 * aBits * words,
                         bPlanes + n0 * bBits * words, words, out);
      for (int64_t mi = 0; mi < mTile && m0 + mi < M; ++mi)
        for (int64_t ni = 0; ni < nTile && n0 + ni < N; ++ni) {
          int64_t qq = 0;
          for (int i = 0; i < aBits; ++i)
            for (int j = 0; j < bBits; ++j)
              qq += int64_t(out[(mi * aBits + i) * rb + ni * bBits + j])
                    << (i + j);
          // sum (qa - oa)(qb - ob)
          int64_t sum =
              qq - ob * sums[m0 + mi] - oa * sums[M + n0 + ni] + K * oa * ob;
          int32_t &y = c.at(m0 + mi, n0 + ni);
          y = int32_t(uint32_t(y) + uint32_t(uint64_t(sum)));
        }
    }
}

/// A strided 4-D view.
template <class T>
struct View4 {
  const T *p;
  int64_t d[4], s[4];
  T at(int64_t i, int64_t j, int64_t k, int64_t l) const {
    return p[i * s[0] + j * s[1] + k * s[2] + l * s[3]];
  }
  /// The bytes the view spans.
  std::pair<uintptr_t, uintptr_t> span() const {
    intptr_t lo = 0, hi = 0;
    for (int i = 0; i < 4; ++i) {
      intptr_t extent = intptr_t((d[i] - 1) * s[i]);
      (extent < 0 ? lo : hi) += extent;
    }
    auto base = reinterpret_cast<intptr_t>(p);
    return {uintptr_t(base + lo * intptr_t(sizeof(T))),
            uintptr_t(base + (hi + 1) * intptr_t(sizeof(T)))};
  }
  template <class U>
  bool overlaps(const View4<U> &other) const {
    auto [lo, hi] = span();
    auto [otherLo, otherHi] = other.span();
    return lo < otherHi && otherLo < hi;
  }
  /// Whether dims [from, 4) are one row-major run of unit stride.
  bool flatFrom(int from) const {
    int64_t expected = 1;
    for (int i = 3; i >= from; --i) {
      if (d[i] != 1 && s[i] != expected)
        return false;
      expected *= d[i];
    }
    return true;
  }
  /// A row-major copy in `storage`.
  View4 copyTo(std::vector<T> &storage) const {
    storage.resize(size_t(d[0] * d[1] * d[2] * d[3]));
    size_t e = 0;
    for (int64_t i = 0; i < d[0]; ++i)
      for (int64_t j = 0; j < d[1]; ++j)
        for (int64_t k = 0; k < d[2]; ++k)
          for (int64_t l = 0; l < d[3]; ++l)
            storage[e++] = at(i, j, k, l);
    return {storage.data(),
            {d[0], d[1], d[2], d[3]},
            {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1}};
  }
};

/// The convolution geometry of the C API.
struct ConvShape {
  int64_t N, C, H, W, F, KH, KW, OH, OW, strideH, strideW, dilationH, dilationW;
  bool valid() const {
    return N > 0 && C > 0 && F > 0 && KH > 0 && KW > 0 && OH > 0 && OW > 0 &&
           strideH > 0 && strideW > 0 && dilationH > 0 && dilationW > 0 &&
           (OH - 1) * strideH + (KH - 1) * dilationH < H &&
           (OW - 1) * strideW + (KW - 1) * dilationW < W;
  }
};

/// Y += conv2d(X, W) on strided views: inputs sharing memory with Y are
/// read from copies, W and Y are made flat where they are not (the kernel
/// runs them as matrices), images are split across the threads.
template <class In, class Acc>
void conv2d(const ConvShape &g, View4<In> xv, View4<In> wv, Acc *y,
            const int64_t ys[4], void (*run)(const ConvOperands<In, Acc> &)) {
  if (!g.valid())
    return;
  View4<Acc> yv{y, {g.N, g.F, g.OH, g.OW}, {ys[0], ys[1], ys[2], ys[3]}};
  std::vector<In> xCopy, wCopy;
  std::vector<Acc> yCopy;
  if (xv.overlaps(yv))
    xv = xv.copyTo(xCopy);
  if (wv.overlaps(yv) || !wv.flatFrom(1))
    wv = wv.copyTo(wCopy);
  View4<Acc> yRun = yv.flatFrom(2) ? yv : yv.copyTo(yCopy);
  ConvOperands<In, Acc> o{0,
                          g.N,
                          g.C,
                          g.F,
                          g.KH,
                          g.KW,
                          g.OH,
                          g.OW,
                          g.strideH,
                          g.strideW,
                          g.dilationH,
                          g.dilationW,
                          xv.p,
                          {xv.s[0], xv.s[1], xv.s[2], xv.s[3]},
                          {wv.p, wv.s[0], 1},
                          const_cast<Acc *>(yRun.p),
                          yRun.s[0],
                          yRun.s[1],
                          1};
  int threads = int(std::min<int64_t>(numThreads.load(), g.N));
  if (threads <= 1 ||
      g.N * g.F * g.OH * g.OW * g.C * g.KH * g.KW < (int64_t(1) << 20)) {
    run(o);
  } else {
    int64_t per = (g.N + threads - 1) / threads;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int t = 0; t < threads; ++t) {
      ConvOperands<In, Acc> part = o;
      part.n0 = std::min(g.N, t * per);
      part.n1 = std::min(g.N, part.n0 + per);
      if (part.n0 < part.n1)
        run(part);
    }
  }
  if (!yCopy.empty()) {
    size_t e = 0;
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t f = 0; f < g.F; ++f)
        for (int64_t i = 0; i < g.OH; ++i)
          for (int64_t j = 0; j < g.OW; ++j)
            y[n * ys[0] + f * ys[1] + i * ys[2] + j * ys[3]] = yCopy[e++];
  }
}

void portableConvF32(const ConvOperands<float, float> &o) {
  convF32Blocked(o, portableKernel<F32>);
}
void portableConvBF16(const ConvOperands<float, float> &o) {
  convBF16Blocked(o, portableKernel<BF16>);
}
void portableConvS8(const ConvOperands<int8_t, int32_t> &o) {
  convS8Blocked(o, portableKernel<S8U8>);
}

} // namespace
} // namespace qtrain::mk

using namespace qtrain::mk;

extern "C" {

void qtrain_mk_gemm_f32(int64_t M, int64_t N, int64_t K, const float *a,
                        int64_t aOffset, int64_t aStrideM, int64_t aStrideK,
                        const float *b, int64_t bOffset, int64_t bStrideK,
                        int64_t bStrideN, float *c, int64_t cOffset,
                        int64_t cStrideM, int64_t cStrideN) {
  gemm<float, float>(M, N, K, {a + aOffset, aStrideM, aStrideK},
                     {b + bOffset, bStrideK, bStrideN},
                     {c + cOffset, cStrideM, cStrideN},
                     hasAvx512F32() ? gemmF32Avx512 : portableGemm<F32>);
}

void qtrain_mk_gemm_bf16(int64_t M, int64_t N, int64_t K, const float *a,
                         int64_t aOffset, int64_t aStrideM, int64_t aStrideK,
                         const float *b, int64_t bOffset, int64_t bStrideK,
                         int64_t bStrideN, float *c, int64_t cOffset,
                         int64_t cStrideM, int64_t cStrideN) {
  // Same operands as f32; only the kernel differs.
  auto blocked = hasAvx512BF16() ? gemmBF16Avx512 : portableGemm<BF16>;
  gemm<float, float>(M, N, K, {a + aOffset, aStrideM, aStrideK},
                     {b + bOffset, bStrideK, bStrideN},
                     {c + cOffset, cStrideM, cStrideN}, blocked);
}

void qtrain_mk_gemm_s8s8s32(int64_t M, int64_t N, int64_t K, const int8_t *a,
                            int64_t aOffset, int64_t aStrideM, int64_t aStrideK,
                            const int8_t *b, int64_t bOffset, int64_t bStrideK,
                            int64_t bStrideN, int32_t *c, int64_t cOffset,
                            int64_t cStrideM, int64_t cStrideN) {
  View<const int8_t> av{a + aOffset, aStrideM, aStrideK};
  View<const int8_t> bv{b + bOffset, bStrideK, bStrideN};
  gemm<int8_t, int32_t>(M, N, K, av, bv, {c + cOffset, cStrideM, cStrideN},
                        hasAvx512Vnni() ? gemmS8Avx512 : portableGemm<S8>);
}

void qtrain_mk_gemm_s16s16s32(int64_t M, int64_t N, int64_t K, const int16_t *a,
                              int64_t aOffset, int64_t aStrideM,
                              int64_t aStrideK, const int16_t *b,
                              int64_t bOffset, int64_t bStrideK,
                              int64_t bStrideN, int32_t *c, int64_t cOffset,
                              int64_t cStrideM, int64_t cStrideN) {
  View<const int16_t> av{a + aOffset, aStrideM, aStrideK};
  View<const int16_t> bv{b + bOffset, bStrideK, bStrideN};
  gemm<int16_t, int32_t>(M, N, K, av, bv, {c + cOffset, cStrideM, cStrideN},
                         hasAvx512Vnni() ? gemmS16Avx512 : portableGemm<S16>);
}

void qtrain_mk_gemm_bitserial(int64_t M, int64_t N, int64_t K, const int8_t *a,
                              int64_t aOffset, int64_t aStrideM,
                              int64_t aStrideK, const int8_t *b,
                              int64_t bOffset, int64_t bStrideK,
                              int64_t bStrideN, int32_t *c, int64_t cOffset,
                              int64_t cStrideM, int64_t cStrideN, int32_t aBits,
                              int32_t bBits) {
  if (M <= 0 || N <= 0 || K <= 0)
    return;
  if (aBits < 1 || aBits > 4 || bBits < 1 || bBits > 4)
    std::abort(); // the compiler only emits 1..4
  View<int32_t> cv{c + cOffset, cStrideM, cStrideN};
  std::vector<int8_t> aCopy, bCopy;
  View<const int8_t> av =
      unaliased(View<const int8_t>{a + aOffset, aStrideM, aStrideK}, M, K, cv,
                M, N, aCopy);
  View<const int8_t> bv =
      unaliased(View<const int8_t>{b + bOffset, bStrideK, bStrideN}, K, N, cv,
                M, N, bCopy);
  auto blocked = hasAvx512Popcnt() ? bitSerialAvx512 : portableBitSerial;
  parallelSplit(M, N, K, 4,
                [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
                  blocked({m1 - m0, n1 - n0, K, av.sub(m0, 0), bv.sub(0, n0),
                           cv.sub(m0, n0), aBits, bBits});
                });
}

int64_t qtrain_mk_packed_b_bytes(int64_t N, int64_t K, int32_t bits) {
  if ((bits != 8 && bits != 4) || N < 0 || K < 0)
    return -1;
  return (N + kNR - 1) / kNR * packedPanelBytes(K, bits);
}

void qtrain_mk_pack_b(int64_t N, int64_t K, const int8_t *b, int64_t bOffset,
                      int64_t bStrideK, int64_t bStrideN, int32_t bits,
                      void *packed) {
  int64_t bytes = qtrain_mk_packed_b_bytes(N, K, bits);
  if (bytes < 0)
    std::abort(); // the caller checks the width
  auto *out = static_cast<uint8_t *>(packed);
  std::memset(out, 0, size_t(bytes));
  View<const int8_t> bv{b + bOffset, bStrideK, bStrideN};
  int offset = 1 << (bits - 1);
  int64_t panelBytes = packedPanelBytes(K, bits);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      uint8_t q = uint8_t((bv.at(k, n) + offset) & ((1 << bits) - 1));
      uint8_t *panel = out + (n / kNR) * panelBytes;
      int64_t g = k / 4;
      int e = int((n % kNR) * 4 + k % 4);
      if (bits == 8)
        panel[g * 128 + e] = q;
      else
        panel[g * 64 + e % 64] |= uint8_t(e < 64 ? q : q << 4);
    }
}

void qtrain_mk_gemm_s8_packed_b(int64_t M, int64_t N, int64_t K,
                                const int8_t *a, int64_t aOffset,
                                int64_t aStrideM, int64_t aStrideK,
                                const void *packed, int32_t bits, int32_t *c,
                                int64_t cOffset, int64_t cStrideM,
                                int64_t cStrideN) {
  if (M <= 0 || N <= 0 || K <= 0)
    return;
  if (bits != 8 && bits != 4)
    std::abort(); // as qtrain_mk_pack_b
  View<const int8_t> av{a + aOffset, aStrideM, aStrideK};
  View<int32_t> cv{c + cOffset, cStrideM, cStrideN};
  const auto *bytes = static_cast<const uint8_t *>(packed);
  int64_t panelBytes = packedPanelBytes(K, bits);
  auto blocked = hasAvx512Vnni() ? gemmPackedAvx512 : portablePacked;
  // Split along N at panel boundaries (so each part starts a panel).
  parallelSplit(
      M, N, K, kNR, [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
        blocked({m1 - m0, n1 - n0, K, av.sub(m0, 0),
                 bytes + (n0 / kNR) * panelBytes, bits, cv.sub(m0, n0)});
      });
}

#define QTRAIN_CONV_ARGS(In, Acc)                                              \
  int64_t N, int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH,           \
      int64_t KW, int64_t OH, int64_t OW, int64_t strideH, int64_t strideW,    \
      int64_t dilationH, int64_t dilationW, const In *x, int64_t xOffset,      \
      int64_t xStrideN, int64_t xStrideC, int64_t xStrideH, int64_t xStrideW,  \
      const In *w, int64_t wOffset, int64_t wStrideF, int64_t wStrideC,        \
      int64_t wStrideKH, int64_t wStrideKW, Acc *y, int64_t yOffset,           \
      int64_t yStrideN, int64_t yStrideF, int64_t yStrideH, int64_t yStrideW
#define QTRAIN_CONV_VIEWS                                                      \
  ConvShape{N,  C,  H,       W,       F,         KH,       KW,                 \
            OH, OW, strideH, strideW, dilationH, dilationW},                   \
      {x + xOffset, {N, C, H, W}, {xStrideN, xStrideC, xStrideH, xStrideW}},   \
      {w + wOffset,                                                            \
       {F, C, KH, KW},                                                         \
       {wStrideF, wStrideC, wStrideKH, wStrideKW}},                            \
      y + yOffset

/// The call as LibraryConv.h takes it.
#define QTRAIN_LIBRARY_CONV_CALL                                               \
  LibraryConvCall {                                                            \
    N, C, H, W, F, KH, KW, OH, OW, strideH, strideW, dilationH, dilationW,     \
        x + xOffset, {xStrideN, xStrideC, xStrideH, xStrideW}, w + wOffset,    \
        {wStrideF, wStrideC, wStrideKH, wStrideKW}, y + yOffset, {             \
      yStrideN, yStrideF, yStrideH, yStrideW                                   \
    }                                                                          \
  }

void qtrain_mk_conv2d_nchw_f32(QTRAIN_CONV_ARGS(float, float)) {
  const int64_t ys[4] = {yStrideN, yStrideF, yStrideH, yStrideW};
  if (ConvShape{N, C, H, W, F, KH, KW, OH, OW, strideH, strideW, dilationH,
                dilationW}
          .valid() &&
      libraryConvF32(QTRAIN_LIBRARY_CONV_CALL, numThreads.load()))
    return;
  conv2d<float, float>(QTRAIN_CONV_VIEWS, ys,
                       hasAvx512F32() ? convF32Avx512 : portableConvF32);
}

void qtrain_mk_conv2d_nchw_bf16(QTRAIN_CONV_ARGS(float, float)) {
  const int64_t ys[4] = {yStrideN, yStrideF, yStrideH, yStrideW};
  conv2d<float, float>(QTRAIN_CONV_VIEWS, ys,
                       hasAvx512BF16() ? convBF16Avx512 : portableConvBF16);
}

void qtrain_mk_conv2d_nchw_s8s8s32(QTRAIN_CONV_ARGS(int8_t, int32_t)) {
  const int64_t ys[4] = {yStrideN, yStrideF, yStrideH, yStrideW};
  if (ConvShape{N, C, H, W, F, KH, KW, OH, OW, strideH, strideW, dilationH,
                dilationW}
          .valid() &&
      libraryConvS8(QTRAIN_LIBRARY_CONV_CALL, numThreads.load()))
    return;
  conv2d<int8_t, int32_t>(QTRAIN_CONV_VIEWS, ys,
                          hasAvx512Vnni() ? convS8Avx512 : portableConvS8);
}

int64_t qtrain_mk_max_accumulation_length(const char *kind, int32_t aBits,
                                          int32_t bBits) {
  int maxBits = 0;
  if (std::strcmp(kind, "s8s8s32") == 0)
    maxBits = 8;
  else if (std::strcmp(kind, "s16s16s32") == 0)
    maxBits = 16;
  else if (std::strcmp(kind, "bitserial") == 0)
    maxBits = 4;
  if (maxBits == 0 || aBits < 1 || aBits > maxBits || bBits < 1 ||
      bBits > maxBits)
    return -1;
  // The largest |code product| is 2^(a-1) * 2^(b-1) (both codes at their
  // minimum); K of them must stay below 2^31.
  int64_t largest = int64_t(1) << (aBits + bBits - 2);
  return ((int64_t(1) << 31) - 1) / largest;
}

void qtrain_mk_set_num_threads(int32_t threads) {
  threads = std::max(1, threads);
  numThreads.store(threads, std::memory_order_relaxed);
  // The parallel loops of generated code take the pool's default size.
  omp_set_num_threads(threads);
}

const char *qtrain_mk_isa(void) {
  return hasAvx512Vnni() ? "avx512" : "portable";
}

} // extern "C"
