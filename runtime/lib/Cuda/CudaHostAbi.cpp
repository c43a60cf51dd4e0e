//===- CudaHostAbi.cpp - What a bundle's CUDA step library calls ---------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The CUDA step's host ABI (CudaHostAbi.h) over the attached CudaDriver.
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/CudaHostAbi.h"

#include "qtrain/runtime/CublasLt.h"
#include "qtrain/runtime/CudaDriver.h"
#include "qtrain/runtime/CudaGraphs.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>

using namespace qtrain::rt;

namespace {

/// The first word of an upload's key among a segment's library calls (a
/// GEMM's starts with its kind, 0 to 4).
constexpr uint64_t kUploadKey = ~uint64_t(0);

/// The pool of step buffers, by size and kind (device or managed). A
/// request takes the free buffer of its size and kind at the lowest
/// address, so a step that allocates and frees in the same order as the
/// one before gets the same buffers: its kernels' parameters, and its
/// graphs' (CudaGraphs.h), do not change.
struct Pool {
  struct Block {
    size_t bytes;
    bool shared;
  };
  std::set<std::tuple<size_t, bool, CUdeviceptr>> free;
  std::unordered_map<CUdeviceptr, Block> live;
  int64_t held = 0;
};

struct HostAbi {
  std::mutex mutex;
  const CudaDriver *driver = nullptr;
  std::string error;
  Pool pool;
  int64_t launches = 0, waits = 0;
  /// A kernel was launched since the last wait.
  bool pending = false;
  /// The GEMM library, its workspace and its plans per product (null: the
  /// library has no algorithm for it).
  const CublasLt *gemmLibrary = nullptr;
  CUdeviceptr workspace = 0;
  size_t workspaceBytes = 0;
  std::map<
      std::tuple<int32_t, int32_t, int32_t, int64_t, int64_t, int64_t, int64_t>,
      CublasLt::PlanPtr>
      plans;
  int64_t libraryGemms = 0, declinedGemms = 0;
  /// Records the launches for CUDA graphs or, turned off, checks each
  /// against its kernel; null where the driver has no graphs.
  CudaGraphRecorder *graphs = nullptr;
  /// Page-locked copies of uploaded host values, per destination
  /// (qtrain_cuda_upload); `pending` until a wait after their copy.
  struct Staging {
    void *host = nullptr;
    size_t bytes = 0;
    bool pending = false;
  };
  std::unordered_map<CUdeviceptr, Staging> staging;
};

HostAbi &abi() {
  static HostAbi state;
  return state;
}

/// Records the first failure; true when `result` is a success.
bool ok(HostAbi &a, CUresult result, const char *call) {
  if (result == kCudaSuccess)
    return true;
  if (a.error.empty())
    a.error = a.driver->check(result, call).message();
  return false;
}

/// Whether calls may go to the driver: one is attached and nothing failed.
bool usable(HostAbi &a, const char *call) {
  if (!a.driver) {
    if (a.error.empty())
      a.error = std::string(call) +
                ": no CUDA driver is attached (attachCudaHostAbi)";
    return false;
  }
  return a.error.empty();
}

[[noreturn]] void fatal(const std::string &message) {
  std::fprintf(stderr, "qtrain: error: the step on the GPU: %s\n",
               message.c_str());
  std::exit(1);
}

} // namespace

void qtrain::rt::attachCudaHostAbi(const CudaDriver *driver) {
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  a.driver = driver;
  a.error.clear();
  a.launches = a.waits = 0;
  a.libraryGemms = a.declinedGemms = 0;
  a.pending = false;
  a.graphs = nullptr;
}

void qtrain::rt::attachCudaHostGraphs(CudaGraphRecorder *recorder) {
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  a.graphs = recorder;
}

/// Runs what the recorder holds; records a failure.
static void flush(HostAbi &a) {
  if (a.graphs && a.driver)
    if (Status s = a.graphs->flush(); s.failed() && a.error.empty())
      a.error = s.message();
}

void qtrain::rt::flushCudaHostLaunches() {
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  flush(a);
}

void qtrain::rt::attachCudaHostGemms(const CublasLt *library,
                                     uint64_t workspace,
                                     size_t workspaceBytes) {
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  a.plans.clear();
  a.gemmLibrary = library;
  a.workspace = CUdeviceptr(workspace);
  a.workspaceBytes = workspaceBytes;
}

int64_t qtrain::rt::getCudaHostLibraryGemms() { return abi().libraryGemms; }
int64_t qtrain::rt::getCudaHostDeclinedGemms() { return abi().declinedGemms; }

std::string qtrain::rt::takeCudaHostError() {
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  std::string error;
  error.swap(a.error);
  return error;
}

void qtrain::rt::releaseCudaHostPool() {
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  if (a.driver)
    for (auto &[destination, staging] : a.staging)
      if (staging.host)
        (void)a.driver->api().cuMemFreeHost(staging.host);
  a.staging.clear();
  if (a.driver)
    for (const auto &[size, shared, pointer] : a.pool.free)
      (void)a.driver->api().cuMemFree(pointer);
  for (const auto &[size, shared, pointer] : a.pool.free)
    a.pool.held -= int64_t(size);
  a.pool.free.clear();
}

int64_t qtrain::rt::getCudaHostLaunches() { return abi().launches; }
int64_t qtrain::rt::getCudaHostWaits() { return abi().waits; }
int64_t qtrain::rt::getCudaHostPoolBytes() { return abi().pool.held; }

extern "C" void *qtrain_cuda_alloc(int64_t bytes, int32_t hostShared) {
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  // An earlier failure (a launch) is reported after the step; its buffers
  // are still needed to finish it.
  if (!a.driver)
    fatal("qtrain_cuda_alloc: no CUDA driver is attached");
  // Every buffer at least 256 bytes apart, as cuMemAlloc aligns them.
  size_t size = size_t(bytes > 0 ? bytes : 1);
  bool shared = hostShared != 0;
  auto it = a.pool.free.lower_bound({size, shared, 0});
  CUdeviceptr pointer = 0;
  if (it != a.pool.free.end() && std::get<0>(*it) == size &&
      std::get<1>(*it) == shared) {
    pointer = std::get<2>(*it);
    a.pool.free.erase(it);
  } else {
    const CudaDriverApi &f = a.driver->api();
    CUresult r = hostShared
                     ? f.cuMemAllocManaged(&pointer, size, kCudaMemAttachGlobal)
                     : f.cuMemAlloc(&pointer, size);
    if (!ok(a, r, hostShared ? "cuMemAllocManaged" : "cuMemAlloc"))
      fatal("allocating " + std::to_string(size) + " bytes: " + a.error);
    a.pool.held += int64_t(size);
  }
  a.pool.live[pointer] = {size, hostShared != 0};
  return reinterpret_cast<void *>(pointer);
}

extern "C" void qtrain_cuda_free(void *pointer) {
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  auto it = a.pool.live.find(reinterpret_cast<CUdeviceptr>(pointer));
  if (it == a.pool.live.end()) {
    if (a.error.empty())
      a.error = "qtrain_cuda_free: not a buffer of the step's pool";
    return;
  }
  a.pool.free.emplace(it->second.bytes, it->second.shared, it->first);
  a.pool.live.erase(it);
}

extern "C" void qtrain_cuda_memcpy(void *destination, void *source,
                                   int64_t bytes) {
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  if (!usable(a, "qtrain_cuda_memcpy") || bytes <= 0)
    return;
  // On the legacy stream, after what was recorded (the recorder's stream
  // orders itself with it).
  flush(a);
  ok(a,
     a.driver->api().cuMemcpy(reinterpret_cast<CUdeviceptr>(destination),
                              reinterpret_cast<CUdeviceptr>(source),
                              size_t(bytes)),
     "cuMemcpy");
}

extern "C" void *mgpuModuleLoad(void *data, size_t bytes) {
  (void)bytes;
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  CUmodule module = nullptr;
  if (usable(a, "mgpuModuleLoad"))
    ok(a, a.driver->api().cuModuleLoadData(&module, data), "cuModuleLoadData");
  return module;
}

extern "C" void *mgpuModuleLoadJIT(void *ptx, int optLevel) {
  (void)optLevel;
  // NUL-terminated PTX: the driver JIT-compiles it at its default level.
  return mgpuModuleLoad(ptx, 0);
}

extern "C" void mgpuModuleUnload(void *module) {
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  if (a.driver && module)
    (void)a.driver->api().cuModuleUnload(static_cast<CUmodule>(module));
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  CUfunction function = nullptr;
  if (usable(a, "mgpuModuleGetFunction") &&
      !ok(a,
          a.driver->api().cuModuleGetFunction(
              &function, static_cast<CUmodule>(module), name),
          "cuModuleGetFunction"))
    a.error += std::string(" (kernel ") + name + ")";
  return function;
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ,
                                 int32_t sharedBytes, void *stream,
                                 void **params, void **extra,
                                 size_t paramCount) {
  (void)paramCount;
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  if (!usable(a, "mgpuLaunchKernel") || !function)
    return;
  ++a.launches;
  a.pending = true;
  if (a.graphs) {
    unsigned grid[3] = {unsigned(gridX), unsigned(gridY), unsigned(gridZ)};
    unsigned block[3] = {unsigned(blockX), unsigned(blockY), unsigned(blockZ)};
    bool recorded = false;
    Status s = a.graphs->recordKernel(static_cast<CUfunction>(function), grid,
                                      block, unsigned(sharedBytes), params,
                                      paramCount, recorded);
    if (s.failed() && a.error.empty())
      a.error = s.message();
    if (recorded || s.failed())
      return;
  }
  ok(a,
     a.driver->api().cuLaunchKernel(
         static_cast<CUfunction>(function), unsigned(gridX), unsigned(gridY),
         unsigned(gridZ), unsigned(blockX), unsigned(blockY), unsigned(blockZ),
         unsigned(sharedBytes), static_cast<CUstream>(stream), params, extra),
     "cuLaunchKernel");
}

/// Runs what was recorded and waits for the device.
static void wait(HostAbi &a) {
  flush(a);
  a.pending = false;
  ++a.waits;
  if (ok(a, a.driver->api().cuCtxSynchronize(),
         "cuCtxSynchronize (a kernel of the step failed)"))
    for (auto &[destination, staging] : a.staging)
      staging.pending = false;
}

extern "C" void qtrain_cuda_synchronize() {
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  if (!a.pending || !usable(a, "qtrain_cuda_synchronize"))
    return;
  wait(a);
}

extern "C" void qtrain_cuda_upload(void *destination, const void *source,
                                   int64_t bytes) {
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  if (!usable(a, "qtrain_cuda_upload") || bytes <= 0)
    return;
  const CudaDriverApi &f = a.driver->api();
  CUdeviceptr target = reinterpret_cast<CUdeviceptr>(destination);
  HostAbi::Staging &staging = a.staging[target];
  // The last copy from this staging memory may not have run yet (two
  // uploads to one buffer without a wait between them): it must read the
  // values it was given.
  if (staging.pending) {
    wait(a);
    if (!a.error.empty())
      return;
  }
  if (staging.bytes < size_t(bytes)) {
    if (staging.host)
      (void)f.cuMemFreeHost(staging.host);
    staging = {};
    if (!ok(a, f.cuMemAllocHost(&staging.host, size_t(bytes)),
            "cuMemAllocHost"))
      return;
    staging.bytes = size_t(bytes);
  }
  std::memcpy(staging.host, source, size_t(bytes));
  staging.pending = true;
  a.pending = true;
  const void *host = staging.host;
  size_t size = size_t(bytes);
  if (a.graphs && a.graphs->isRecording()) {
    // The same key every step: the graph's copy node reads the staging
    // memory when it runs.
    const CudaDriver *driver = a.driver;
    a.graphs->recordCall({kUploadKey, target, uint64_t(uintptr_t(host)), size},
                         [driver, target, host, size](CUstream stream) {
                           return driver->check(driver->api().cuMemcpyHtoDAsync(
                                                    target, host, size, stream),
                                                "cuMemcpyHtoDAsync");
                         });
    return;
  }
  ok(a, f.cuMemcpyHtoDAsync(target, host, size, nullptr), "cuMemcpyHtoDAsync");
}

/// The manifest's spelling of qtrain_cuda_gemm's codes, or null.
static const char *kindName(int32_t kind) {
  static const char *names[] = {"f32", "tf32", "bf16", "fp8", "i8"};
  return kind >= 0 && kind < 5 ? names[kind] : nullptr;
}
static const char *encodingName(int32_t encoding) {
  static const char *names[] = {"f32", "bf16", "e4m3", "e5m2", "s8"};
  return encoding >= 0 && encoding < 5 ? names[encoding] : nullptr;
}

extern "C" int32_t qtrain_cuda_gemm(uintptr_t aBuffer, uintptr_t bBuffer,
                                    uintptr_t cBuffer, int32_t kind,
                                    int32_t aEncoding, int32_t bEncoding,
                                    int64_t batch, int64_t m, int64_t n,
                                    int64_t k) {
  HostAbi &a = abi();
  std::lock_guard<std::mutex> lock(a.mutex);
  if (!a.gemmLibrary || !usable(a, "qtrain_cuda_gemm"))
    return 0;
  const char *kindText = kindName(kind), *aText = encodingName(aEncoding),
             *bText = encodingName(bEncoding);
  if (!kindText || !aText || !bText || batch < 1 || m < 1 || n < 1 || k < 1) {
    a.error = "qtrain_cuda_gemm: not a product of the step (kind " +
              std::to_string(kind) + ", encodings " +
              std::to_string(aEncoding) + ", " + std::to_string(bEncoding) +
              ")";
    return 0;
  }
  auto key = std::make_tuple(kind, aEncoding, bEncoding, batch, m, n, k);
  auto it = a.plans.find(key);
  if (it == a.plans.end()) {
    CudaKernelSpec spec;
    spec.kind = kindText;
    spec.a = aText;
    spec.b = bText;
    spec.c = kind == int32_t(CudaGemmKind::I8) ? "s32" : "f32";
    spec.batch = batch;
    spec.m = m;
    spec.n = n;
    spec.k = k;
    CublasLt::PlanPtr plan;
    std::string unsupported;
    if (Status s =
            a.gemmLibrary->plan(spec, a.workspaceBytes, plan, unsupported);
        s.failed()) {
      a.error = "qtrain_cuda_gemm: " + s.message();
      return 0;
    }
    it = a.plans.emplace(key, std::move(plan)).first;
  }
  if (!it->second) {
    ++a.declinedGemms;
    return 0;
  }
  if (a.graphs && a.graphs->isRecording()) {
    const CublasLt *library = a.gemmLibrary;
    const CublasLt::Plan *plan = it->second.get();
    CUdeviceptr workspace = a.workspace;
    size_t workspaceBytes = a.workspaceBytes;
    a.graphs->recordCall({uint64_t(kind), uint64_t(aEncoding),
                          uint64_t(bEncoding), uint64_t(batch), uint64_t(m),
                          uint64_t(n), uint64_t(k), aBuffer, bBuffer, cBuffer},
                         [=](CUstream stream) {
                           return library->run(*plan, CUdeviceptr(aBuffer),
                                               CUdeviceptr(bBuffer),
                                               CUdeviceptr(cBuffer), workspace,
                                               workspaceBytes, stream);
                         });
    ++a.libraryGemms;
    a.pending = true;
    return 1;
  }
  if (Status s = a.gemmLibrary->run(*it->second, CUdeviceptr(aBuffer),
                                    CUdeviceptr(bBuffer), CUdeviceptr(cBuffer),
                                    a.workspace, a.workspaceBytes);
      s.failed()) {
    a.error = "qtrain_cuda_gemm: " + s.message();
    return 1;
  }
  ++a.libraryGemms;
  a.pending = true;
  return 1;
}

// Every launch goes to the default stream, in order; the streams
// gpu-to-llvm makes around each launch are that stream, and the host waits
// in qtrain_cuda_synchronize before it touches memory itself.
extern "C" void *mgpuStreamCreate() { return nullptr; }
extern "C" void mgpuStreamDestroy(void *stream) { (void)stream; }
extern "C" void mgpuStreamSynchronize(void *stream) { (void)stream; }
