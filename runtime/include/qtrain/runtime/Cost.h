//===- Cost.h - BitOps cost model of quantized training ---------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The training cost model of CPT (PAPERS.md §1), used by §2 as well.
///
/// One quantized GEMM/conv with F multiply-accumulates costs, per training
/// step, one forward GEMM at (bfw x bfw) bits and two backward GEMMs (dX and
/// dW) at (bfw x bbw) bits:
///   BitOps = F * bfw^2 + 2 * F * bfw * bbw
/// where bits 0 (full precision) count as 32. Relative to fp32:
///   (bfw^2 + 2 * bfw * bbw) / (3 * 32^2)
/// A schedule's savings versus a static (sfw, sbw) run of the same length
/// and MACs are 1 - sum(BitOps) / sum(static BitOps); its "mean relative
/// cost vs static 8/8" (§2) is sum(BitOps) / sum(static 8/8 BitOps).
///
/// Per-MAC costs are small integers, so with F = 1 per step (what the
/// schedule summaries use) every sum here is exact in double.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_COST_H
#define QTRAIN_RUNTIME_COST_H

#include "qtrain/runtime/Schedule.h"
#include "qtrain/runtime/Status.h"

#include <array>
#include <cstdint>

namespace qtrain::rt {

/// Bits as the cost model counts them: 0 (full precision) counts as 32.
int costBits(int bits);

/// Bit operations per MAC of one training step: bfw^2 + 2 * bfw * bbw, with
/// costBits() applied to both.
int64_t bitOpsPerMac(int fwBits, int bwBits);

/// BitOps of a quantized GEMM/conv with `macs` MACs:
/// macs * bitOpsPerMac(fwBits, bwBits).
double bitOps(double macs, int fwBits, int bwBits);

/// (bfw^2 + 2 * bfw * bbw) / (3 * 32^2).
double relativeCostVsFp32(int fwBits, int bwBits);

/// Accumulates the BitOps of many GEMM/conv executions (one call per site
/// and step, or one per step with macs = 1 for a per-MAC ledger).
class CostLedger {
public:
  /// Records one execution of `macs` MACs at (fwBits, bwBits).
  void add(int fwBits, int bwBits, double macs = 1.0);

  /// Number of add() calls.
  int64_t numEntries() const { return entries; }
  double totalMacs() const { return macs; }
  double totalBitOps() const { return bitOpsSum; }

  /// totalBitOps / (totalMacs * 3 * 32^2); 0 when empty.
  double relativeCostVsFp32() const;
  /// totalBitOps / (totalMacs * bitOpsPerMac(staticFw, staticBw)), the mean
  /// relative cost against a static run; 0 when empty.
  double relativeCostVsStatic(int staticFwBits, int staticBwBits) const;
  /// 1 - relativeCostVsStatic(): the fraction of BitOps saved.
  double savingsVsStatic(int staticFwBits, int staticBwBits) const;

private:
  int64_t entries = 0;
  double macs = 0.0;
  double bitOpsSum = 0.0;
};

/// What a schedule costs over a run, per MAC of a quantized layer.
struct ScheduleCostSummary {
  int64_t totalSteps = 0;
  int gradBits = 0;
  /// Steps spent at each forward bitwidth (index 0 = fp32).
  std::array<int64_t, kMaxScheduleBits + 1> histogram{};
  /// Mean forward bits, fp32 counted as 32.
  double meanBits = 0.0;
  /// Mean BitOps relative to fp32 training.
  double relativeCostVsFp32 = 0.0;
  /// scheduleMaxBits() of the schedule: the static baseline it is compared
  /// with (at the same gradient bits).
  int staticMaxBits = 0;
  /// Mean relative cost and savings versus static (staticMaxBits,
  /// gradBits).
  double relativeCostVsStaticMax = 0.0;
  double savingsVsStaticMax = 0.0;
  /// Mean relative cost versus static 8/8 (§2's table).
  double relativeCostVsStatic88 = 0.0;
};

/// Evaluates `schedule` at every step 0 .. totalSteps-1 with constant
/// gradient bits `gradBits` (0 = fp32, else 1..16) and summarizes the cost.
Status summarizeScheduleCost(const Schedule &schedule, int gradBits,
                             int64_t totalSteps, ScheduleCostSummary &out);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_COST_H
