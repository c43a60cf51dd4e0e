//===- Selection.h - Which kernel variant each site runs --------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The runtime selects the variant (docs/bundle.md, "Selection"): before
/// every step it evaluates the schedules and writes, for every site, the
/// index of the variant with the step's (bits, grad_bits) into the slot
/// array the compiled step dispatches through.
///
/// Under a CPT-style schedule every site runs at the same (bits,
/// grad_bits) in a step, so a Selection precomputes, for every step class
/// (bits, grad_bits) in [0, 16]^2 that every site has a variant for, the
/// row of slot values of all sites, and a 17 x 17 table from the class to
/// its row. A step then costs one table load and an O(sites) copy of the
/// row into the slot array; no search, no recompilation. Under a learned
/// (LDP) schedule each site runs at its own bits, so the Selection also
/// holds each site's own table from (bits, grad_bits) to its variant.
///
/// The schedules are checked before the first step (validateSchedule()):
/// every class they can produce must have a row.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_SELECTION_H
#define QTRAIN_RUNTIME_SELECTION_H

#include "qtrain/runtime/ErrorKind.h"
#include "qtrain/runtime/Manifest.h"
#include "qtrain/runtime/Schedule.h"
#include "qtrain/runtime/Status.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qtrain::rt {

/// Checks, before any step, that the bundle has a variant for every
/// (bits, grad_bits) the schedules can produce: Static gives its bits;
/// Cyclic every integer in [min, max]; both schedules combine (all pairs).
/// Learned (LDP) schedules: every bits in [min, max] at every site with a
/// learnable precision; only for bundles compiled with that schedule (and
/// such bundles only with it). On a missing variant
/// (MissingVariant) the message reads
///   schedule 'cpt:3:8' needs 3-bit forward / 8-bit backward, but site
///   'site1' has no such variant (it has 4/8 5/8 6/8 7/8 8/8)
/// with `scheduleText` quoted as given.
Status validateSchedule(const Manifest &manifest, const Schedule &schedule,
                        std::string_view scheduleText,
                        const Schedule &gradSchedule,
                        std::string_view gradScheduleText,
                        ErrorKind *kind = nullptr);

/// The index of `site`'s variant with (bits, gradBits), or -1.
int32_t findVariant(const SiteSpec &site, int bits, int gradBits);

/// The variants of `site`, sorted, for messages: "3/8 4/8 ... fp32/fp32".
std::string listVariants(const SiteSpec &site);

/// The selection tables of one bundle's sites (see the file comment).
class Selection {
public:
  /// The bits a schedule can produce: 0 (fp32) to kMaxScheduleBits.
  static constexpr int kNumBitValues = kMaxScheduleBits + 1;

  /// No sites, no rows.
  Selection();
  /// The tables of `sites`; with `perSite` (learned schedules) also each
  /// site's own table.
  Selection(const std::vector<SiteSpec> &sites, bool perSite);

  /// The row of step class (bits, gradBits), or -1 when some site has no
  /// variant for it or a bitwidth is outside [0, kMaxScheduleBits].
  int32_t findRow(int bits, int gradBits) const;
  /// Writes the slot values of row `row` (one per site) to `slots`.
  void copyRow(int32_t row, int32_t *slots) const;
  /// The BitOps of a step of row `row`'s class: the sum over sites of
  /// bitOps(macs, bits, grad_bits) (Cost.h).
  double getRowBitOps(int32_t row) const { return rowBitOps[size_t(row)]; }
  /// How many step classes have a row.
  size_t getNumRows() const { return rowBitOps.size(); }

  /// The variant of site `site` for (bits, gradBits) from its own table,
  /// or -1 when it has none or a bitwidth is outside [0,
  /// kMaxScheduleBits]. Only with `perSite`.
  int32_t getSiteVariant(size_t site, int bits, int gradBits) const;

private:
  static bool inRange(int bits, int gradBits) {
    return bits >= 0 && bits < kNumBitValues && gradBits >= 0 &&
           gradBits < kNumBitValues;
  }
  static size_t classIndex(int bits, int gradBits) {
    return size_t(bits) * kNumBitValues + size_t(gradBits);
  }

  size_t numSites = 0;
  /// classRow[bits * 17 + gradBits]: the row for that step class, or -1.
  std::array<int32_t, kNumBitValues * kNumBitValues> classRow;
  /// numSites slot values per row.
  std::vector<int32_t> rows;
  std::vector<double> rowBitOps;
  /// perSite: siteVariant[site * 17 * 17 + bits * 17 + gradBits], the
  /// site's variant or -1.
  std::vector<int32_t> siteVariant;
};

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_SELECTION_H
