//===- CudaDriver.h - The CUDA driver, loaded at run time -------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The runtime's one door to an NVIDIA GPU (docs/cuda.md). The driver is
/// not linked: CudaDriver::load() opens libcuda.so.1 with dlopen when a
/// run asks for the GPU (QTRAIN_CUDA_DRIVER=path overrides the name, for
/// tests), so the runtime builds and runs CPU bundles on machines with no
/// CUDA at all. The few driver types used are declared here as opaque
/// handles and `int` result codes, with the values copied from cuda.h;
/// cuda.h itself is never included.
///
/// On top of the raw function table (CudaDriverApi) sit small RAII owners
/// (CudaContext, CudaBuffer, CudaEvent, CudaModule) whose calls return a
/// Status naming the driver call that failed, its error name and string:
///   cuLaunchKernel: CUDA_ERROR_INVALID_VALUE (invalid argument)
/// Owners must be destroyed before the CudaContext they were made in, and
/// every owner before its CudaDriver.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_CUDADRIVER_H
#define QTRAIN_RUNTIME_CUDADRIVER_H

#include "qtrain/runtime/Manifest.h"
#include "qtrain/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace qtrain::rt {

/// The driver's types (cuda.h), as opaque handles.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;
using CUgraphNode = struct CUgraphNode_st *;

/// CUDA_KERNEL_NODE_PARAMS_v2 (cuda.h), the parameters of a graph's kernel
/// node.
struct CudaKernelNodeParams {
  CUfunction function = nullptr;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedBytes = 0;
  void **params = nullptr;
  void **extra = nullptr;
  void *kernel = nullptr; // CUkernel
  CUcontext context = nullptr;
};

/// The values of cuda.h this code uses.
constexpr CUresult kCudaSuccess = 0;         // CUDA_SUCCESS
constexpr CUresult kCudaErrorNoDevice = 100; // CUDA_ERROR_NO_DEVICE
constexpr int kCudaAttrComputeCapabilityMajor = 75;
constexpr int kCudaAttrComputeCapabilityMinor = 76;
constexpr unsigned kCudaEventDefault = 0;      // CU_EVENT_DEFAULT
constexpr unsigned kCudaMemAttachGlobal = 1;   // CU_MEM_ATTACH_GLOBAL
constexpr CUresult kCudaErrorInvalidValue = 1; // CUDA_ERROR_INVALID_VALUE
/// CU_STREAM_DEFAULT: a stream that orders itself with the legacy stream.
constexpr unsigned kCudaStreamDefault = 0;
/// CU_STREAM_CAPTURE_MODE_RELAXED: the thread may still allocate and free
/// while a stream captures.
constexpr int kCudaStreamCaptureModeRelaxed = 2;

/// The driver functions the runtime calls, resolved by name (the `_v2`
/// entry points where cuda.h maps the plain name to one).
struct CudaDriverApi {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDeviceGetCount)(int *count);
  CUresult (*cuDeviceGet)(CUdevice *device, int ordinal);
  CUresult (*cuDeviceGetName)(char *name, int length, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int *value, int attribute, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule *module, const void *image);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuModuleGetFunction)(CUfunction *function, CUmodule module,
                                  const char *name);
  CUresult (*cuMemAlloc)(CUdeviceptr *pointer, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr pointer);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr destination, const void *source,
                           size_t bytes);
  CUresult (*cuMemcpyDtoH)(void *destination, CUdeviceptr source, size_t bytes);
  CUresult (*cuMemsetD8)(CUdeviceptr destination, unsigned char value,
                         size_t count);
  /// Memory the host and the device both address with the same pointer
  /// (the CUDA step's buffers, CudaStepDevice.h).
  CUresult (*cuMemAllocManaged)(CUdeviceptr *pointer, size_t bytes,
                                unsigned flags);
  /// A copy between any two unified addresses (device or host).
  CUresult (*cuMemcpy)(CUdeviceptr destination, CUdeviceptr source,
                       size_t bytes);
  /// Page-locked host memory, which a copy in a CUDA graph may read (the
  /// step's uploads, qtrain_cuda_upload).
  CUresult (*cuMemAllocHost)(void **pointer, size_t bytes);
  CUresult (*cuMemFreeHost)(void *pointer);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr destination, const void *source,
                                size_t bytes, CUstream stream);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned gridX,
                             unsigned gridY, unsigned gridZ, unsigned blockX,
                             unsigned blockY, unsigned blockZ,
                             unsigned sharedBytes, CUstream stream,
                             void **params, void **extra);
  CUresult (*cuEventCreate)(CUevent *event, unsigned flags);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventElapsedTime)(float *milliseconds, CUevent start,
                                 CUevent end);
  CUresult (*cuEventDestroy)(CUevent event);
  CUresult (*cuGetErrorName)(CUresult error, const char **name);
  CUresult (*cuGetErrorString)(CUresult error, const char **text);

  /// CUDA graphs (CudaGraphs.h). Optional: null where the driver predates
  /// them (cuFuncGetParamInfo came with CUDA 12.4), and the step then
  /// launches its kernels one by one.
  CUresult (*cuStreamCreate)(CUstream *stream, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream stream);
  CUresult (*cuStreamBeginCapture)(CUstream stream, int mode);
  CUresult (*cuStreamEndCapture)(CUstream stream, CUgraph *graph);
  CUresult (*cuStreamGetCaptureInfo)(CUstream stream, int *status,
                                     unsigned long long *id, CUgraph *graph,
                                     const CUgraphNode **dependencies,
                                     const void **edgeData,
                                     size_t *dependencyCount);
  CUresult (*cuGraphInstantiate)(CUgraphExec *exec, CUgraph graph,
                                 unsigned long long flags);
  CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream);
  CUresult (*cuGraphExecKernelNodeSetParams)(
      CUgraphExec exec, CUgraphNode node, const CudaKernelNodeParams *params);
  CUresult (*cuGraphDestroy)(CUgraph graph);
  CUresult (*cuGraphExecDestroy)(CUgraphExec exec);
  CUresult (*cuFuncGetParamInfo)(CUfunction function, size_t index,
                                 size_t *offset, size_t *size);
};

/// A GPU as the driver describes it.
struct CudaDevice {
  int ordinal = 0;
  CUdevice handle = 0;
  std::string name;
  /// The compute capability, e.g. 9.0 for an H100/H200.
  int major = 0, minor = 0;
  /// "sm_90".
  std::string chip() const {
    return "sm_" + std::to_string(major) + std::to_string(minor);
  }
};

/// The loaded driver library. Not copyable.
class CudaDriver {
public:
  /// Loads the driver (QTRAIN_CUDA_DRIVER, else "libcuda.so.1"), resolves
  /// every function of CudaDriverApi and calls cuInit(0). Errors:
  ///   no CUDA driver: libcuda.so.1: cannot open shared object file: ...
  ///     (training on the GPU needs an NVIDIA GPU and its driver)
  ///   /lib/x86_64-linux-gnu/libz.so.1: not a CUDA driver: it has no
  ///     cuInit (...)
  ///   no CUDA device: cuInit: CUDA_ERROR_NO_DEVICE (...)
  static Status load(std::unique_ptr<CudaDriver> &out);

  ~CudaDriver();
  CudaDriver(const CudaDriver &) = delete;
  CudaDriver &operator=(const CudaDriver &) = delete;

  /// The path or name the library was opened by.
  const std::string &getPath() const { return path; }
  const CudaDriverApi &api() const { return functions; }
  /// Empty when every graph function of CudaDriverApi resolved, else the
  /// first one missing ("cuFuncGetParamInfo").
  const std::string &getMissingGraphFunction() const {
    return missingGraphFunction;
  }

  /// "CUDA_ERROR_INVALID_VALUE (invalid argument)" for `result`.
  std::string describe(CUresult result) const;
  /// Success when `result` is CUDA_SUCCESS, else "`call`: <describe()>".
  Status check(CUresult result, const char *call) const;

  /// The number of devices the driver sees (0 is not an error here).
  Status getDeviceCount(int &count) const;
  /// Device `ordinal`: its name and compute capability.
  Status getDevice(int ordinal, CudaDevice &out) const;

private:
  CudaDriver() = default;
  std::string path;
  void *handle = nullptr;
  CudaDriverApi functions{};
  std::string missingGraphFunction;
};

/// The architecture of `chip` ("sm_90" -> 9, 0; "sm_90a" -> 9, 0 with
/// `archSpecific`); false when it is not of that form.
bool parseCudaChip(const std::string &chip, int &major, int &minor,
                   bool &archSpecific);

/// Whether a module of `format` ("cubin" or "ptx") built for `chip` runs
/// on `device`: a cubin on the same major architecture with at least the
/// minor version (exactly it for an "a" chip), PTX (JIT-compiled) on any
/// device at least as new. The refusal names both, e.g.
///   the bundle's CUDA module is for sm_90, but device 0 (NVIDIA A100)
///   is sm_80: too old for it
Status checkCudaDevice(const CudaDevice &device, const std::string &chip,
                       const std::string &format);

/// Device 0 for a bundle's CUDA target: fails when the driver sees no
/// device ("no CUDA device: the driver sees none ...") or when
/// checkCudaDevice() refuses it.
Status selectCudaDevice(const CudaDriver &driver, const CudaTargetSpec &target,
                        CudaDevice &out);

/// A device's primary context, retained and current on this thread while
/// the object lives.
class CudaContext {
public:
  static Status open(const CudaDriver &driver, const CudaDevice &device,
                     std::unique_ptr<CudaContext> &out);
  ~CudaContext();
  CudaContext(const CudaContext &) = delete;
  CudaContext &operator=(const CudaContext &) = delete;

  const CudaDriver &getDriver() const { return driver; }
  const CudaDevice &getDevice() const { return device; }
  /// cuCtxSynchronize: waits for every launch; reports a kernel's fault.
  Status synchronize() const;

private:
  CudaContext(const CudaDriver &driver, const CudaDevice &device)
      : driver(driver), device(device) {}
  const CudaDriver &driver;
  CudaDevice device;
  CUcontext context = nullptr;
};

/// Device memory (cuMemAlloc), freed on destruction. Movable.
class CudaBuffer {
public:
  CudaBuffer() = default;
  ~CudaBuffer();
  CudaBuffer(CudaBuffer &&other) noexcept;
  CudaBuffer &operator=(CudaBuffer &&other) noexcept;
  CudaBuffer(const CudaBuffer &) = delete;
  CudaBuffer &operator=(const CudaBuffer &) = delete;

  /// `bytes` (at least one) of device memory in the current context.
  static Status allocate(const CudaDriver &driver, size_t bytes,
                         CudaBuffer &out);
  CUdeviceptr get() const { return pointer; }
  size_t size() const { return bytes; }
  /// Copies `count` bytes (at most size()) from or to the host.
  Status upload(const void *data, size_t count) const;
  Status download(void *data, size_t count) const;
  /// Sets every byte to `value`.
  Status fill(unsigned char value) const;

private:
  void release();
  const CudaDriver *driver = nullptr;
  CUdeviceptr pointer = 0;
  size_t bytes = 0;
};

/// A CUDA event (for timing on the default stream), destroyed on
/// destruction. Movable.
class CudaEvent {
public:
  CudaEvent() = default;
  ~CudaEvent();
  CudaEvent(CudaEvent &&other) noexcept;
  CudaEvent &operator=(CudaEvent &&other) noexcept;
  CudaEvent(const CudaEvent &) = delete;
  CudaEvent &operator=(const CudaEvent &) = delete;

  static Status create(const CudaDriver &driver, CudaEvent &out);
  /// Records the event on the default stream.
  Status record() const;
  Status synchronize() const;
  /// Milliseconds from `start` to this event (both recorded and done).
  Status elapsedSince(const CudaEvent &start, float &milliseconds) const;

private:
  void release();
  const CudaDriver *driver = nullptr;
  CUevent event = nullptr;
};

/// A bundle's CUDA module, loaded into the current context with every
/// kernel of its CudaTargetSpec resolved. Unloaded on destruction.
class CudaModule {
public:
  /// Loads `image`, the bytes of the module file (for PTX a NUL-terminated
  /// copy is passed), and looks up every kernel of `target`; a missing one
  /// is refused by name:
  ///   <path>: kernel 'gemm_i8_0' (cuda.kernels[0]) is not in the module:
  ///   cuModuleGetFunction: CUDA_ERROR_NOT_FOUND (named symbol not found)
  /// `path` names the module in messages.
  static Status load(const CudaDriver &driver, const CudaTargetSpec &target,
                     const std::string &image, const std::string &path,
                     std::unique_ptr<CudaModule> &out);
  ~CudaModule();
  CudaModule(const CudaModule &) = delete;
  CudaModule &operator=(const CudaModule &) = delete;

  const CudaTargetSpec &getTarget() const { return target; }
  /// The function of target.kernels[index].
  CUfunction getFunction(size_t index) const { return functions[index]; }
  /// The index of the kernel named `name` in target.kernels, or -1.
  int64_t findKernel(const std::string &name) const;
  /// Launches target.kernels[index] on the default stream with its grid
  /// and block, no dynamic shared memory and the parameters (a, b, c);
  /// does not wait for it.
  Status launch(size_t index, CUdeviceptr a, CUdeviceptr b,
                CUdeviceptr c) const;

private:
  CudaModule(const CudaDriver &driver, const CudaTargetSpec &target)
      : driver(driver), target(target) {}
  const CudaDriver &driver;
  CudaTargetSpec target;
  CUmodule module = nullptr;
  std::vector<CUfunction> functions;
};

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_CUDADRIVER_H
