//===- StepMemoryTests.cpp - The allocator of generated steps ------------===//
//
// Part of the qtrain project.
//
// qtrain_step_memory_*: the byte count, the limit, the failure handler and
// the release of an abandoned step's buffers (runtime/kernels/cpu).
//
//===----------------------------------------------------------------------===//

#include "qtrain/ukernels.h"

#include <gtest/gtest.h>

#include <csetjmp>
#include <cstdint>

namespace {

int64_t held() {
  int64_t current = 0;
  qtrain_step_memory_stats(&current, nullptr);
  return current;
}

std::jmp_buf *recovery = nullptr;
int64_t failedRequest = 0, failedHeld = 0, failedLimit = 0;

void onFailure(int64_t requested, int64_t heldBytes, int64_t limit) {
  failedRequest = requested;
  failedHeld = heldBytes;
  failedLimit = limit;
  std::longjmp(*recovery, 1);
}

/// Allocates `bytes`; false when the failure handler jumped back.
bool tryAllocate(uint64_t bytes, void *&out) {
  std::jmp_buf target;
  recovery = &target;
  if (setjmp(target) != 0)
    return false;
  out = _mlir_memref_to_llvm_aligned_alloc(64, bytes);
  return true;
}

TEST(StepMemoryTest, CountsAlignsAndFrees) {
  int64_t base = held();
  void *a = _mlir_memref_to_llvm_aligned_alloc(64, 1000);
  void *b = _mlir_memref_to_llvm_alloc(24);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(held(), base + 1024);
  _mlir_memref_to_llvm_free(a);
  EXPECT_EQ(held(), base + 24);
  _mlir_memref_to_llvm_free(b);
  _mlir_memref_to_llvm_free(nullptr);
  EXPECT_EQ(held(), base);
}

TEST(StepMemoryTest, LimitCallsTheHandlerAndReleaseFreesTheStep) {
  qtrain_step_memory_set_failure_handler(&onFailure);
  int64_t base = held();
  void *kept = _mlir_memref_to_llvm_alloc(100);
  int64_t mark = qtrain_step_memory_mark();
  qtrain_step_memory_set_limit(base + 5000);
  void *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_TRUE(tryAllocate(2000, a));
  ASSERT_TRUE(tryAllocate(2000, b));
  EXPECT_FALSE(tryAllocate(2000, c)); // 4100 held + 2000 > 5000
  EXPECT_EQ(c, nullptr);
  EXPECT_EQ(failedRequest, 2000);
  EXPECT_EQ(failedHeld, base + 4100);
  EXPECT_EQ(failedLimit, base + 5000);
  // The abandoned step's buffers go; the one from before the mark stays.
  _mlir_memref_to_llvm_free(a);
  qtrain_step_memory_release_since(mark);
  EXPECT_EQ(held(), base + 100);
  qtrain_step_memory_set_limit(0);
  void *d = nullptr;
  EXPECT_TRUE(tryAllocate(1 << 20, d));
  _mlir_memref_to_llvm_free(d);
  _mlir_memref_to_llvm_free(kept);
  EXPECT_EQ(held(), base);
  // malloc's own failure takes the same path.
  void *huge = nullptr;
  EXPECT_FALSE(tryAllocate(uint64_t(1) << 62, huge));
  EXPECT_EQ(failedRequest, int64_t(1) << 62);
  qtrain_step_memory_set_failure_handler(nullptr);
}

} // namespace
