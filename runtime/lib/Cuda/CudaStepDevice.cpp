//===- CudaStepDevice.cpp - A bundle's step on an NVIDIA GPU --------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// openCudaStepDevice (CudaStepDevice.h): the driver, the context, the
/// bundle's cuda/step.so behind the host ABI (CudaHostAbi.h), managed
/// memory for the Trainer's buffers.
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/CudaStepDevice.h"

#include "qtrain/runtime/CublasLt.h"
#include "qtrain/runtime/CudaDriver.h"
#include "qtrain/runtime/CudaFiniteCheck.h"
#include "qtrain/runtime/CudaGraphs.h"
#include "qtrain/runtime/CudaHostAbi.h"
#include "qtrain/runtime/Sha256.h"

#include <dlfcn.h>

#include <cstring>

using namespace qtrain::rt;

namespace {

class CudaStepDevice final : public StepDevice {
public:
  ~CudaStepDevice() override;
  void *allocate(size_t bytes) override;
  void release(void *pointer) override;
  Status run(bool train, void **args, size_t inputIndex, size_t inputBytes,
             size_t otherIndex, size_t otherBytes, ErrorKind *kind) override;
  std::string describe() const override {
    return context->getDevice().name + " (" + context->getDevice().chip() + ")";
  }
  Status checkFinite(const float *const *buffers, const size_t *counts,
                     size_t n, bool &finite, bool &checked) override {
    checked = false;
    if (!finiteCheck)
      return Status::success();
    if (Status s = finiteCheck->allFinite(buffers, counts, n, finite);
        s.failed())
      return Status::error("the finiteness check on the GPU failed: " +
                           s.message());
    checked = true;
    return Status::success();
  }
  std::string describeProducts() const override { return gemms; }
  std::string describeWork() const override {
    std::string work = std::to_string(getCudaHostLaunches()) +
                       " kernel launches, " +
                       std::to_string(getCudaHostWaits()) + " host waits";
    if (gemmLibrary)
      work += "; " + std::to_string(getCudaHostLibraryGemms()) +
              " products on cuBLASLt, " +
              std::to_string(getCudaHostDeclinedGemms()) +
              " declined to the generated kernels";
    if (graphs && graphs->getGraphLaunches() > 0)
      work += "; " + std::to_string(graphs->getGraphLaunches()) +
              " CUDA graph launches (" + std::to_string(graphs->getCaptures()) +
              " captured, " + std::to_string(graphs->getNodeUpdates()) +
              " kernel nodes updated)";
    if (!graphs || !graphs->isRecording())
      work += "; kernels launched one by one (" +
              (graphs ? graphs->getDisabledReason() : graphsOff) + ")";
    work += finiteCheck
                ? "; " + std::to_string(finiteCheck->getChecks()) +
                      " finiteness checks on the GPU"
                : "; finiteness checked on the host (" + finiteCheckError + ")";
    return work;
  }

  std::unique_ptr<CudaDriver> driver;
  std::unique_ptr<CudaContext> context;
  /// The Trainer's finiteness check on the device; null (and the reason)
  /// when its kernel does not load, and the Trainer reads the buffers.
  std::unique_ptr<CudaFiniteCheck> finiteCheck;
  std::string finiteCheckError;
  /// cuBLASLt and its workspace, when the step's products may run on it.
  std::unique_ptr<CublasLt> gemmLibrary;
  CudaBuffer workspace;
  std::string gemms = "the generated GEMM kernels";
  /// The step's launches as CUDA graphs; null (and the reason) when off.
  std::unique_ptr<CudaGraphRecorder> graphs;
  std::string graphsOff;
  std::string libraryPath;
  void *library = nullptr;
  StepFunction trainStep = nullptr, evalStep = nullptr;

private:
  /// A managed staging buffer of at least `bytes`.
  struct Staging {
    void *data = nullptr;
    size_t bytes = 0;
  };
  Status stage(Staging &buffer, size_t bytes, ErrorKind *kind);
  Staging input, other;
};

CudaStepDevice::~CudaStepDevice() {
  if (!driver)
    return;
  if (context)
    (void)context->synchronize();
  attachCudaHostGraphs(nullptr);
  graphs.reset();
  finiteCheck.reset();
  for (Staging *s : {&input, &other})
    if (s->data)
      (void)driver->api().cuMemFree(reinterpret_cast<CUdeviceptr>(s->data));
  // The library's destructors unload its modules through the ABI.
  if (library)
    dlclose(library);
  releaseCudaHostPool();
  attachCudaHostGemms(nullptr, 0, 0);
  attachCudaHostAbi(nullptr);
}

void *CudaStepDevice::allocate(size_t bytes) {
  CUdeviceptr pointer = 0;
  if (driver->api().cuMemAllocManaged(&pointer, bytes ? bytes : 1,
                                      kCudaMemAttachGlobal) != kCudaSuccess)
    return nullptr;
  return reinterpret_cast<void *>(pointer);
}

void CudaStepDevice::release(void *pointer) {
  if (pointer)
    (void)driver->api().cuMemFree(reinterpret_cast<CUdeviceptr>(pointer));
}

Status CudaStepDevice::stage(Staging &buffer, size_t bytes, ErrorKind *kind) {
  if (buffer.bytes >= bytes)
    return succeed(kind);
  release(buffer.data);
  buffer = {};
  buffer.data = allocate(bytes);
  if (!buffer.data)
    return failWith(kind, ErrorKind::OutOfMemory,
                    "out of GPU memory for a staging buffer of " +
                        std::to_string(bytes) + " bytes");
  buffer.bytes = bytes;
  return succeed(kind);
}

Status CudaStepDevice::run(bool train, void **args, size_t inputIndex,
                           size_t inputBytes, size_t otherIndex,
                           size_t otherBytes, ErrorKind *kind) {
  if (Status s = stage(input, inputBytes, kind); s.failed())
    return s;
  if (Status s = stage(other, otherBytes, kind); s.failed())
    return s;
  void *callerInput = args[inputIndex], *callerOther = args[otherIndex];
  std::memcpy(input.data, callerInput, inputBytes);
  if (train)
    std::memcpy(other.data, callerOther, otherBytes);
  args[inputIndex] = input.data;
  args[otherIndex] = other.data;
  (train ? trainStep : evalStep)(args);
  flushCudaHostLaunches();
  args[inputIndex] = callerInput;
  args[otherIndex] = callerOther;
  std::string error = takeCudaHostError();
  if (error.empty())
    if (Status s = context->synchronize(); s.failed())
      error = s.message();
  if (!error.empty())
    return failWith(kind, ErrorKind::Unsupported,
                    std::string(train ? "the train" : "the eval") +
                        " step on the GPU failed: " + error);
  if (!train)
    std::memcpy(callerOther, other.data, otherBytes);
  return succeed(kind);
}

} // namespace

Status qtrain::rt::openCudaStepDevice(const Bundle &bundle,
                                      std::shared_ptr<StepDevice> &out,
                                      ErrorKind *kind,
                                      const CudaStepOptions &options) {
  const Manifest &m = bundle.getManifest();
  if (m.cuda.chip.empty())
    return failWith(kind, ErrorKind::Unsupported,
                    bundle.getDirectory() +
                        " has no CUDA target: compile it with "
                        "qtrain-compile --target=cuda:CHIP");
  if (m.cuda.stepLibrary.empty())
    return failWith(kind, ErrorKind::Unsupported,
                    bundle.getDirectory() +
                        " has GPU kernels but no step for the GPU "
                        "(cuda.step_library): compile it again with the "
                        "CUDA toolkit's libdevice present (--cuda-path)");
  auto device = std::make_unique<CudaStepDevice>();
  if (Status s = CudaDriver::load(device->driver); s.failed())
    return failWith(kind, ErrorKind::Unsupported, s.message());
  CudaDevice gpu;
  if (Status s = selectCudaDevice(*device->driver, m.cuda, gpu); s.failed())
    return failWith(kind, ErrorKind::Unsupported, s.message());
  if (Status s = CudaContext::open(*device->driver, gpu, device->context);
      s.failed())
    return failWith(kind, ErrorKind::Unsupported, s.message());

  const std::string &dir = bundle.getDirectory();
  device->libraryPath = (dir == "/" ? "" : dir) + "/" + m.cuda.stepLibrary;
  std::string sha;
  if (Status s = sha256File(device->libraryPath, sha); s.failed())
    return failWith(kind, ErrorKind::Io, s.message());
  if (sha != m.cuda.stepLibrarySha256)
    return failWith(kind, ErrorKind::Format,
                    device->libraryPath + ": SHA-256 " + sha +
                        " is not the manifest's cuda.step_library_sha256 " +
                        m.cuda.stepLibrarySha256 +
                        " (the bundle was changed after it was compiled)");
  // Its constructors load the kernels' modules through the ABI.
  attachCudaHostAbi(device->driver.get());
  device->library = dlopen(device->libraryPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!device->library) {
    const char *why = dlerror();
    return failWith(kind, ErrorKind::Format,
                    "cannot load " + device->libraryPath + ": " +
                        (why ? why : "unknown error") +
                        " (a program that runs the GPU step must export "
                        "the CUDA host ABI, CudaHostAbi.h)");
  }
  if (std::string error = takeCudaHostError(); !error.empty())
    return failWith(kind, ErrorKind::Format,
                    device->libraryPath +
                        ": its kernels do not load: " + error);
  if (options.gemms != CudaGemmLibrary::Generated) {
    Status loaded = CublasLt::load(device->gemmLibrary);
    if (!loaded.failed())
      loaded = CudaBuffer::allocate(*device->driver, options.workspaceBytes,
                                    device->workspace);
    if (!loaded.failed()) {
      attachCudaHostGemms(device->gemmLibrary.get(), device->workspace.get(),
                          device->workspace.size());
      device->gemms = "cuBLASLt (" + device->gemmLibrary->getPath() +
                      ") where it has an algorithm, else the generated "
                      "GEMM kernels";
    } else if (options.gemms == CudaGemmLibrary::CublasLt) {
      return failWith(kind, ErrorKind::Unsupported,
                      "cuBLASLt for the step's products: " + loaded.message());
    } else {
      device->gemmLibrary.reset();
      device->gemms += " (cuBLASLt: " + loaded.message() + ")";
    }
  }
  // Off, the recorder still checks each launch against its kernel.
  if (Status s = CudaGraphRecorder::open(*device->driver, options.graphCapacity,
                                         device->graphs);
      s.failed()) {
    device->graphsOff = "no CUDA graphs: " + s.message();
  } else {
    if (!options.graphs)
      device->graphs->disable("CUDA graphs off");
    attachCudaHostGraphs(device->graphs.get());
  }
  if (Status s = CudaFiniteCheck::open(*device->driver, device->finiteCheck);
      s.failed())
    device->finiteCheckError = s.message();
  device->trainStep = reinterpret_cast<StepFunction>(
      dlsym(device->library, m.trainEntry.c_str()));
  device->evalStep = reinterpret_cast<StepFunction>(
      dlsym(device->library, m.evalEntry.c_str()));
  if (!device->trainStep || !device->evalStep)
    return failWith(kind, ErrorKind::Format,
                    device->libraryPath + " has no " +
                        (device->trainStep ? m.evalEntry : m.trainEntry));
  out = std::move(device);
  return succeed(kind);
}
