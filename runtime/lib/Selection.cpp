//===- Selection.cpp - Which kernel variant each site runs ----------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Selection.h"

#include "qtrain/runtime/Cost.h"

#include <algorithm>
#include <utility>

using namespace qtrain::rt;

namespace {

std::string bitsName(int bits) {
  return bits == 0 ? "fp32" : std::to_string(bits);
}

std::string bitsPhrase(int bits) {
  return bits == 0 ? "fp32" : std::to_string(bits) + "-bit";
}

/// The bits a schedule can produce, ascending.
std::vector<int> reachableBits(const Schedule &schedule) {
  if (schedule.kind == ScheduleKind::Static)
    return {schedule.bits};
  std::vector<int> bits;
  for (int b = schedule.minBits; b <= schedule.maxBits; ++b)
    bits.push_back(b);
  return bits;
}

} // namespace

Status qtrain::rt::validateSchedule(const Manifest &manifest,
                                    const Schedule &schedule,
                                    std::string_view scheduleText,
                                    const Schedule &gradSchedule,
                                    std::string_view gradScheduleText,
                                    ErrorKind *kind) {
  if (gradSchedule.kind == ScheduleKind::Learned)
    return failWith(kind, ErrorKind::Unsupported,
                    "grad schedule '" + std::string(gradScheduleText) +
                        "': backward precisions are not learned");
  // fp8 errors are rounded in the step itself, not by the kernel variants
  // the backward bits select: a variant with other backward bits (the fp32
  // one, say) would still read e5m2 errors, so only 8 serves.
  if (manifest.gradFormat == "e5m2")
    for (int gradBits : reachableBits(gradSchedule))
      if (gradBits != 8)
        return failWith(kind, ErrorKind::MissingVariant,
                        "backward schedule '" + std::string(gradScheduleText) +
                            "' needs " + bitsPhrase(gradBits) +
                            " backward, but this bundle's errors are fp8 "
                            "e5m2 (--grad-format=e5m2): its backward is 8 "
                            "bits only");
  // LDP: a bundle that learns its precisions computes each layer's bits
  // inside the step from its parameter p and the compiled bounds, so it is
  // served by exactly that learned schedule, and only such a bundle is.
  bool learnedBundle = learnsPrecisions(manifest);
  bool learned = schedule.kind == ScheduleKind::Learned;
  if (learned != learnedBundle) {
    if (learnedBundle)
      return failWith(kind, ErrorKind::InvalidArgument,
                      "schedule '" + std::string(scheduleText) +
                          "': this bundle learns its precisions per layer "
                          "(LDP) and is served by its schedule '" +
                          manifest.schedule + "' only");
    return failWith(kind, ErrorKind::Unsupported,
                    "schedule '" + std::string(scheduleText) +
                        "' learns the bits per layer, but this bundle has no "
                        "learnable precisions (compile it with "
                        "--policy=ldp)");
  }
  if (learned) {
    Schedule compiled;
    if (parseSchedule(manifest.schedule, compiled).failed() ||
        compiled.kind != ScheduleKind::Learned ||
        compiled.minBits != schedule.minBits ||
        compiled.maxBits != schedule.maxBits)
      return failWith(kind, ErrorKind::InvalidArgument,
                      "schedule '" + std::string(scheduleText) +
                          "': the bundle's steps map p to bits with '" +
                          manifest.schedule + "'; use that schedule");
    for (const SiteSpec &site : manifest.sites)
      if (site.precisionParameter < 0 && site.macs > 0)
        return failWith(kind, ErrorKind::InvalidArgument,
                        "site '" + site.name +
                            "' has no learnable precision in an LDP bundle");
  }
  for (int bits : reachableBits(schedule))
    for (int gradBits : reachableBits(gradSchedule))
      for (const SiteSpec &site : manifest.sites)
        if ((!learned || site.precisionParameter >= 0) &&
            findVariant(site, bits, gradBits) < 0) {
          // Name the schedule at fault: the backward one when the site
          // serves these forward bits with other backward bits.
          bool forwardServed =
              std::any_of(site.variants.begin(), site.variants.end(),
                          [&](const VariantSpec &v) { return v.bits == bits; });
          std::string who =
              forwardServed
                  ? "backward schedule '" + std::string(gradScheduleText) + "'"
                  : "schedule '" + std::string(scheduleText) + "'";
          return failWith(kind, ErrorKind::MissingVariant,
                          who + " needs " + bitsPhrase(bits) + " forward / " +
                              bitsPhrase(gradBits) + " backward, but site '" +
                              site.name + "' has no such variant (it has " +
                              listVariants(site) + ")");
        }
  return succeed(kind);
}

int32_t qtrain::rt::findVariant(const SiteSpec &site, int bits, int gradBits) {
  for (size_t j = 0; j < site.variants.size(); ++j)
    if (site.variants[j].bits == bits && site.variants[j].gradBits == gradBits)
      return int32_t(j);
  return -1;
}

std::string qtrain::rt::listVariants(const SiteSpec &site) {
  std::vector<std::pair<int, int>> pairs;
  for (const VariantSpec &v : site.variants)
    pairs.emplace_back(v.bits, v.gradBits);
  std::sort(pairs.begin(), pairs.end(), [](auto a, auto b) {
    // fp32 (0) last: it is the widest.
    auto key = [](int bits) { return bits == 0 ? 1000 : bits; };
    return std::make_pair(key(a.first), key(a.second)) <
           std::make_pair(key(b.first), key(b.second));
  });
  std::string text;
  for (auto [bits, gradBits] : pairs) {
    if (!text.empty())
      text += ' ';
    text += bitsName(bits) + "/" + bitsName(gradBits);
  }
  return text;
}

Selection::Selection() { classRow.fill(-1); }

Selection::Selection(const std::vector<SiteSpec> &sites, bool perSite)
    : numSites(sites.size()) {
  classRow.fill(-1);
  std::vector<int32_t> row(numSites);
  for (int bits = 0; bits < kNumBitValues; ++bits) {
    for (int gradBits = 0; gradBits < kNumBitValues; ++gradBits) {
      double bitOpsSum = 0;
      bool servable = true;
      for (size_t i = 0; servable && i < numSites; ++i) {
        row[i] = findVariant(sites[i], bits, gradBits);
        servable = row[i] >= 0;
        bitOpsSum += bitOps(double(sites[i].macs), bits, gradBits);
      }
      if (!servable)
        continue;
      classRow[classIndex(bits, gradBits)] = int32_t(rowBitOps.size());
      rows.insert(rows.end(), row.begin(), row.end());
      rowBitOps.push_back(bitOpsSum);
    }
  }
  if (!perSite)
    return;
  siteVariant.assign(numSites * kNumBitValues * kNumBitValues, 0);
  for (size_t i = 0; i < numSites; ++i)
    for (int bits = 0; bits < kNumBitValues; ++bits)
      for (int gradBits = 0; gradBits < kNumBitValues; ++gradBits)
        siteVariant[i * kNumBitValues * kNumBitValues +
                    classIndex(bits, gradBits)] =
            findVariant(sites[i], bits, gradBits);
}

int32_t Selection::findRow(int bits, int gradBits) const {
  return inRange(bits, gradBits) ? classRow[classIndex(bits, gradBits)] : -1;
}

void Selection::copyRow(int32_t row, int32_t *slots) const {
  // A bundle without sites (float formats) has no rows: rows.data() may be
  // null, and memcpy from null is undefined even for zero bytes (found by
  // the sanitizer run of the whole suite).
  if (numSites > 0)
    std::copy_n(rows.data() + size_t(row) * numSites, numSites, slots);
}

int32_t Selection::getSiteVariant(size_t site, int bits, int gradBits) const {
  if (!inRange(bits, gradBits))
    return -1;
  return siteVariant[site * kNumBitValues * kNumBitValues +
                     classIndex(bits, gradBits)];
}
