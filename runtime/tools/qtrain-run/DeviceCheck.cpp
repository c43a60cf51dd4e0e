//===- DeviceCheck.cpp - qtrain-run --device=cuda -------------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "DeviceCheck.h"

#include "Fatal.h"

#include "qtrain/runtime/CudaDriver.h"
#include "qtrain/runtime/Selection.h"

#include <memory>
#include <vector>

using namespace qtrain::run;
namespace rt = qtrain::rt;

namespace {

std::string bitsName(int bits) {
  return bits == 0 ? "fp32" : std::to_string(bits);
}

/// The bits a schedule can produce (as validateSchedule() reads them).
std::vector<int> reachableBits(const rt::Schedule &schedule) {
  if (schedule.kind == rt::ScheduleKind::Static)
    return {schedule.bits};
  std::vector<int> bits;
  for (int b = schedule.minBits; b <= schedule.maxBits; ++b)
    bits.push_back(b);
  return bits;
}

/// Every site has a GPU kernel for every product of every variant the
/// schedules reach; the first one without is named.
void checkKernels(const rt::Manifest &m, const rt::Schedule &schedule,
                  const rt::Schedule &gradSchedule) {
  for (int bits : reachableBits(schedule))
    for (int gradBits : reachableBits(gradSchedule))
      for (size_t i = 0; i < m.sites.size(); ++i) {
        const rt::SiteSpec &site = m.sites[i];
        int32_t j = rt::findVariant(site, bits, gradBits);
        // validateSchedule() refused the missing ones it needs.
        if (j < 0)
          continue;
        const rt::VariantSpec &v = site.variants[size_t(j)];
        std::string precision = bitsName(bits) + "/" + bitsName(gradBits);
        // A variant without products computes no GEMM (a placeholder site).
        for (const auto &[product, cpuKind] : v.kernels) {
          std::string kind = rt::cudaKindFor(cpuKind);
          std::string where = "--device=cuda: site '" + site.name + "', " +
                              product + " at precision " + precision +
                              " (CPU kernel kind '" + cpuKind + "')";
          if (kind.empty())
            die(where + ": no GPU kernel kind computes it (the GPU has f32, "
                        "tf32, bf16, fp8 and i8 kernels); train it on the CPU");
          auto products = site.cudaKernels.find(product);
          if (products == site.cudaKernels.end() ||
              !products->second.count(kind))
            die(where + ": the bundle has no '" + kind +
                "' GPU kernel for it (sites[" + std::to_string(i) + "].cuda." +
                product + "." + kind +
                " in manifest.json); recompile it with --target=cuda:" +
                m.cuda.chip);
        }
      }
}

} // namespace

void qtrain::run::stopOnCuda(const rt::Bundle &bundle,
                             const rt::Schedule &schedule,
                             const std::string &scheduleText,
                             const rt::Schedule &gradSchedule,
                             const std::string &gradText) {
  const rt::Manifest &m = bundle.getManifest();
  if (!rt::hasCudaTarget(m))
    die("--device=cuda: the bundle has no CUDA target (compile it with "
        "qtrain-compile --target=cuda:sm_90)");
  if (rt::Status s = rt::validateSchedule(m, schedule, scheduleText,
                                          gradSchedule, gradText);
      s.failed())
    die(s.message());
  checkKernels(m, schedule, gradSchedule);

  std::unique_ptr<rt::CudaDriver> driver;
  if (rt::Status s = rt::CudaDriver::load(driver); s.failed())
    die("--device=cuda: " + s.message());
  rt::CudaDevice device;
  if (rt::Status s = rt::selectCudaDevice(*driver, m.cuda, device); s.failed())
    die("--device=cuda: " + s.message());
  std::string loaded;
  {
    std::unique_ptr<rt::CudaContext> context;
    if (rt::Status s = rt::CudaContext::open(*driver, device, context);
        s.failed())
      die("--device=cuda: " + s.message());
    std::unique_ptr<rt::CudaModule> module;
    if (rt::Status s =
            rt::CudaModule::load(*driver, m.cuda, bundle.getCudaModuleImage(),
                                 bundle.getCudaModulePath(), module);
        s.failed())
      die("--device=cuda: " + s.message());
  }
  die("--device=cuda: the bundle's GPU kernels load on " + device.name + " (" +
      device.chip() +
      "), but training on the GPU is not built yet; run qtrain-cuda-check " +
      bundle.getDirectory() + " for the kernels' numerics and timings");
}
