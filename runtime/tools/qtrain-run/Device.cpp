//===- Device.cpp - qtrain-run --device=cuda ------------------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Fatal.h"

#include "qtrain/runtime/CudaStepDevice.h"
#include "qtrain/runtime/Selection.h"

#include <cstdio>

using namespace qtrain::run;
namespace rt = qtrain::rt;

std::shared_ptr<rt::StepDevice> qtrain::run::openCuda(
    const rt::Bundle &bundle, const rt::Schedule &schedule,
    const std::string &scheduleText, const rt::Schedule &gradSchedule,
    const std::string &gradText, const std::string &gemms, bool graphs) {
  const rt::Manifest &m = bundle.getManifest();
  if (!rt::hasCudaTarget(m))
    die("--device=cuda: the bundle has no CUDA target (compile it with "
        "qtrain-compile --target=cuda:sm_90)");
  if (rt::Status s = rt::validateSchedule(m, schedule, scheduleText,
                                          gradSchedule, gradText);
      s.failed())
    die(s.message());
  std::shared_ptr<rt::StepDevice> device;
  rt::CudaStepOptions options;
  options.gemms = gemms == "generated"  ? rt::CudaGemmLibrary::Generated
                  : gemms == "cublaslt" ? rt::CudaGemmLibrary::CublasLt
                                        : rt::CudaGemmLibrary::Auto;
  options.graphs = graphs;
  if (rt::Status s = rt::openCudaStepDevice(bundle, device, nullptr, options);
      s.failed())
    die("--device=cuda: " + s.message());
  std::printf("device: %s; the whole step on the GPU (%s)\n",
              device->describe().c_str(), m.cuda.stepLibrary.c_str());
  std::printf("  products on %s\n", device->describeProducts().c_str());
  return device;
}
