//===- CudaDriver.cpp - The CUDA driver, loaded at run time --------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// dlopen of libcuda.so.1 and the RAII owners over it (CudaDriver.h).
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/CudaDriver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <utility>

using namespace qtrain::rt;

namespace {

constexpr const char *kDefaultDriver = "libcuda.so.1";

/// dlerror()'s text without a leading "<path>: " the caller already says.
std::string dlerrorAfter(const std::string &path) {
  const char *why = dlerror();
  std::string text = why ? why : "unknown error";
  if (text.compare(0, path.size() + 2, path + ": ") == 0)
    text.erase(0, path.size() + 2);
  return text;
}

} // namespace

CudaDriver::~CudaDriver() {
  // The driver library stays mapped: libcuda registers process-exit
  // handlers and does not support being unloaded while a process lives.
}

Status CudaDriver::load(std::unique_ptr<CudaDriver> &out) {
  const char *env = std::getenv("QTRAIN_CUDA_DRIVER");
  std::string path = env && *env ? env : kDefaultDriver;
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return Status::error("no CUDA driver: " + path + ": " + dlerrorAfter(path) +
                         " (training on the GPU needs an NVIDIA GPU and its "
                         "driver)");
  std::unique_ptr<CudaDriver> driver(new CudaDriver());
  driver->path = path;
  driver->handle = handle;
  CudaDriverApi &f = driver->functions;
  // cuInit first: a library that is not the driver is refused by it.
  struct Entry {
    const char *name;
    void **slot;
  };
  auto slot = [](auto &function) {
    return reinterpret_cast<void **>(&function);
  };
  const Entry entries[] = {
      {"cuInit", slot(f.cuInit)},
      {"cuDeviceGetCount", slot(f.cuDeviceGetCount)},
      {"cuDeviceGet", slot(f.cuDeviceGet)},
      {"cuDeviceGetName", slot(f.cuDeviceGetName)},
      {"cuDeviceGetAttribute", slot(f.cuDeviceGetAttribute)},
      {"cuDevicePrimaryCtxRetain", slot(f.cuDevicePrimaryCtxRetain)},
      {"cuDevicePrimaryCtxRelease_v2", slot(f.cuDevicePrimaryCtxRelease)},
      {"cuCtxSetCurrent", slot(f.cuCtxSetCurrent)},
      {"cuCtxSynchronize", slot(f.cuCtxSynchronize)},
      {"cuModuleLoadData", slot(f.cuModuleLoadData)},
      {"cuModuleUnload", slot(f.cuModuleUnload)},
      {"cuModuleGetFunction", slot(f.cuModuleGetFunction)},
      {"cuMemAlloc_v2", slot(f.cuMemAlloc)},
      {"cuMemFree_v2", slot(f.cuMemFree)},
      {"cuMemcpyHtoD_v2", slot(f.cuMemcpyHtoD)},
      {"cuMemcpyDtoH_v2", slot(f.cuMemcpyDtoH)},
      {"cuMemsetD8_v2", slot(f.cuMemsetD8)},
      {"cuMemAllocManaged", slot(f.cuMemAllocManaged)},
      {"cuMemcpy", slot(f.cuMemcpy)},
      {"cuMemAllocHost_v2", slot(f.cuMemAllocHost)},
      {"cuMemFreeHost", slot(f.cuMemFreeHost)},
      {"cuMemcpyHtoDAsync_v2", slot(f.cuMemcpyHtoDAsync)},
      {"cuLaunchKernel", slot(f.cuLaunchKernel)},
      {"cuEventCreate", slot(f.cuEventCreate)},
      {"cuEventRecord", slot(f.cuEventRecord)},
      {"cuEventSynchronize", slot(f.cuEventSynchronize)},
      {"cuEventElapsedTime_v2", slot(f.cuEventElapsedTime)},
      {"cuEventDestroy_v2", slot(f.cuEventDestroy)},
      {"cuGetErrorName", slot(f.cuGetErrorName)},
      {"cuGetErrorString", slot(f.cuGetErrorString)},
  };
  const Entry graphEntries[] = {
      {"cuStreamCreate", slot(f.cuStreamCreate)},
      {"cuStreamDestroy_v2", slot(f.cuStreamDestroy)},
      {"cuStreamBeginCapture_v2", slot(f.cuStreamBeginCapture)},
      {"cuStreamEndCapture", slot(f.cuStreamEndCapture)},
      {"cuStreamGetCaptureInfo_v3", slot(f.cuStreamGetCaptureInfo)},
      {"cuGraphInstantiateWithFlags", slot(f.cuGraphInstantiate)},
      {"cuGraphLaunch", slot(f.cuGraphLaunch)},
      {"cuGraphExecKernelNodeSetParams_v2",
       slot(f.cuGraphExecKernelNodeSetParams)},
      {"cuGraphDestroy", slot(f.cuGraphDestroy)},
      {"cuGraphExecDestroy", slot(f.cuGraphExecDestroy)},
      {"cuFuncGetParamInfo", slot(f.cuFuncGetParamInfo)},
  };
  for (const Entry &e : entries) {
    dlerror();
    void *address = dlsym(handle, e.name);
    // Drivers before CUDA 12.8 have only the first cuEventElapsedTime.
    if (!address && std::strcmp(e.name, "cuEventElapsedTime_v2") == 0)
      address = dlsym(handle, "cuEventElapsedTime");
    if (!address) {
      std::string why = dlerrorAfter(path);
      // Not the driver: nothing of it is in use, so it may go.
      dlclose(handle);
      driver->handle = nullptr;
      return Status::error(path + ": not a CUDA driver: it has no " + e.name +
                           " (" + why + ")");
    }
    *e.slot = address;
  }
  for (const Entry &e : graphEntries) {
    *e.slot = dlsym(handle, e.name);
    if (!*e.slot && driver->missingGraphFunction.empty())
      driver->missingGraphFunction = e.name;
  }
  CUresult r = f.cuInit(0);
  if (r == kCudaErrorNoDevice)
    return Status::error("no CUDA device: cuInit: " + driver->describe(r) +
                         " (training on the GPU needs an NVIDIA GPU)");
  if (Status s = driver->check(r, "cuInit"); s.failed())
    return Status::error("the CUDA driver " + path +
                         " does not start: " + s.message());
  out = std::move(driver);
  return Status::success();
}

std::string CudaDriver::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (functions.cuGetErrorName)
    functions.cuGetErrorName(result, &name);
  if (functions.cuGetErrorString)
    functions.cuGetErrorString(result, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

Status CudaDriver::check(CUresult result, const char *call) const {
  if (result == kCudaSuccess)
    return Status::success();
  return Status::error(std::string(call) + ": " + describe(result));
}

Status CudaDriver::getDeviceCount(int &count) const {
  count = 0;
  CUresult r = functions.cuDeviceGetCount(&count);
  if (r == kCudaErrorNoDevice) {
    count = 0;
    return Status::success();
  }
  return check(r, "cuDeviceGetCount");
}

Status CudaDriver::getDevice(int ordinal, CudaDevice &out) const {
  out = CudaDevice();
  out.ordinal = ordinal;
  if (Status s =
          check(functions.cuDeviceGet(&out.handle, ordinal), "cuDeviceGet");
      s.failed())
    return s;
  char name[256] = {};
  if (Status s =
          check(functions.cuDeviceGetName(name, sizeof(name) - 1, out.handle),
                "cuDeviceGetName");
      s.failed())
    return s;
  out.name = name;
  if (Status s =
          check(functions.cuDeviceGetAttribute(
                    &out.major, kCudaAttrComputeCapabilityMajor, out.handle),
                "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
      s.failed())
    return s;
  return check(functions.cuDeviceGetAttribute(
                   &out.minor, kCudaAttrComputeCapabilityMinor, out.handle),
               "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
}

bool qtrain::rt::parseCudaChip(const std::string &chip, int &major, int &minor,
                               bool &archSpecific) {
  if (chip.rfind("sm_", 0) != 0)
    return false;
  std::string digits = chip.substr(3);
  archSpecific = !digits.empty() && digits.back() == 'a';
  if (archSpecific)
    digits.pop_back();
  if (digits.size() < 2 || digits.size() > 4 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  // The last digit is the minor version: sm_90 is 9.0, sm_120 is 12.0.
  minor = digits.back() - '0';
  major = std::atoi(digits.substr(0, digits.size() - 1).c_str());
  return true;
}

Status qtrain::rt::checkCudaDevice(const CudaDevice &device,
                                   const std::string &chip,
                                   const std::string &format) {
  int major, minor;
  bool archSpecific;
  if (!parseCudaChip(chip, major, minor, archSpecific))
    return Status::error("cuda.chip '" + chip +
                         "' is not an NVIDIA architecture such as sm_90");
  std::string who = "device " + std::to_string(device.ordinal) + " (" +
                    device.name + ") is " + device.chip();
  std::string what = "the bundle's CUDA module is for " + chip + ", but " + who;
  int have = device.major * 10 + device.minor, want = major * 10 + minor;
  if (have < want)
    return Status::error(what + ": too old for it");
  if (archSpecific && have != want)
    return Status::error(what + ": " + chip +
                         " code runs on exactly that architecture");
  if (format == "cubin" && device.major != major)
    return Status::error(what +
                         ": a cubin runs only on its own major "
                         "architecture (recompile the bundle for " +
                         device.chip() + ", or as PTX)");
  return Status::success();
}

Status qtrain::rt::selectCudaDevice(const CudaDriver &driver,
                                    const CudaTargetSpec &target,
                                    CudaDevice &out) {
  int count;
  if (Status s = driver.getDeviceCount(count); s.failed())
    return s;
  if (count == 0)
    return Status::error("no CUDA device: the driver (" + driver.getPath() +
                         ") sees none (check nvidia-smi and "
                         "CUDA_VISIBLE_DEVICES)");
  if (Status s = driver.getDevice(0, out); s.failed())
    return s;
  return checkCudaDevice(out, target.chip, target.format);
}

//===----------------------------------------------------------------------===//
// CudaContext
//===----------------------------------------------------------------------===//

Status CudaContext::open(const CudaDriver &driver, const CudaDevice &device,
                         std::unique_ptr<CudaContext> &out) {
  std::unique_ptr<CudaContext> c(new CudaContext(driver, device));
  const CudaDriverApi &f = driver.api();
  if (Status s =
          driver.check(f.cuDevicePrimaryCtxRetain(&c->context, device.handle),
                       "cuDevicePrimaryCtxRetain");
      s.failed()) {
    c->context = nullptr;
    return s;
  }
  if (Status s = driver.check(f.cuCtxSetCurrent(c->context), "cuCtxSetCurrent");
      s.failed())
    return s;
  out = std::move(c);
  return Status::success();
}

CudaContext::~CudaContext() {
  if (!context)
    return;
  driver.api().cuCtxSetCurrent(nullptr);
  driver.api().cuDevicePrimaryCtxRelease(device.handle);
}

Status CudaContext::synchronize() const {
  return driver.check(driver.api().cuCtxSynchronize(), "cuCtxSynchronize");
}

//===----------------------------------------------------------------------===//
// CudaBuffer
//===----------------------------------------------------------------------===//

CudaBuffer::~CudaBuffer() { release(); }

CudaBuffer::CudaBuffer(CudaBuffer &&other) noexcept
    : driver(other.driver), pointer(other.pointer), bytes(other.bytes) {
  other.pointer = 0;
  other.bytes = 0;
}

CudaBuffer &CudaBuffer::operator=(CudaBuffer &&other) noexcept {
  if (this != &other) {
    release();
    driver = other.driver;
    pointer = std::exchange(other.pointer, 0);
    bytes = std::exchange(other.bytes, 0);
  }
  return *this;
}

void CudaBuffer::release() {
  if (pointer)
    driver->api().cuMemFree(pointer);
  pointer = 0;
  bytes = 0;
}

Status CudaBuffer::allocate(const CudaDriver &driver, size_t bytes,
                            CudaBuffer &out) {
  CudaBuffer b;
  b.driver = &driver;
  if (Status s = driver.check(
          driver.api().cuMemAlloc(&b.pointer, bytes ? bytes : 1), "cuMemAlloc");
      s.failed())
    return Status::error(s.message() + " (" + std::to_string(bytes) +
                         " bytes)");
  b.bytes = bytes;
  out = std::move(b);
  return Status::success();
}

Status CudaBuffer::upload(const void *data, size_t count) const {
  if (count > bytes)
    return Status::error("CudaBuffer::upload: " + std::to_string(count) +
                         " bytes into a buffer of " + std::to_string(bytes));
  return driver->check(driver->api().cuMemcpyHtoD(pointer, data, count),
                       "cuMemcpyHtoD");
}

Status CudaBuffer::download(void *data, size_t count) const {
  if (count > bytes)
    return Status::error("CudaBuffer::download: " + std::to_string(count) +
                         " bytes from a buffer of " + std::to_string(bytes));
  return driver->check(driver->api().cuMemcpyDtoH(data, pointer, count),
                       "cuMemcpyDtoH");
}

Status CudaBuffer::fill(unsigned char value) const {
  return driver->check(driver->api().cuMemsetD8(pointer, value, bytes),
                       "cuMemsetD8");
}

//===----------------------------------------------------------------------===//
// CudaEvent
//===----------------------------------------------------------------------===//

CudaEvent::~CudaEvent() { release(); }

CudaEvent::CudaEvent(CudaEvent &&other) noexcept
    : driver(other.driver), event(std::exchange(other.event, nullptr)) {}

CudaEvent &CudaEvent::operator=(CudaEvent &&other) noexcept {
  if (this != &other) {
    release();
    driver = other.driver;
    event = std::exchange(other.event, nullptr);
  }
  return *this;
}

void CudaEvent::release() {
  if (event)
    driver->api().cuEventDestroy(event);
  event = nullptr;
}

Status CudaEvent::create(const CudaDriver &driver, CudaEvent &out) {
  CudaEvent e;
  e.driver = &driver;
  if (Status s =
          driver.check(driver.api().cuEventCreate(&e.event, kCudaEventDefault),
                       "cuEventCreate");
      s.failed()) {
    e.event = nullptr;
    return s;
  }
  out = std::move(e);
  return Status::success();
}

Status CudaEvent::record() const {
  return driver->check(driver->api().cuEventRecord(event, nullptr),
                       "cuEventRecord");
}

Status CudaEvent::synchronize() const {
  return driver->check(driver->api().cuEventSynchronize(event),
                       "cuEventSynchronize");
}

Status CudaEvent::elapsedSince(const CudaEvent &start,
                               float &milliseconds) const {
  return driver->check(
      driver->api().cuEventElapsedTime(&milliseconds, start.event, event),
      "cuEventElapsedTime");
}

//===----------------------------------------------------------------------===//
// CudaModule
//===----------------------------------------------------------------------===//

Status CudaModule::load(const CudaDriver &driver, const CudaTargetSpec &target,
                        const std::string &image, const std::string &path,
                        std::unique_ptr<CudaModule> &out) {
  std::unique_ptr<CudaModule> m(new CudaModule(driver, target));
  const CudaDriverApi &f = driver.api();
  // PTX is text the driver reads up to its NUL; a cubin is read by its
  // ELF headers. std::string's data() is NUL-terminated either way.
  std::string copy = image;
  CUresult r = f.cuModuleLoadData(&m->module, copy.c_str());
  if (r != kCudaSuccess) {
    m->module = nullptr;
    return Status::error(path + ": the driver does not load the " +
                         target.format +
                         " module: cuModuleLoadData: " + driver.describe(r));
  }
  for (size_t i = 0; i < target.kernels.size(); ++i) {
    CUfunction function = nullptr;
    CUresult fr = f.cuModuleGetFunction(&function, m->module,
                                        target.kernels[i].name.c_str());
    if (fr != kCudaSuccess)
      return Status::error(path + ": kernel '" + target.kernels[i].name +
                           "' (cuda.kernels[" + std::to_string(i) +
                           "]) is not in the module: cuModuleGetFunction: " +
                           driver.describe(fr));
    m->functions.push_back(function);
  }
  out = std::move(m);
  return Status::success();
}

CudaModule::~CudaModule() {
  if (module)
    driver.api().cuModuleUnload(module);
}

int64_t CudaModule::findKernel(const std::string &name) const {
  for (size_t i = 0; i < target.kernels.size(); ++i)
    if (target.kernels[i].name == name)
      return int64_t(i);
  return -1;
}

Status CudaModule::launch(size_t index, CUdeviceptr a, CUdeviceptr b,
                          CUdeviceptr c) const {
  const CudaKernelSpec &k = target.kernels[index];
  void *params[] = {&a, &b, &c};
  CUresult r = driver.api().cuLaunchKernel(
      functions[index], unsigned(k.grid[0]), unsigned(k.grid[1]),
      unsigned(k.grid[2]), unsigned(k.block[0]), unsigned(k.block[1]),
      unsigned(k.block[2]), 0, nullptr, params, nullptr);
  if (r != kCudaSuccess)
    return Status::error("kernel '" + k.name +
                         "': cuLaunchKernel: " + driver.describe(r));
  return Status::success();
}
