//===- Assignment.h - Mixed-precision assignment under a budget -*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The precision search of PAPERS.md §4: which tensors of a training step
/// are stored in low-precision floating point, chosen group by group until a
/// ratio of all tensor elements, or a memory budget, is met. Plain C++17 with
/// no LLVM/MLIR dependency (like CIRCT's lib/Scheduling); passes call it.
///
/// Tensors. Every module has an output Y and its gradient GY (same element
/// count) and, per parameter, P and its gradient GP (same element count).
/// A module's input X / GX alias its producer's Y / GY and are not counted
/// again. Master weights and optimizer state are outside the assignment.
///
/// Groups (formGroups). Modules come in execution order; a new group starts
/// at every Input, Conv and Linear module. Group k holds
///   * Y and GY of the modules in group k, and
///   * P and GP of the modules whose predecessor (producer of the first data
///     input) is in group k; a module without predecessor keeps its own P
///     and GP in its own group.
/// Group ids are 0, 1, ... in execution order; size(g) is the sum of the
/// element counts of its tensors.
///
/// Memory. A tensor of n elements in FP(e, m, b) takes n * (1 + e + m) bits;
/// footprints are the sum over all tensors of all groups, and bytes are bits
/// / 8 rounded up.
///
/// Assignment (assignByRatio), for a ratio r in [0, 1]:
///
///     ratio[g] = size(g) / sum of sizes
///     chosen = []; acc = 0
///     for g in order: if acc >= r: break; chosen.append(g); acc += ratio[g]
///
/// The chosen groups are low precision: P and Y in lowPY, GY in lowGY, GP in
/// lowGP; all other tensors stay in `high`. acc is computed as (elements of
/// the chosen groups) / (all elements), which is the running sum of ratios
/// without its rounding error: r = 0 chooses nothing, r = 1 chooses every
/// group, and the ratio assignByBudget reports reproduces its choice.
///
/// Orders (in which groups are considered):
///   * Largest (the paper's greedy): ratio descending, ties by id ascending.
///   * Smallest (ablation): ratio ascending, ties by id ascending.
///   * Random (ablation): the ids 0..n-1 shuffled by Fisher-Yates (for i =
///     n-1 down to 1, swap entries i and j, j uniform in [0, i]) with the
///     splitmix64 generator seeded with Options::seed; j is x mod (i + 1) for
///     the first output x >= 2^64 mod (i + 1), which keeps it unbiased. The
///     same seed gives the same order on every platform.
///   * Scored (ours, beyond the paper): Options::scores (one per group, e.g.
///     bytes saved per unit of measured sensitivity) descending, ties by id
///     ascending.
///
/// Budget (assignByBudget): the choices the search can make are the prefixes
/// k = 0..n of the order; the smallest k whose footprint fits the budget is
/// taken. Its covered ratio c(k), the share of all elements in those k
/// groups (c(0) = 0), is reported as the ratio: assignByRatio(c(k)) makes
/// the same choice, as does every r in (c(k-1), c(k)]: the r that fit the
/// budget and are smallest (PAPERS.md: "a memory budget maps to the
/// smallest r that fits") all choose these groups.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_SEARCH_ASSIGNMENT_H
#define QTRAIN_SEARCH_ASSIGNMENT_H

#include "qtrain/runtime/FloatFormat.h"
#include "qtrain/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qtrain::search {

/// The tensor classes of PAPERS.md §4 that the search assigns formats to.
enum class TensorClass {
  /// A parameter.
  P,
  /// A module's output.
  Y,
  /// The gradient of a module's output.
  GY,
  /// The gradient of a parameter.
  GP,
};

/// "P", "Y", "GY" or "GP".
const char *toString(TensorClass cls);

/// What a module is, as far as grouping cares: Input, Conv and Linear start a
/// new group, every other module joins the current one.
enum class ModuleKind { Input, Conv, Linear, Other };

/// A parameter P of a module; its gradient GP has the same element count.
struct ParamSpec {
  std::string name;
  int64_t elements = 0;
};

/// A module of the training step, in execution order.
struct ModuleSpec {
  std::string name;
  ModuleKind kind = ModuleKind::Other;
  /// Index (into the module vector) of the module producing the first data
  /// input; -1 if none (inputs). Must be earlier than this module.
  int predecessor = -1;
  /// Elements of Y (and of GY) at the training batch size.
  int64_t outputElements = 0;
  std::vector<ParamSpec> params;
};

/// One tensor of a group.
struct TensorRef {
  /// Index of the module it belongs to.
  int module = -1;
  TensorClass cls = TensorClass::Y;
  /// Index into the module's params for P and GP; -1 for Y and GY.
  int param = -1;
  int64_t elements = 0;
};

/// A group of tensors that is assigned one precision.
struct Group {
  /// Position in execution order; groups[i].id == i.
  int id = 0;
  /// In module order; per module Y, GY, or per parameter P, GP.
  std::vector<TensorRef> tensors;
  /// size(g): the sum of the tensors' elements.
  int64_t elements = 0;
};

/// Forms the groups of the file comment from `modules`, replacing `out`.
/// Like every function here that fills `out`, it leaves `out` unchanged when
/// it fails. Fails, naming the module, when the modules are empty, the first
/// does not start a group, a predecessor is out of range or not earlier, or an
/// element count is not positive.
rt::Status formGroups(const std::vector<ModuleSpec> &modules,
                      std::vector<Group> &out);

/// The formats of PAPERS.md §4.
struct Formats {
  /// Every tensor of a group that is not chosen: FP(6, 9, 0), 16 bits.
  rt::FloatFormat high{6, 9, 0};
  /// P and Y of a chosen group: FP(4, 3, 4), 8 bits.
  rt::FloatFormat lowPY{4, 3, 4};
  /// GY of a chosen group: FP(5, 2, 0), 8 bits.
  rt::FloatFormat lowGY{5, 2, 0};
  /// GP of a chosen group: stays FP(6, 9, 0).
  rt::FloatFormat lowGP{6, 9, 0};
};

/// The order in which groups are considered (see the file comment).
enum class Order { Largest, Smallest, Random, Scored };

/// "largest", "smallest", "random" or "scored".
const char *toString(Order order);

/// Parses the names toString(Order) produces.
rt::Status parseOrder(const std::string &name, Order &out);

struct Options {
  Order order = Order::Largest;
  /// Seeds Order::Random.
  uint64_t seed = 0;
  /// Order::Scored: one score per group, indexed by group id; no NaN.
  std::vector<double> scores;
  Formats formats;
};

/// The result of a search.
struct Assignment {
  /// Group ids in the order considered; the chosen groups are its first
  /// numLow entries.
  std::vector<int> order;
  /// Per group id: whether it is chosen (low precision).
  std::vector<bool> low;
  int numLow = 0;
  /// The r used; for assignByBudget the covered ratio of its choice, with
  /// which assignByRatio makes the same choice.
  double ratio = 0;
  /// The sum of ratio[g] over the chosen groups.
  double covered = 0;
  /// Footprints over all tensors: everything high, and this assignment.
  int64_t bitsBefore = 0;
  int64_t bitsAfter = 0;
  /// The same per group id.
  std::vector<int64_t> groupBitsBefore;
  std::vector<int64_t> groupBitsAfter;
  /// The formats the assignment chose from.
  Formats formats;

  /// The format of a tensor of class `cls` in group `group`.
  rt::FloatFormat formatOf(int group, TensorClass cls) const;
  int64_t bytesBefore() const;
  int64_t bytesAfter() const;
};

/// Bits per element of `format`: 1 + e + m.
int64_t formatBits(const rt::FloatFormat &format);

/// Bytes holding `bits` bits: bits / 8 rounded up.
int64_t bitsToBytes(int64_t bits);

/// One step of the splitmix64 generator behind Order::Random: advances
/// `state` and returns the next output.
uint64_t splitMix64(uint64_t &state);

/// The group ids in the order `options` asks for, replacing `out`. Fails on
/// groups assignByRatio rejects and on missing or NaN scores for Scored.
rt::Status orderGroups(const std::vector<Group> &groups, const Options &options,
                       std::vector<int> &out);

/// The greedy assignment for ratio `r` in [0, 1], replacing `out`. Fails on
/// an r outside [0, 1], formats that do not verify, and groups that are
/// missing, not numbered 0.. in order, hold a tensor without elements, or
/// whose elements do not add up to Group::elements.
rt::Status assignByRatio(const std::vector<Group> &groups, double r,
                         const Options &options, Assignment &out);

/// The assignment for the smallest prefix of the order whose footprint is
/// at most `budgetBytes`, replacing `out`. Fails as assignByRatio does, on a
/// negative budget, and when no prefix fits; the error states the budget, the
/// smallest footprint the search reaches and the all-high footprint.
rt::Status assignByBudget(const std::vector<Group> &groups, int64_t budgetBytes,
                          const Options &options, Assignment &out);

/// Parses a byte count: a non-negative number of bytes, or one with a
/// KiB, MiB, GiB (or K, M, G) suffix, binary units ("40MiB", "6.5M",
/// "1048576", "512B"); fractional bytes are truncated. Fails, quoting
/// `text`, on anything else and on counts of 9e18 bytes or more.
rt::Status parseByteCount(const std::string &text, int64_t &out);

/// Ours, beyond the paper: scores for Order::Scored from a profiling run
/// in which every group was low. `savedBits[g]` is what storing group g low
/// saves (Assignment::groupBitsBefore - groupBitsAfter of an all-low
/// assignment); `risk[g]` the largest mean overflow ratio of its P and Y
/// tensors in the profile. The score is savedBits / (1 + risk / tolerance):
/// groups that do not overflow are ranked by what they save, as the paper's
/// greedy does, and a group overflowing at `tolerance` counts half. Fails
/// on mismatched sizes, negative or NaN risks and a tolerance that is not
/// positive.
rt::Status profiledScores(const std::vector<int64_t> &savedBits,
                          const std::vector<double> &risk, double tolerance,
                          std::vector<double> &out);

} // namespace qtrain::search

#endif // QTRAIN_SEARCH_ASSIGNMENT_H
