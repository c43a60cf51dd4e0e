//===- Cost.cpp - BitOps cost model of quantized training ----------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Cost.h"

using namespace qtrain::rt;

namespace {
/// 3 * 32^2: one fp32 forward GEMM and two fp32 backward GEMMs per MAC.
constexpr double kFp32BitOpsPerMac = 3.0 * 32.0 * 32.0;
} // namespace

int qtrain::rt::costBits(int bits) { return bits == 0 ? 32 : bits; }

int64_t qtrain::rt::bitOpsPerMac(int fwBits, int bwBits) {
  int64_t fw = costBits(fwBits), bw = costBits(bwBits);
  return fw * fw + 2 * fw * bw;
}

double qtrain::rt::bitOps(double macs, int fwBits, int bwBits) {
  return macs * double(bitOpsPerMac(fwBits, bwBits));
}

double qtrain::rt::relativeCostVsFp32(int fwBits, int bwBits) {
  return double(bitOpsPerMac(fwBits, bwBits)) / kFp32BitOpsPerMac;
}

void CostLedger::add(int fwBits, int bwBits, double addedMacs) {
  ++entries;
  macs += addedMacs;
  bitOpsSum += bitOps(addedMacs, fwBits, bwBits);
}

double CostLedger::relativeCostVsFp32() const {
  if (macs == 0.0)
    return 0.0;
  return bitOpsSum / (macs * kFp32BitOpsPerMac);
}

double CostLedger::relativeCostVsStatic(int staticFwBits,
                                        int staticBwBits) const {
  if (macs == 0.0)
    return 0.0;
  return bitOpsSum / bitOps(macs, staticFwBits, staticBwBits);
}

double CostLedger::savingsVsStatic(int staticFwBits, int staticBwBits) const {
  return 1.0 - relativeCostVsStatic(staticFwBits, staticBwBits);
}

Status qtrain::rt::summarizeScheduleCost(const Schedule &schedule, int gradBits,
                                         int64_t totalSteps,
                                         ScheduleCostSummary &out) {
  Status status = verifySchedule(schedule, totalSteps);
  if (status.failed())
    return status;
  if (gradBits < 0 || gradBits > kMaxScheduleBits)
    return Status::error("gradient bits " + std::to_string(gradBits) +
                         " out of range [0, 16]");
  ScheduleCostSummary summary;
  summary.totalSteps = totalSteps;
  summary.gradBits = gradBits;
  summary.staticMaxBits = scheduleMaxBits(schedule);
  CostLedger ledger;
  double bitsSum = 0.0;
  for (int64_t step = 0; step < totalSteps; ++step) {
    int bits = scheduleBits(schedule, step, totalSteps);
    ++summary.histogram[bits];
    bitsSum += costBits(bits);
    ledger.add(bits, gradBits);
  }
  summary.meanBits = bitsSum / double(totalSteps);
  summary.relativeCostVsFp32 = ledger.relativeCostVsFp32();
  summary.relativeCostVsStaticMax =
      ledger.relativeCostVsStatic(summary.staticMaxBits, gradBits);
  summary.savingsVsStaticMax =
      ledger.savingsVsStatic(summary.staticMaxBits, gradBits);
  summary.relativeCostVsStatic88 = ledger.relativeCostVsStatic(8, 8);
  out = summary;
  return Status::success();
}
