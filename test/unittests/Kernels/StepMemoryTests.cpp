//===- StepMemoryTests.cpp - The allocator of generated steps ------------===//
//
// Part of the qtrain project.
//
// qtrain_step_memory_*: the byte count, the limit, the failure handler and
// the release of an abandoned step's buffers (runtime/kernels/cpu).
//
//===----------------------------------------------------------------------===//

#include "qtrain/microkernels.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csetjmp>
#include <cstdint>
#include <cstring>
#include <thread>

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
  int64_t step = qtrain_step_memory_begin();
  qtrain_step_memory_set_limit(base + 5000);
  void *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_TRUE(tryAllocate(2000, a));
  ASSERT_TRUE(tryAllocate(2000, b));
  EXPECT_FALSE(tryAllocate(2000, c)); // 4100 held + 2000 > 5000
  EXPECT_EQ(c, nullptr);
  EXPECT_EQ(failedRequest, 2000);
  EXPECT_EQ(failedHeld, base + 4100);
  EXPECT_EQ(failedLimit, base + 5000);
  // The abandoned step's buffers go; the one from before the step stays.
  _mlir_memref_to_llvm_free(a);
  qtrain_step_memory_end(step, /*release=*/1);
  EXPECT_EQ(held(), base + 100);
  qtrain_step_memory_set_limit(0);
  void *d = nullptr;
  EXPECT_TRUE(tryAllocate(1 << 20, d));
  _mlir_memref_to_llvm_free(d);
  _mlir_memref_to_llvm_free(kept);
  EXPECT_EQ(held(), base);
  // malloc's own failure takes the same path (2^61 bytes: past the size
  // guard's 2^62, refused by malloc; scripts/sanitize.sh lets ASan's
  // allocator return null too).
  void *huge = nullptr;
  EXPECT_FALSE(tryAllocate(uint64_t(1) << 61, huge));
  EXPECT_EQ(failedRequest, int64_t(1) << 61);
  EXPECT_EQ(held(), base);
  qtrain_step_memory_set_failure_handler(nullptr);
}

// Two steps at once, one per thread (two Trainers of one bundle): ending
// one step with release frees that step's buffers only.
TEST(StepMemoryTest, ReleaseLeavesOtherThreadsStepsAlone) {
  int64_t base = held();
  std::atomic<int> phase{0};
  void *theirs = nullptr;
  std::thread other([&] {
    int64_t step = qtrain_step_memory_begin();
    theirs = _mlir_memref_to_llvm_alloc(3000);
    std::memset(theirs, 1, 3000);
    phase = 1;
    while (phase.load() != 2)
      std::this_thread::yield();
    std::memset(theirs, 2, 3000); // still ours to write
    _mlir_memref_to_llvm_free(theirs);
    qtrain_step_memory_end(step, 0);
  });
  while (phase.load() != 1)
    std::this_thread::yield();
  int64_t step = qtrain_step_memory_begin();
  (void)_mlir_memref_to_llvm_alloc(500);
  qtrain_step_memory_end(step, /*release=*/1);
  EXPECT_EQ(held(), base + 3000);
  phase = 2;
  other.join();
  EXPECT_EQ(held(), base);
}

} // namespace
