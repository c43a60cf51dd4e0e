//===- StepMemory.cpp - The buffer allocator of generated steps ---*- C++
//-*-===//
//
// Part of the qtrain project.
//
// qtrain-lower-cpu lowers memref.alloc/dealloc to the generic allocation
// functions of MLIR's MemRef-to-LLVM conversion (_mlir_memref_to_llvm_*);
// this file implements them on malloc, keeping count of the bytes the step
// holds, so that the runtime can report the peak memory a step really
// allocates (qtrain_step_memory_stats).
//
//===----------------------------------------------------------------------===//

#include "qtrain/ukernels.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {
std::atomic<int64_t> currentBytes{0};
std::atomic<int64_t> peakBytes{0};

/// Every block starts with this header, padded to the block's alignment:
/// the start of the malloc'ed region and the size asked for.
struct Header {
  void *base;
  int64_t size;
};

void *allocate(uint64_t size, uint64_t alignment) {
  if (alignment < alignof(std::max_align_t))
    alignment = alignof(std::max_align_t);
  if ((alignment & (alignment - 1)) != 0)
    return nullptr;
  uint64_t total = size + alignment + sizeof(Header);
  if (total < size)
    return nullptr;
  void *base = std::malloc(total);
  if (!base)
    return nullptr;
  uintptr_t start = reinterpret_cast<uintptr_t>(base) + sizeof(Header);
  uintptr_t aligned = (start + alignment - 1) & ~uintptr_t(alignment - 1);
  Header header{base, int64_t(size)};
  std::memcpy(reinterpret_cast<void *>(aligned - sizeof(Header)), &header,
              sizeof(Header));
  int64_t now = currentBytes.fetch_add(int64_t(size)) + int64_t(size);
  int64_t peak = peakBytes.load();
  while (now > peak && !peakBytes.compare_exchange_weak(peak, now)) {
  }
  return reinterpret_cast<void *>(aligned);
}
} // namespace

extern "C" {

QTRAIN_UK_EXPORT void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  return allocate(size, alignof(std::max_align_t));
}

QTRAIN_UK_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment,
                                                          uint64_t size) {
  return allocate(size, alignment);
}

QTRAIN_UK_EXPORT void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  Header header;
  std::memcpy(&header, static_cast<char *>(ptr) - sizeof(Header),
              sizeof(Header));
  currentBytes.fetch_sub(header.size);
  std::free(header.base);
}

QTRAIN_UK_EXPORT void qtrain_step_memory_stats(int64_t *current,
                                               int64_t *peak) {
  if (current)
    *current = currentBytes.load();
  if (peak)
    *peak = peakBytes.load();
}

QTRAIN_UK_EXPORT void qtrain_step_memory_reset_peak(void) {
  peakBytes.store(currentBytes.load());
}

} // extern "C"
