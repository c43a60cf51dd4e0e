//===- CudaFiniteCheck.cpp - Finiteness of device buffers, on the GPU -----===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/CudaFiniteCheck.h"

#include "FiniteCheckPtx.h"

#include <algorithm>
#include <cstdint>

using namespace qtrain::rt;

namespace {
/// Threads per block, and at most this many blocks (each thread then
/// strides over the rest).
constexpr unsigned kThreads = 256, kMaxBlocks = 1024;
constexpr const char *kKernelName = "qtrain_find_nonfinite";
} // namespace

const char *CudaFiniteCheck::ptx() { return kFiniteCheckPtx; }

Status CudaFiniteCheck::open(const CudaDriver &driver,
                             std::unique_ptr<CudaFiniteCheck> &out) {
  std::unique_ptr<CudaFiniteCheck> check(new CudaFiniteCheck(driver));
  CudaTargetSpec target;
  target.format = "ptx";
  CudaKernelSpec kernel;
  kernel.name = kKernelName;
  target.kernels.push_back(kernel);
  if (Status s =
          CudaModule::load(driver, target, kFiniteCheckPtx,
                           "the runtime's finiteness check", check->module);
      s.failed())
    return s;
  if (Status s = CudaBuffer::allocate(driver, sizeof(uint32_t), check->flag);
      s.failed())
    return s;
  out = std::move(check);
  return Status::success();
}

Status CudaFiniteCheck::allFinite(const float *const *buffers,
                                  const size_t *counts, size_t n,
                                  bool &finite) {
  if (Status s = flag.fill(0); s.failed())
    return s;
  const CudaDriverApi &f = driver.api();
  CUdeviceptr flagPointer = flag.get();
  for (size_t i = 0; i < n; ++i) {
    if (counts[i] == 0)
      continue;
    CUdeviceptr data = reinterpret_cast<CUdeviceptr>(buffers[i]);
    uint64_t count = counts[i];
    void *params[] = {&data, &count, &flagPointer};
    unsigned blocks = unsigned(
        std::min<uint64_t>((count + kThreads - 1) / kThreads, kMaxBlocks));
    if (CUresult r =
            f.cuLaunchKernel(module->getFunction(0), blocks, 1, 1, kThreads, 1,
                             1, 0, nullptr, params, nullptr);
        r != kCudaSuccess)
      return driver.check(r, "cuLaunchKernel");
  }
  uint32_t found = 0;
  // Synchronous: it waits for the launches above (and the step before).
  if (Status s = flag.download(&found, sizeof(found)); s.failed())
    return s;
  ++checks;
  finite = found == 0;
  return Status::success();
}
