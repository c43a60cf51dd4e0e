//===- OneDnnConv.cpp - oneDNN's forward convolutions behind the C API ----===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// LibraryConv.h on oneDNN (Debian's libdnnl 2.6): the f32 and u8s8s32
/// forward convolutions in the layouts oneDNN runs fastest (NHWC
/// activations, blocked filters), where benchmarks/conv measures them
/// faster than the implicit-GEMM kernels with the layout changes counted.
///
/// A call gathers X into NHWC (the s8 codes as u8 = code + 128) and W into
/// a dense OIHW copy, which a cached reorder blocks; the convolution writes
/// a dense NHWC result that is added into the strided Y (for s8 minus 128
/// times each filter's sum, wrapped modulo 2^32). Reading every operand
/// into a copy before Y is written serves any strides and any aliasing.
///
/// Primitives are cached per shape and thread count (a training step calls
/// the same shapes every step; creating one costs more than running it),
/// in a bounded, mutex-guarded map; the buffers are per thread. oneDNN
/// accumulates each output within one thread for forward convolutions,
/// so results do not depend on the thread count (tested); backward-weights
/// convolutions, whose reductions it splits over threads, never come here.
///
/// The u8 sums are exact where oneDNN keeps them in int32 from the first
/// product to the store: its brgemm convolutions on VNNI or AMX with no
/// scales, compensation or post-ops (measured exact and wrapping at the
/// s8 kernels' longest accumulation, LibraryConvTests.cpp). Its s8-source
/// form is not: it adds its compensation in f32, rounding sums beyond 2^24;
/// without VNNI it sums saturating 16-bit pairs. Only the former is taken.
///
//===----------------------------------------------------------------------===//

#include "LibraryConv.h"

#include "Microkernels.h"

#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace qtrain::mk {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Type = memory::data_type;

ConvLibraryMode modeFromEnvironment() {
  const char *mode = std::getenv("QTRAIN_CONV_LIBRARY");
  if (mode && std::strcmp(mode, "always") == 0)
    return ConvLibraryMode::Always;
  if (mode && std::strcmp(mode, "never") == 0)
    return ConvLibraryMode::Never;
  return ConvLibraryMode::Auto;
}

std::atomic<ConvLibraryMode> libraryMode{modeFromEnvironment()};

enum class Kind { F32, S8 };

/// Whether the library should run the call: it must be able to (the CPU
/// path of our own kernels is AVX-512; with QTRAIN_MICROKERNELS=portable
/// nothing goes to the library) and, under Auto, be faster. benchmarks/conv
/// measures oneDNN slower on single-channel inputs (LeNet's and convnet's
/// first layers: the NHWC result's layout change costs more than the
/// convolution gains) and faster from a few channels on.
bool wanted(Kind kind, const LibraryConvCall &c) {
  ConvLibraryMode mode = libraryMode.load(std::memory_order_relaxed);
  if (mode == ConvLibraryMode::Never)
    return false;
  if (kind == Kind::F32 ? !hasAvx512F32() : !hasAvx512Vnni())
    return false;
  if (mode == ConvLibraryMode::Always)
    return true;
  return c.C >= 4 && c.N * c.F * c.OH * c.OW * c.C * c.KH * c.KW >= (1 << 22);
}

/// A convolution ready to run: the primitive, the reorder that blocks the
/// dense OIHW filter, and the sizes of what a call needs.
struct Plan {
  bool usable = false;
  dnnl::convolution_forward conv;
  dnnl::reorder blockFilter;
  memory::desc src, weightsDense, weights, dst, scratchpad;
};

using Key = std::array<int64_t, 15>;

Key keyOf(Kind kind, const LibraryConvCall &c, int threads) {
  return {int64_t(kind), c.N,       c.C,         c.H,         c.W,
          c.F,           c.KH,      c.KW,        c.OH,        c.OW,
          c.strideH,     c.strideW, c.dilationH, c.dilationW, threads};
}

dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// Builds the plan; unusable where oneDNN has no exact, non-reference
/// kernel for it (then the caller's own kernel runs, every time).
std::shared_ptr<const Plan> makePlan(Kind kind, const LibraryConvCall &c) {
  auto plan = std::make_shared<Plan>();
  bool s8 = kind == Kind::S8;
  memory::dims srcDims{c.N, c.C, c.H, c.W}, wDims{c.F, c.C, c.KH, c.KW},
      dstDims{c.N, c.F, c.OH, c.OW};
  try {
    memory::desc src(srcDims, s8 ? Type::u8 : Type::f32, Tag::nhwc);
    memory::desc wAny(wDims, s8 ? Type::s8 : Type::f32, Tag::any);
    memory::desc dst(dstDims, s8 ? Type::s32 : Type::f32, Tag::nhwc);
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        src, wAny, dst, {c.strideH, c.strideW},
        {c.dilationH - 1, c.dilationW - 1}, {0, 0}, {0, 0});
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, cpuEngine(),
                                                 /*allow_empty=*/true);
    if (!pd)
      return plan;
    // Reference kernels are slower than ours; the s8 codes go only to the
    // brgemm kernels on VNNI or AMX (the file comment says why).
    std::string impl = pd.impl_info_str();
    if (impl.find("ref") != std::string::npos ||
        (s8 && (impl.rfind("brg", 0) != 0 ||
                (impl.find("vnni") == std::string::npos &&
                 impl.find("amx") == std::string::npos))))
      return plan;
    plan->src = src;
    plan->dst = dst;
    plan->weights = pd.weights_desc();
    plan->weightsDense =
        memory::desc(wDims, s8 ? Type::s8 : Type::f32, Tag::oihw);
    plan->scratchpad = pd.scratchpad_desc();
    plan->conv = dnnl::convolution_forward(pd);
    plan->blockFilter = dnnl::reorder(dnnl::reorder::primitive_desc(
        cpuEngine(), plan->weightsDense, cpuEngine(), plan->weights));
    plan->usable = true;
  } catch (const dnnl::error &) {
    plan->usable = false;
  }
  return plan;
}

/// The plans of the shapes seen, at most kCapacity of them; the least
/// recently used goes first (a caller still running it keeps it alive).
class PlanCache {
public:
  std::shared_ptr<const Plan> get(Kind kind, const LibraryConvCall &c,
                                  int threads) {
    Key key = keyOf(kind, c, threads);
    std::lock_guard<std::mutex> lock(mutex);
    ++clock;
    auto it = plans.find(key);
    if (it != plans.end()) {
      it->second.lastUse = clock;
      return it->second.plan;
    }
    if (plans.size() >= kCapacity)
      plans.erase(std::min_element(plans.begin(), plans.end(),
                                   [](const auto &a, const auto &b) {
                                     return a.second.lastUse < b.second.lastUse;
                                   }));
    // oneDNN sizes its thread split when the primitive is created.
    omp_set_num_threads(threads);
    Entry &entry = plans[key];
    entry.plan = makePlan(kind, c);
    entry.lastUse = clock;
    return entry.plan;
  }

private:
  static constexpr size_t kCapacity = 64;
  struct Entry {
    std::shared_ptr<const Plan> plan;
    uint64_t lastUse = 0;
  };
  std::mutex mutex;
  std::map<Key, Entry> plans;
  uint64_t clock = 0;
};

PlanCache &planCache() {
  static PlanCache cache;
  return cache;
}

/// Per-thread storage for a call's copies, 64-byte aligned, kept between
/// calls (a step calls the same shapes again).
class Buffer {
public:
  void *get(size_t bytes) {
    if (storage.size() < bytes + 64)
      storage.resize(bytes + 64);
    auto addr = reinterpret_cast<uintptr_t>(storage.data());
    return reinterpret_cast<void *>((addr + 63) & ~uintptr_t(63));
  }

private:
  std::vector<unsigned char> storage;
};
thread_local Buffer srcBuffer, dstBuffer, denseFilter, blockedFilter,
    scratchBuffer;

/// X (strided NCHW) into dense NHWC, as code + 128 for s8.
template <class In, class Out>
void gatherNhwc(const LibraryConvCall &c, Out *out, int threads) {
  const In *x = static_cast<const In *>(c.x);
  const int64_t *s = c.xs;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t h = 0; h < c.H; ++h)
      for (int64_t ch = 0; ch < c.C; ++ch) {
        const In *row = x + n * s[0] + ch * s[1] + h * s[2];
        Out *dst = out + ((n * c.H + h) * c.W) * c.C + ch;
        for (int64_t w = 0; w < c.W; ++w) {
          if constexpr (std::is_same_v<In, int8_t>)
            dst[w * c.C] = Out(row[w * s[3]] + 128);
          else
            dst[w * c.C] = row[w * s[3]];
        }
      }
}

/// Y (strided NCHW) += T (dense NHWC) - offset[f], modulo 2^32 for int32.
template <class Acc>
void addNchw(const LibraryConvCall &c, const Acc *t, const uint32_t *offset,
             int threads) {
  Acc *y = static_cast<Acc *>(c.y);
  const int64_t *s = c.ys;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t h = 0; h < c.OH; ++h)
      for (int64_t f = 0; f < c.F; ++f) {
        Acc *row = y + n * s[0] + f * s[1] + h * s[2];
        const Acc *src = t + ((n * c.OH + h) * c.OW) * c.F + f;
        for (int64_t w = 0; w < c.OW; ++w) {
          Acc &out = row[w * s[3]];
          if constexpr (std::is_same_v<Acc, int32_t>)
            out = int32_t(uint32_t(out) + uint32_t(src[w * c.F]) - offset[f]);
          else
            out += src[w * c.F];
        }
      }
}

template <class In, class Acc>
bool run(Kind kind, const LibraryConvCall &c, int threads) {
  if (!wanted(kind, c))
    return false;
  std::shared_ptr<const Plan> plan = planCache().get(kind, c, threads);
  if (!plan->usable)
    return false;
  using Src = std::conditional_t<std::is_same_v<In, int8_t>, uint8_t, float>;
  auto *src = static_cast<Src *>(
      srcBuffer.get(size_t(c.N * c.H * c.W * c.C) * sizeof(Src)));
  gatherNhwc<In>(c, src, threads);
  // The dense filter, and for s8 each filter's sum of codes: the u8
  // source's + 128 adds 128 times it to every output.
  auto *w = static_cast<In *>(
      denseFilter.get(size_t(c.F * c.C * c.KH * c.KW) * sizeof(In)));
  std::vector<uint32_t> offset(size_t(c.F), 0);
  const In *wv = static_cast<const In *>(c.w);
  for (int64_t f = 0, e = 0; f < c.F; ++f)
    for (int64_t ch = 0; ch < c.C; ++ch)
      for (int64_t kh = 0; kh < c.KH; ++kh)
        for (int64_t kw = 0; kw < c.KW; ++kw, ++e) {
          In v = wv[f * c.ws[0] + ch * c.ws[1] + kh * c.ws[2] + kw * c.ws[3]];
          w[e] = v;
          if constexpr (std::is_same_v<In, int8_t>)
            offset[size_t(f)] += uint32_t(128 * int32_t(v));
        }
  dnnl::engine &engine = cpuEngine();
  thread_local dnnl::stream stream(engine);
  memory dense(plan->weightsDense, engine, w);
  memory blocked(plan->weights, engine,
                 blockedFilter.get(plan->weights.get_size()));
  memory srcMem(plan->src, engine, src);
  memory dstMem(plan->dst, engine, dstBuffer.get(plan->dst.get_size()));
  memory scratch(plan->scratchpad, engine,
                 scratchBuffer.get(plan->scratchpad.get_size()));
  if (omp_get_max_threads() != threads)
    omp_set_num_threads(threads);
  plan->blockFilter.execute(stream, dense, blocked);
  plan->conv.execute(stream, {{DNNL_ARG_SRC, srcMem},
                              {DNNL_ARG_WEIGHTS, blocked},
                              {DNNL_ARG_DST, dstMem},
                              {DNNL_ARG_SCRATCHPAD, scratch}});
  stream.wait();
  addNchw<Acc>(c, static_cast<const Acc *>(dstMem.get_data_handle()),
               offset.data(), threads);
  return true;
}

} // namespace

void setConvLibraryMode(ConvLibraryMode mode) {
  libraryMode.store(mode, std::memory_order_relaxed);
}

bool hasConvLibrary() { return true; }

bool libraryConvF32(const LibraryConvCall &call, int threads) {
  return run<float, float>(Kind::F32, call, threads);
}

bool libraryConvS8(const LibraryConvCall &call, int threads) {
  return run<int8_t, int32_t>(Kind::S8, call, threads);
}

} // namespace qtrain::mk
