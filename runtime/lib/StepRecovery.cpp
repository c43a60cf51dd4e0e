//===- StepRecovery.cpp - Abandoning a step whose allocation failed ------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A compiled step allocates its buffers through the library's allocator
/// (qtrain/microkernels.h). When one allocation fails (out of memory, or past
/// the step memory limit) the allocator calls the handler installed here,
/// which jumps back to Bundle::runStep: the step is abandoned, its buffers
/// are released, and the caller gets OutOfMemory instead of an exit.
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Bundle.h"

#include "Library.h"

#include "qtrain/microkernels.h"

#include <csetjmp>

using namespace qtrain::rt;

namespace {

/// Where a failed allocation inside the running step returns to
/// (Bundle::runStep), and what failed.
struct StepRecovery {
  std::jmp_buf target;
  int64_t requested = 0, held = 0, limit = 0;
};
thread_local StepRecovery *stepRecovery = nullptr;

/// The libraries' failure handler: back out of the step to runStep. Only
/// generated code (no C++ frames with destructors) lies between runStep's
/// setjmp and this call, which comes from the allocator.
extern "C" void onStepAllocationFailure(int64_t requested, int64_t held,
                                        int64_t limit) {
  StepRecovery *recovery = stepRecovery;
  if (!recovery)
    return; // not inside runStep: the library reports it and exits
  recovery->requested = requested;
  recovery->held = held;
  recovery->limit = limit;
  std::longjmp(recovery->target, 1);
}

/// Calls `step`; true when it returned, false when the failure handler
/// jumped out of it. Kept apart so that nothing lives across the setjmp.
bool callRecoverably(StepFunction step, void **args, StepRecovery &recovery) {
  if (setjmp(recovery.target) != 0)
    return false;
  step(args);
  return true;
}

} // namespace

void Bundle::bindStepRecovery() {
  // Optional, as the statistics: the limit and the recovery from failed
  // allocations (qtrain/microkernels.h).
  auto setHandler =
      reinterpret_cast<void (*)(qtrain_step_memory_failure_handler)>(
          lookupSymbol(handle, "qtrain_step_memory_set_failure_handler"));
  memorySetLimit = reinterpret_cast<void (*)(int64_t)>(
      lookupSymbol(handle, "qtrain_step_memory_set_limit"));
  memoryBegin = reinterpret_cast<int64_t (*)()>(
      lookupSymbol(handle, "qtrain_step_memory_begin"));
  memoryEnd = reinterpret_cast<void (*)(int64_t, int32_t)>(
      lookupSymbol(handle, "qtrain_step_memory_end"));
  if (setHandler && memorySetLimit && memoryBegin && memoryEnd) {
    setHandler(&onStepAllocationFailure);
  } else {
    memorySetLimit = nullptr;
    memoryBegin = nullptr;
    memoryEnd = nullptr;
  }
}

Status Bundle::setStepMemoryLimit(int64_t bytes, ErrorKind *kind) const {
  if (kind)
    *kind = ErrorKind::None;
  if (!memorySetLimit)
    return failWith(kind, ErrorKind::InvalidArgument,
                    directory + ": the library has no step memory limit");
  if (bytes < 0)
    return failWith(kind, ErrorKind::InvalidArgument,
                    "step memory limit must not be negative");
  memorySetLimit(bytes);
  return Status::success();
}

Status Bundle::runStep(StepFunction step, void **args, int threads,
                       ErrorKind *kind) const {
  if (kind)
    *kind = ErrorKind::None;
  // The pool's size is the calling thread's (OpenMP's nthreads-var), so it
  // is set for every step: Trainers on other threads may use other counts.
  if (setNumThreads)
    setNumThreads(threads);
  if (!memoryBegin) {
    step(args);
    return Status::success();
  }
  StepRecovery recovery;
  StepRecovery *outer = stepRecovery;
  stepRecovery = &recovery;
  int64_t token = memoryBegin();
  bool returned = callRecoverably(step, args, recovery);
  stepRecovery = outer;
  // An abandoned step's buffers are freed; other threads' steps keep theirs.
  memoryEnd(token, returned ? 0 : 1);
  if (returned)
    return Status::success();
  std::string message = "the compiled step could not allocate " +
                        std::to_string(recovery.requested) + " bytes with " +
                        std::to_string(recovery.held) +
                        " bytes of its buffers held";
  if (recovery.limit > 0 && recovery.held + recovery.requested > recovery.limit)
    message += ": that passes the step memory limit of " +
               std::to_string(recovery.limit) + " bytes";
  else
    message += ": out of memory";
  return failWith(kind, ErrorKind::OutOfMemory, message);
}
