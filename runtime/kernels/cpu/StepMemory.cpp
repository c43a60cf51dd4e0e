//===- StepMemory.cpp - The buffer allocator of generated steps -*- C++ -*-===//
//
// Part of the qtrain project.
//
// qtrain-lower-cpu lowers memref.alloc/dealloc to the generic allocation
// functions of MLIR's MemRef-to-LLVM conversion (_mlir_memref_to_llvm_*);
// this file implements them on malloc, keeping count of the bytes the step
// holds, so that the runtime can report the peak memory a step really
// allocates (qtrain_step_memory_stats). An allocation that fails, or that
// would pass the limit set by qtrain_step_memory_set_limit, never returns
// null to the step: it calls the failure handler, which qtrain's runtime
// uses to abandon the step (Bundle::runStep).
//
//===----------------------------------------------------------------------===//

#include "qtrain/microkernels.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {
std::atomic<int64_t> currentBytes{0};
std::atomic<int64_t> peakBytes{0};
std::atomic<int64_t> limitBytes{0};
std::atomic<qtrain_step_memory_failure_handler> failureHandler{nullptr};

/// Every block starts with this header, padded to the block's alignment:
/// the start of the malloc'ed region, the size asked for, the step that
/// allocated it (0: none) and its neighbours in the list of live blocks (so
/// that the blocks of an abandoned step can be released).
struct Header {
  void *base;
  int64_t size;
  int64_t step;
  Header *prev;
  Header *next;
};

std::mutex liveMutex;
Header *liveHead = nullptr;
std::atomic<int64_t> lastStep{0};
/// The step running on this thread (qtrain_step_memory_begin), 0 if none:
/// several steps may run at once on other threads (one Trainer each).
thread_local int64_t currentStep = 0;

Header *headerOf(void *ptr) {
  return reinterpret_cast<Header *>(static_cast<char *>(ptr) - sizeof(Header));
}

/// Reports a failed allocation; never returns.
[[noreturn]] void fail(uint64_t size) {
  int64_t held = currentBytes.load(), limit = limitBytes.load();
  if (qtrain_step_memory_failure_handler handler = failureHandler.load())
    handler(int64_t(size), held, limit);
  // No handler, or one that returned: never hand a null buffer to the step.
  std::fprintf(stderr,
               "qtrain: error: a compiled step could not allocate %llu bytes "
               "(%lld held, limit %lld)\n",
               (unsigned long long)size, (long long)held, (long long)limit);
  std::fflush(stderr);
  std::_Exit(70);
}

void *allocate(uint64_t size, uint64_t alignment) {
  if (alignment < alignof(std::max_align_t))
    alignment = alignof(std::max_align_t);
  if ((alignment & (alignment - 1)) != 0 || size > uint64_t(INT64_MAX) / 2)
    fail(size);
  // Reserve the bytes first, so that threads allocating at once cannot
  // pass the limit together.
  int64_t limit = limitBytes.load();
  int64_t held = currentBytes.load();
  do {
    if (limit > 0 && held + int64_t(size) > limit)
      fail(size);
  } while (!currentBytes.compare_exchange_weak(held, held + int64_t(size)));
  int64_t now = held + int64_t(size);
  uint64_t total = size + alignment + sizeof(Header);
  void *base = std::malloc(total);
  if (!base) {
    currentBytes.fetch_sub(int64_t(size));
    fail(size);
  }
  uintptr_t start = reinterpret_cast<uintptr_t>(base) + sizeof(Header);
  uintptr_t aligned = (start + alignment - 1) & ~uintptr_t(alignment - 1);
  Header *header = reinterpret_cast<Header *>(aligned - sizeof(Header));
  {
    std::lock_guard<std::mutex> lock(liveMutex);
    *header = Header{base, int64_t(size), currentStep, nullptr, liveHead};
    if (liveHead)
      liveHead->prev = header;
    liveHead = header;
  }
  int64_t peak = peakBytes.load();
  while (now > peak && !peakBytes.compare_exchange_weak(peak, now)) {
  }
  return reinterpret_cast<void *>(aligned);
}

/// Unlinks and frees `header`'s block; the caller holds liveMutex.
void release(Header *header) {
  if (header->prev)
    header->prev->next = header->next;
  else
    liveHead = header->next;
  if (header->next)
    header->next->prev = header->prev;
  currentBytes.fetch_sub(header->size);
  std::free(header->base);
}
} // namespace

extern "C" {

QTRAIN_MK_EXPORT void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  return allocate(size, alignof(std::max_align_t));
}

QTRAIN_MK_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment,
                                                          uint64_t size) {
  return allocate(size, alignment);
}

QTRAIN_MK_EXPORT void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  std::lock_guard<std::mutex> lock(liveMutex);
  release(headerOf(ptr));
}

QTRAIN_MK_EXPORT void qtrain_step_memory_stats(int64_t *current,
                                               int64_t *peak) {
  if (current)
    *current = currentBytes.load();
  if (peak)
    *peak = peakBytes.load();
}

QTRAIN_MK_EXPORT void qtrain_step_memory_reset_peak(void) {
  peakBytes.store(currentBytes.load());
}

QTRAIN_MK_EXPORT void qtrain_step_memory_set_limit(int64_t bytes) {
  limitBytes.store(bytes > 0 ? bytes : 0);
}

QTRAIN_MK_EXPORT void qtrain_step_memory_set_failure_handler(
    qtrain_step_memory_failure_handler handler) {
  failureHandler.store(handler);
}

QTRAIN_MK_EXPORT int64_t qtrain_step_memory_begin(void) {
  currentStep = lastStep.fetch_add(1) + 1;
  return currentStep;
}

QTRAIN_MK_EXPORT void qtrain_step_memory_end(int64_t step,
                                             int32_t releaseHeld) {
  if (currentStep == step)
    currentStep = 0;
  if (!releaseHeld || step <= 0)
    return;
  std::lock_guard<std::mutex> lock(liveMutex);
  for (Header *h = liveHead; h;) {
    Header *next = h->next;
    if (h->step == step)
      release(h);
    h = next;
  }
}

} // extern "C"
