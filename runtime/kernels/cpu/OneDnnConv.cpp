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
/// A call changes X to NHWC with a oneDNN reorder (the s8 codes first
/// shifted to u8 = code + 128 in a dense copy), copies W densely (any
/// strides) for a reorder that blocks it, convolves into a dense NHWC
/// result and reorders that back onto Y: f32 with oneDNN's sum post-op (Y =
/// T + Y, one rounding, as an add), int32 through a dense NCHW copy that
/// our loop adds into Y minus 128 times each filter's sum, modulo 2^32.
/// Every operand is copied before Y is written, so aliasing is served; views
/// with a zero or negative stride (which oneDNN's descriptors cannot
/// express) stay with our kernels.
///
/// Primitives are cached per shape, strides and thread count (a training step
/// calls the same shapes every step; creating one costs more than running it),
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
/// nothing goes to the library) and, under Auto, be faster with the layout
/// changes counted. benchmarks/conv's C API rows measure: single-channel
/// inputs slower (the first layers: NHWC round trip of a large output for
/// little arithmetic); few filters (F <= 16: LeNet's conv2 and its input
/// gradient, where our 12-row tiles run mostly empty) 1.2-2.6x faster in
/// f32 and 1.3-1.7x in s8; many filters at depth >= 512 (convnet's conv2
/// input gradient) 1.36x faster in f32, even in s8; convnet's conv2 forward
/// (F = 64, depth 288) slower in both.
bool wanted(Kind kind, const LibraryConvCall &c) {
  ConvLibraryMode mode = libraryMode.load(std::memory_order_relaxed);
  if (mode == ConvLibraryMode::Never)
    return false;
  if (kind == Kind::F32 ? !hasAvx512F32() : !hasAvx512Vnni())
    return false;
  for (int i = 0; i < 4; ++i)
    if (c.xs[i] <= 0 || c.ys[i] <= 0)
      return false;
  if (mode == ConvLibraryMode::Always)
    return true;
  if (c.C < 4 || c.N * c.F * c.OH * c.OW * c.C * c.KH * c.KW < (1 << 22))
    return false;
  return c.F <= 16 || (kind == Kind::F32 && c.C * c.KH * c.KW >= 512);
}

/// A convolution ready to run: the primitive and the reorders around it
/// (X to NHWC, the dense OIHW filter to its blocked layout, the NHWC
/// result back to Y or, for int32, to a dense NCHW copy).
struct Plan {
  bool usable = false;
  dnnl::convolution_forward conv;
  dnnl::reorder toNhwc, blockFilter, fromNhwc;
  memory::desc input, src, weightsDense, weights, dst, output, scratchpad;
};

using Key = std::array<int64_t, 23>;

Key keyOf(Kind kind, const LibraryConvCall &c, int threads) {
  return {int64_t(kind), c.N,         c.C,     c.H,     c.W,       c.F,
          c.KH,          c.KW,        c.OH,    c.OW,    c.strideH, c.strideW,
          c.dilationH,   c.dilationW, threads, c.xs[0], c.xs[1],   c.xs[2],
          c.xs[3],       c.ys[0],     c.ys[1], c.ys[2], c.ys[3]};
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
  dnnl::engine &engine = cpuEngine();
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
    dnnl::convolution_forward::primitive_desc pd(desc, attr, engine,
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
    plan->input = s8 ? memory::desc(srcDims, Type::u8, Tag::nchw)
                     : memory::desc(srcDims, Type::f32,
                                    {c.xs[0], c.xs[1], c.xs[2], c.xs[3]});
    plan->output = s8 ? memory::desc(dstDims, Type::s32, Tag::nchw)
                      : memory::desc(dstDims, Type::f32,
                                     {c.ys[0], c.ys[1], c.ys[2], c.ys[3]});
    dnnl::primitive_attr reorderAttr, sumAttr;
    reorderAttr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    sumAttr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    sumAttr.set_post_ops(sum);
    dnnl::reorder::primitive_desc toNhwc(engine, plan->input, engine, src,
                                         reorderAttr),
        block(engine, plan->weightsDense, engine, plan->weights, reorderAttr),
        back(engine, dst, engine, plan->output, s8 ? reorderAttr : sumAttr);
    plan->scratchpad = pd.scratchpad_desc();
    for (const memory::desc &d :
         {toNhwc.scratchpad_desc(), block.scratchpad_desc(),
          back.scratchpad_desc()})
      if (d.get_size() > plan->scratchpad.get_size())
        plan->scratchpad = d;
    plan->conv = dnnl::convolution_forward(pd);
    plan->toNhwc = dnnl::reorder(toNhwc);
    plan->blockFilter = dnnl::reorder(block);
    plan->fromNhwc = dnnl::reorder(back);
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
thread_local Buffer inputBuffer, srcBuffer, dstBuffer, outputBuffer,
    denseFilter, blockedFilter, scratchBuffer;

/// The s8 codes of X (strided NCHW) as dense NCHW u8 codes + 128.
void shiftCodes(const LibraryConvCall &c, uint8_t *out, int threads) {
  const auto *x = static_cast<const int8_t *>(c.x);
  const int64_t *s = c.xs;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t ch = 0; ch < c.C; ++ch)
      for (int64_t h = 0; h < c.H; ++h) {
        const int8_t *row = x + n * s[0] + ch * s[1] + h * s[2];
        uint8_t *dst = out + ((n * c.C + ch) * c.H + h) * c.W;
        if (s[3] == 1)
          for (int64_t w = 0; w < c.W; ++w)
            dst[w] = uint8_t(row[w] + 128);
        else
          for (int64_t w = 0; w < c.W; ++w)
            dst[w] = uint8_t(row[w * s[3]] + 128);
      }
}

/// Y (strided NCHW) += T (dense NCHW) - offset[f], modulo 2^32.
void addSums(const LibraryConvCall &c, const int32_t *t, const uint32_t *offset,
             int threads) {
  auto *y = static_cast<int32_t *>(c.y);
  const int64_t *s = c.ys;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t f = 0; f < c.F; ++f)
      for (int64_t h = 0; h < c.OH; ++h) {
        int32_t *row = y + n * s[0] + f * s[1] + h * s[2];
        const int32_t *src = t + ((n * c.F + f) * c.OH + h) * c.OW;
        auto add = [&](int32_t &out, int32_t v) {
          out = int32_t(uint32_t(out) + uint32_t(v) - offset[f]);
        };
        if (s[3] == 1)
          for (int64_t w = 0; w < c.OW; ++w)
            add(row[w], src[w]);
        else
          for (int64_t w = 0; w < c.OW; ++w)
            add(row[w * s[3]], src[w]);
      }
}

template <class In, class Acc>
bool run(Kind kind, const LibraryConvCall &c, int threads) {
  if (!wanted(kind, c))
    return false;
  std::shared_ptr<const Plan> plan = planCache().get(kind, c, threads);
  if (!plan->usable)
    return false;
  constexpr bool s8 = std::is_same_v<In, int8_t>;
  dnnl::engine &engine = cpuEngine();
  thread_local dnnl::stream stream(engine);
  if (omp_get_max_threads() != threads)
    omp_set_num_threads(threads);
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
          if constexpr (s8)
            offset[size_t(f)] += uint32_t(128 * int32_t(v));
        }
  void *input = const_cast<void *>(c.x);
  if constexpr (s8) {
    input = inputBuffer.get(plan->input.get_size());
    shiftCodes(c, static_cast<uint8_t *>(input), threads);
  }
  memory inputMem(plan->input, engine, input);
  memory srcMem(plan->src, engine, srcBuffer.get(plan->src.get_size()));
  memory dense(plan->weightsDense, engine, w);
  memory blocked(plan->weights, engine,
                 blockedFilter.get(plan->weights.get_size()));
  memory dstMem(plan->dst, engine, dstBuffer.get(plan->dst.get_size()));
  memory outputMem(plan->output, engine,
                   s8 ? outputBuffer.get(plan->output.get_size()) : c.y);
  memory scratch(plan->scratchpad, engine,
                 scratchBuffer.get(plan->scratchpad.get_size()));
  plan->toNhwc.execute(stream, {{DNNL_ARG_FROM, inputMem},
                                {DNNL_ARG_TO, srcMem},
                                {DNNL_ARG_SCRATCHPAD, scratch}});
  plan->blockFilter.execute(stream, {{DNNL_ARG_FROM, dense},
                                     {DNNL_ARG_TO, blocked},
                                     {DNNL_ARG_SCRATCHPAD, scratch}});
  plan->conv.execute(stream, {{DNNL_ARG_SRC, srcMem},
                              {DNNL_ARG_WEIGHTS, blocked},
                              {DNNL_ARG_DST, dstMem},
                              {DNNL_ARG_SCRATCHPAD, scratch}});
  plan->fromNhwc.execute(stream, {{DNNL_ARG_FROM, dstMem},
                                  {DNNL_ARG_TO, outputMem},
                                  {DNNL_ARG_SCRATCHPAD, scratch}});
  stream.wait();
  if constexpr (s8)
    addSums(c, static_cast<const int32_t *>(outputMem.get_data_handle()),
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
