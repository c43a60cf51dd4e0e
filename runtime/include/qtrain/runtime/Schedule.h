//===- Schedule.h - Precision schedules and their string form ---*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Precision schedules: functions from the training step to the forward
/// bitwidth shared by every quantized layer (PAPERS.md §1-§3). Bits are an
/// int; 0 means full precision (fp32), as CPT's code uses b = 0.
///
/// Kinds:
///   * Static(b): b at every step; Static(0) is fp32.
///   * Cyclic: the CPT / Better Schedules family (below).
///   * Learned (LDP): bits are learned per layer; see ldpBits(). As a
///     function of the step alone a Learned schedule gives the bits at
///     initialization (p = 0), i.e. minBits.
///
/// Cyclic schedules. Given total steps T, step t >= 0 (0-based; steps past
/// T continue the periodic pattern), n cycles and bounds qmin <= qmax:
///   period  P = floor(T / n)      (PeriodConvention::Floor, CPT, §1)
///           P = floor(T / n) + 1  (PeriodConvention::FloorPlusOne, §2)
///   r = t mod P,  z = double(r) / double(P),  u = double(P - r) / double(P)
///   D = double(qmax - qmin),  k = 4,  g(w) = w / ((1.0 - 0.9) + 0.9 * w)
/// Growth curves (rise from qmin to qmax within a period):
///   cosine       qmin + 0.5 * D * (1.0 - cos(pi * z))
///   linear       qmin + D * z
///   exponential  qmax - D * exp(-4.0 * z)
///   rex          qmax - D * g(u)
/// Decay curves (triangular mode, even periods):
///   cosine       qmax - 0.5 * D * (1.0 - cos(pi * z))
///   linear       qmax - D * z
///   exponential  vertical flip:   qmin + D * exp(-4.0 * z)
///                horizontal flip: qmax - D * exp(-4.0 * u)
///   rex          vertical flip:   qmin + D * g(u)
///                horizontal flip: qmax - D * g(z)
/// Repeated mode uses the growth curve in every period; triangular mode uses
/// the decay curve when floor(t / P) is even and the growth curve when odd.
/// The bits are rint(value), half to even, computed in double.
///
/// The expressions are evaluated exactly as written (left to right, double,
/// no FMA contraction). The order matters at exact ties: e.g. CPT 2-5 at
/// z = 1/2 is 3.5 in exact arithmetic, which this form rounds to 4, while
/// CPT's own code, 1 + cos(pi * z + pi), lands just below 3.5 and gives 3.
/// The form above is Better Schedules' code (quant_scheds.py; "1 - z" of the
/// rex curves written as (P - r) / P and 0.1 as (1.0 - 0.9), as there); it
/// reproduces every test vector of PAPERS.md §1 and §2.
///
/// Flip only applies to triangular exponential and rex schedules, where it
/// is required (the parser defaults it to vertical, the official code's
/// decay). Cosine and linear decays are both flips at once.
///
/// ## Schedule strings (shared by every qtrain command-line tool)
///
///   schedule := 'fp32'
///             | 'static' ':' BITS                      BITS in [0, 16]
///             | 'cpt' [':' 'cosine'] ':' MIN ':' MAX [':' 'cycles=' N]
///             | 'cyclic' ':' SHAPE ':' MIN ':' MAX (':' OPTION)*
///             | NAMED ':' MIN ':' MAX [':' 'cycles=' N]
///             | 'ldp' [':' MIN ':' MAX]
///   SHAPE    := 'cosine' | 'linear' | 'exponential' | 'exp' | 'rex'
///   OPTION   := 'mode=' ('repeated' | 'triangular')
///             | 'flip=' ('vertical' | 'horizontal')
///             | 'cycles=' N
///             | 'period=' ('floor' | 'floor_plus_one')
///   NAMED    := 'cosine-repeated' | 'cosine-triangular'
///             | 'linear-repeated' | 'linear-triangular'
///             | 'exp-repeated'
///             | 'exp-triangular-vertical' | 'exp-triangular-horizontal'
///             | 'rex-repeated'
///             | 'rex-triangular-vertical' | 'rex-triangular-horizontal'
///   MIN, MAX := decimal integer in [1, 16], MIN <= MAX
///   N        := decimal integer >= 1 (at most 9 digits)
///
/// Meaning and defaults:
///   * `static:0` is `fp32`.
///   * `cpt:MIN:MAX` is CPT's cosine: cyclic cosine, repeated, floor
///     period, 32 cycles by default.
///   * `cyclic:...` defaults to mode=repeated, cycles=8, period=
///     floor_plus_one (Better Schedules); flip= is only accepted for
///     triangular exponential/rex and defaults to vertical there.
///   * NAMED are the ten schedules of PAPERS.md §2: cyclic with the named
///     shape/mode/flip, period floor_plus_one, 8 cycles by default.
///   * `ldp` alone is `ldp:3:8`.
/// Keywords are lower case; no white space; each option at most once, in
/// any order; integers are plain decimal digits (no sign), leading zeros
/// allowed. Bits are bounded by 16 because the quantizer is (grid of up to
/// 2^16 levels, exact in fp32 arithmetic).
///
/// Errors read "invalid schedule '<text>' at column <C>: <what>", with C the
/// 1-based column of the offending token (one past the end for a missing
/// token) and the token quoted in <what>. Control and non-ASCII bytes are
/// shown as \xNN, and long inputs are elided. Parsing never crashes and
/// never reads out of bounds, whatever the input.
///
/// printSchedule() gives the canonical, shortest string: `fp32`,
/// `static:B`, `ldp:MIN:MAX`, `cpt:MIN:MAX` for cosine/repeated/floor (with
/// `:cycles=N` unless 32), a NAMED form for every floor_plus_one schedule
/// (with `:cycles=N` unless 8), otherwise the `cyclic:` form listing only
/// non-default options in the order mode, flip, cycles, period.
/// parseSchedule(printSchedule(s)) == s for every valid s.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_SCHEDULE_H
#define QTRAIN_RUNTIME_SCHEDULE_H

#include "qtrain/runtime/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qtrain::rt {

/// Largest bitwidth any schedule may ask for (and the quantizer accepts).
constexpr int kMaxScheduleBits = 16;
/// Default cycle counts of CPT (§1) and of Better Schedules (§2).
constexpr int kCptDefaultCycles = 32;
constexpr int kCyclicDefaultCycles = 8;
/// LDP's default bounds (§3).
constexpr int kLdpDefaultMinBits = 3;
constexpr int kLdpDefaultMaxBits = 8;

enum class ScheduleKind { Static, Cyclic, Learned };
enum class CycleShape { Cosine, Linear, Exponential, Rex };
enum class CycleMode { Repeated, Triangular };
enum class CycleFlip { None, Vertical, Horizontal };
enum class PeriodConvention {
  /// P = floor(total / cycles), CPT.
  Floor,
  /// P = floor(total / cycles) + 1, Better Schedules.
  FloorPlusOne,
};

/// A precision schedule. Build one with the factory functions, which leave
/// the fields a kind does not use at their defaults so that == compares
/// meaningfully.
struct Schedule {
  ScheduleKind kind = ScheduleKind::Static;
  /// Static: the bits (0 = fp32).
  int bits = 0;
  /// Cyclic and Learned: the bounds.
  int minBits = 0;
  int maxBits = 0;
  /// Cyclic only.
  CycleShape shape = CycleShape::Cosine;
  CycleMode mode = CycleMode::Repeated;
  CycleFlip flip = CycleFlip::None;
  int cycles = 0;
  PeriodConvention period = PeriodConvention::FloorPlusOne;

  static Schedule fp32() { return staticBits(0); }
  static Schedule staticBits(int bits);
  /// CPT's cosine (§1): cyclic cosine, repeated, floor period.
  static Schedule cpt(int minBits, int maxBits, int cycles = kCptDefaultCycles);
  static Schedule
  cyclic(CycleShape shape, int minBits, int maxBits,
         CycleMode mode = CycleMode::Repeated, CycleFlip flip = CycleFlip::None,
         int cycles = kCyclicDefaultCycles,
         PeriodConvention period = PeriodConvention::FloorPlusOne);
  static Schedule learned(int minBits = kLdpDefaultMinBits,
                          int maxBits = kLdpDefaultMaxBits);

  bool operator==(const Schedule &other) const;
  bool operator!=(const Schedule &other) const { return !(*this == other); }
};

/// Checks the schedule on its own: bits in [0, 16] for Static; 1 <= min <=
/// max <= 16 for Cyclic and Learned; cycles >= 1; flip only (and always)
/// on triangular exponential/rex.
Status verifySchedule(const Schedule &schedule);
/// verifySchedule() plus totalSteps >= 1 and, for Cyclic, totalSteps >=
/// cycles (so that every period is at least one step).
Status verifySchedule(const Schedule &schedule, int64_t totalSteps);

/// The cycle period P in steps, or 0 when the schedule is not cyclic or
/// (schedule, totalSteps) does not verify.
int64_t schedulePeriod(const Schedule &schedule, int64_t totalSteps);

/// The unrounded schedule value at `step` (see the file comment); for
/// Static and Learned the (integer) bits. NaN when (schedule, totalSteps)
/// does not verify or step < 0.
double scheduleValue(const Schedule &schedule, int64_t step,
                     int64_t totalSteps);

/// The forward bits at `step` (0-based): rint(scheduleValue()), half to
/// even; 0 means fp32. -1 when (schedule, totalSteps) does not verify or
/// step < 0.
int scheduleBits(const Schedule &schedule, int64_t step, int64_t totalSteps);

/// The largest bits the schedule can produce (Static: its bits, so 0 for
/// fp32; Cyclic and Learned: maxBits).
int scheduleMaxBits(const Schedule &schedule);

/// LDP's bit mapping (§3) for the learnable scalar p of a layer:
///   b = clamp(rint(p * float(maxBits - minBits) + float(minBits)),
///             minBits, maxBits)
/// in fp32, multiply then add (no FMA), rint half to even. A NaN p gives
/// minBits. Requires 1 <= minBits <= maxBits <= 16, else returns -1.
int ldpBits(float p, int minBits = kLdpDefaultMinBits,
            int maxBits = kLdpDefaultMaxBits);

/// Parses a list of bitwidths, as the compiler's --bits/--grad-bits take
/// them: a range "MIN:MAX" (inclusive) or a comma-separated list "3,4,8",
/// each in [1, 16], duplicates dropped, in the order given. On failure `out`
/// is left unchanged and the status says which token is wrong.
Status parseBitList(std::string_view text, std::vector<int> &out);

/// Parses a schedule string (grammar in the file comment) into `out`.
/// On failure `out` is left unchanged and the status says why and where.
Status parseSchedule(std::string_view text, Schedule &out);

/// The canonical string of `schedule` (see the file comment). Also prints
/// schedules that do not verify (in the `cyclic:` form where needed), for
/// diagnostics; those do not round-trip.
std::string printSchedule(const Schedule &schedule);

/// Keyword spellings used by the parser and the printer.
std::string_view toString(ScheduleKind kind);
std::string_view toString(CycleShape shape);
std::string_view toString(CycleMode mode);
std::string_view toString(CycleFlip flip);
std::string_view toString(PeriodConvention period);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_SCHEDULE_H
