//===- Assignment.cpp - Mixed-precision assignment under a budget --------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Search/Assignment.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <utility>

using qtrain::rt::FloatFormat;
using qtrain::rt::Status;

namespace qtrain::search {

namespace {

/// No format is wider than 32 bits (1 + 8 + 23), so footprints of up to this
/// many elements fit in int64_t bits.
constexpr int64_t kMaxElements = std::numeric_limits<int64_t>::max() / 32;

bool startsGroup(ModuleKind kind) {
  return kind == ModuleKind::Input || kind == ModuleKind::Conv ||
         kind == ModuleKind::Linear;
}

/// The format of a tensor of class `cls` in a group that is (not) chosen.
FloatFormat formatFor(const Formats &formats, bool low, TensorClass cls) {
  if (!low)
    return formats.high;
  switch (cls) {
  case TensorClass::P:
  case TensorClass::Y:
    return formats.lowPY;
  case TensorClass::GY:
    return formats.lowGY;
  case TensorClass::GP:
    return formats.lowGP;
  }
  return formats.high;
}

int64_t groupBits(const Group &group, const Formats &formats, bool low) {
  int64_t bits = 0;
  for (const TensorRef &tensor : group.tensors)
    bits += tensor.elements * formatBits(formatFor(formats, low, tensor.cls));
  return bits;
}

Status verifyFormats(const Formats &formats) {
  const std::pair<const char *, const FloatFormat *> named[] = {
      {"high", &formats.high},
      {"low P/Y", &formats.lowPY},
      {"low GY", &formats.lowGY},
      {"low GP", &formats.lowGP}};
  for (const auto &[name, format] : named) {
    Status status = format->verify();
    if (status.failed())
      return Status::error(std::string(name) + " format " + format->toString() +
                           " is invalid: " + status.message());
  }
  return Status::success();
}

/// Checks what assignByRatio relies on; sets `total` to the sum of sizes.
Status verifyGroups(const std::vector<Group> &groups, int64_t &total) {
  if (groups.empty())
    return Status::error("there are no groups to assign");
  total = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    const Group &group = groups[i];
    std::string where = "group " + std::to_string(i);
    if (group.id != static_cast<int>(i))
      return Status::error(where + " has id " + std::to_string(group.id) +
                           "; groups must be numbered 0, 1, ... in order");
    if (group.tensors.empty())
      return Status::error(where + " has no tensors");
    int64_t sum = 0;
    for (const TensorRef &tensor : group.tensors) {
      if (tensor.elements <= 0 || tensor.elements > kMaxElements)
        return Status::error(where + " holds a " + toString(tensor.cls) +
                             " tensor of module " +
                             std::to_string(tensor.module) + " with " +
                             std::to_string(tensor.elements) + " elements");
      sum += tensor.elements;
      if (sum > kMaxElements)
        return Status::error(where + " has too many elements");
    }
    if (sum != group.elements)
      return Status::error(
          where + " says it has " + std::to_string(group.elements) +
          " elements but its tensors have " + std::to_string(sum));
    total += sum;
    if (total > kMaxElements)
      return Status::error("the groups have too many elements");
  }
  return Status::success();
}

/// Draws uniformly from [0, bound) for bound >= 1, rejecting the outputs
/// that would bias the remainder.
uint64_t uniformBelow(uint64_t &state, uint64_t bound) {
  // 2^64 mod bound: outputs below it are the incomplete last block.
  uint64_t threshold = (0 - bound) % bound;
  while (true) {
    uint64_t x = splitMix64(state);
    if (x >= threshold)
      return x % bound;
  }
}

/// Fills `out` with the choice of the first `numLow` groups of `order`.
void fill(const std::vector<Group> &groups, std::vector<int> order, int numLow,
          double ratio, int64_t total, const Formats &formats,
          Assignment &out) {
  Assignment result;
  size_t n = groups.size();
  result.order = std::move(order);
  result.low.assign(n, false);
  result.numLow = numLow;
  result.ratio = ratio;
  result.formats = formats;
  int64_t chosen = 0;
  for (int k = 0; k < numLow; ++k) {
    int id = result.order[k];
    result.low[id] = true;
    chosen += groups[id].elements;
  }
  result.covered = static_cast<double>(chosen) / static_cast<double>(total);
  result.groupBitsBefore.resize(n);
  result.groupBitsAfter.resize(n);
  for (size_t id = 0; id < n; ++id) {
    result.groupBitsBefore[id] = groupBits(groups[id], formats, false);
    result.groupBitsAfter[id] = groupBits(groups[id], formats, result.low[id]);
    result.bitsBefore += result.groupBitsBefore[id];
    result.bitsAfter += result.groupBitsAfter[id];
  }
  out = std::move(result);
}

} // namespace

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

const char *toString(TensorClass cls) {
  switch (cls) {
  case TensorClass::P:
    return "P";
  case TensorClass::Y:
    return "Y";
  case TensorClass::GY:
    return "GY";
  case TensorClass::GP:
    return "GP";
  }
  return "?";
}

const char *toString(Order order) {
  switch (order) {
  case Order::Largest:
    return "largest";
  case Order::Smallest:
    return "smallest";
  case Order::Random:
    return "random";
  case Order::Scored:
    return "scored";
  }
  return "?";
}

Status parseOrder(const std::string &name, Order &out) {
  for (Order order :
       {Order::Largest, Order::Smallest, Order::Random, Order::Scored}) {
    if (name == toString(order)) {
      out = order;
      return Status::success();
    }
  }
  return Status::error("unknown search order '" + name +
                       "'; expected largest, smallest, random or scored");
}

//===----------------------------------------------------------------------===//
// Groups
//===----------------------------------------------------------------------===//

Status formGroups(const std::vector<ModuleSpec> &modules,
                  std::vector<Group> &out) {
  if (modules.empty())
    return Status::error("there are no modules to group");
  if (!startsGroup(modules.front().kind))
    return Status::error("module '" + modules.front().name +
                         "' comes first but does not start a group (only "
                         "input, conv and linear modules do)");

  // The group of every module, by the kinds alone.
  std::vector<int> groupOf(modules.size());
  int numGroups = 0;
  for (size_t i = 0; i < modules.size(); ++i) {
    const ModuleSpec &module = modules[i];
    std::string where = "module '" + module.name + "'";
    if (module.predecessor < -1 || module.predecessor >= static_cast<int>(i))
      return Status::error(where + " has predecessor " +
                           std::to_string(module.predecessor) +
                           "; it must be -1 or an earlier module (below " +
                           std::to_string(i) + ")");
    if (module.outputElements <= 0 || module.outputElements > kMaxElements)
      return Status::error(where + " has " +
                           std::to_string(module.outputElements) +
                           " output elements");
    for (const ParamSpec &param : module.params)
      if (param.elements <= 0 || param.elements > kMaxElements)
        return Status::error(where + " has parameter '" + param.name +
                             "' with " + std::to_string(param.elements) +
                             " elements");
    if (startsGroup(module.kind))
      ++numGroups;
    groupOf[i] = numGroups - 1;
  }

  std::vector<Group> groups(numGroups);
  for (int id = 0; id < numGroups; ++id)
    groups[id].id = id;
  auto add = [&](int group, TensorRef tensor) -> Status {
    Group &g = groups[group];
    g.elements += tensor.elements;
    if (g.elements > kMaxElements)
      return Status::error("group " + std::to_string(group) +
                           " has too many elements");
    g.tensors.push_back(tensor);
    return Status::success();
  };
  for (size_t i = 0; i < modules.size(); ++i) {
    const ModuleSpec &module = modules[i];
    int m = static_cast<int>(i);
    for (TensorClass cls : {TensorClass::Y, TensorClass::GY}) {
      Status status = add(groupOf[i], {m, cls, -1, module.outputElements});
      if (status.failed())
        return status;
    }
    // A parameter belongs with the tensor it is applied to: the
    // predecessor's output.
    int paramGroup =
        module.predecessor < 0 ? groupOf[i] : groupOf[module.predecessor];
    for (size_t p = 0; p < module.params.size(); ++p) {
      for (TensorClass cls : {TensorClass::P, TensorClass::GP}) {
        Status status = add(paramGroup, {m, cls, static_cast<int>(p),
                                         module.params[p].elements});
        if (status.failed())
          return status;
      }
    }
  }
  out = std::move(groups);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Memory model
//===----------------------------------------------------------------------===//

int64_t formatBits(const FloatFormat &format) {
  return 1 + static_cast<int64_t>(format.exponentBits) + format.mantissaBits;
}

int64_t bitsToBytes(int64_t bits) { return bits / 8 + (bits % 8 != 0); }

FloatFormat Assignment::formatOf(int group, TensorClass cls) const {
  bool isLow =
      group >= 0 && static_cast<size_t>(group) < low.size() && low[group];
  return formatFor(formats, isLow, cls);
}

int64_t Assignment::bytesBefore() const { return bitsToBytes(bitsBefore); }

int64_t Assignment::bytesAfter() const { return bitsToBytes(bitsAfter); }

//===----------------------------------------------------------------------===//
// Orders
//===----------------------------------------------------------------------===//

uint64_t splitMix64(uint64_t &state) {
  state += 0x9e3779b97f4a7c15ULL;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Status orderGroups(const std::vector<Group> &groups, const Options &options,
                   std::vector<int> &out) {
  int64_t total = 0;
  Status status = verifyGroups(groups, total);
  if (status.failed())
    return status;

  size_t n = groups.size();
  std::vector<int> order(n);
  for (size_t id = 0; id < n; ++id)
    order[id] = static_cast<int>(id);

  // Ratios share the denominator, so comparing element counts orders them
  // exactly.
  auto size = [&](int id) { return groups[id].elements; };
  switch (options.order) {
  case Order::Largest:
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return size(a) != size(b) ? size(a) > size(b) : a < b;
    });
    break;
  case Order::Smallest:
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return size(a) != size(b) ? size(a) < size(b) : a < b;
    });
    break;
  case Order::Random: {
    // Fisher-Yates with our own generator: std::shuffle and the standard
    // distributions differ between standard libraries.
    uint64_t state = options.seed;
    for (size_t i = n - 1; i > 0; --i) {
      size_t j = static_cast<size_t>(uniformBelow(state, i + 1));
      std::swap(order[i], order[j]);
    }
    break;
  }
  case Order::Scored: {
    const std::vector<double> &scores = options.scores;
    if (scores.size() != n)
      return Status::error("the scored order needs one score per group: " +
                           std::to_string(scores.size()) + " scores for " +
                           std::to_string(n) + " groups");
    for (size_t id = 0; id < n; ++id)
      if (std::isnan(scores[id]))
        return Status::error("the score of group " + std::to_string(id) +
                             " is NaN");
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return scores[a] != scores[b] ? scores[a] > scores[b] : a < b;
    });
    break;
  }
  }
  out = std::move(order);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Assignment
//===----------------------------------------------------------------------===//

Status assignByRatio(const std::vector<Group> &groups, double r,
                     const Options &options, Assignment &out) {
  if (!(r >= 0.0 && r <= 1.0))
    return Status::error("ratio " + std::to_string(r) + " is outside [0, 1]");
  Status status = verifyFormats(options.formats);
  if (status.failed())
    return status;
  int64_t total = 0;
  status = verifyGroups(groups, total);
  if (status.failed())
    return status;
  std::vector<int> order;
  status = orderGroups(groups, options, order);
  if (status.failed())
    return status;

  // acc is (chosen elements) / total: the running sum of ratio[g] without
  // its rounding error, so that it reaches 1 exactly with the last group.
  int n = static_cast<int>(groups.size());
  int numLow = 0;
  int64_t chosen = 0;
  while (numLow < n &&
         static_cast<double>(chosen) / static_cast<double>(total) < r)
    chosen += groups[order[numLow++]].elements;
  fill(groups, std::move(order), numLow, r, total, options.formats, out);
  return Status::success();
}

Status assignByBudget(const std::vector<Group> &groups, int64_t budgetBytes,
                      const Options &options, Assignment &out) {
  if (budgetBytes < 0)
    return Status::error("budget " + std::to_string(budgetBytes) +
                         " bytes is negative");
  Status status = verifyFormats(options.formats);
  if (status.failed())
    return status;
  int64_t total = 0;
  status = verifyGroups(groups, total);
  if (status.failed())
    return status;
  std::vector<int> order;
  status = orderGroups(groups, options, order);
  if (status.failed())
    return status;

  // The footprint of every prefix of the order; the first that fits wins.
  // Low formats are normally narrower, but nothing requires it, so the
  // footprint need not shrink with k.
  const Formats &formats = options.formats;
  int n = static_cast<int>(groups.size());
  int64_t bits = 0;
  for (const Group &group : groups)
    bits += groupBits(group, formats, false);
  int64_t allHighBytes = bitsToBytes(bits);
  int64_t chosen = 0;
  int smallestK = 0;
  int64_t smallestBytes = allHighBytes;
  for (int k = 0;; ++k) {
    int64_t bytes = bitsToBytes(bits);
    if (bytes <= budgetBytes) {
      double ratio = static_cast<double>(chosen) / static_cast<double>(total);
      fill(groups, std::move(order), k, ratio, total, formats, out);
      return Status::success();
    }
    if (bytes < smallestBytes) {
      smallestBytes = bytes;
      smallestK = k;
    }
    if (k == n)
      break;
    const Group &next = groups[order[k]];
    bits += groupBits(next, formats, true) - groupBits(next, formats, false);
    chosen += next.elements;
  }
  std::string reached =
      smallestK == n   ? std::string("all groups low")
      : smallestK == 0 ? std::string("all groups high")
                       : "the first " + std::to_string(smallestK) + " of " +
                             std::to_string(n) + " groups of the " +
                             toString(options.order) + " order low";
  return Status::error(
      "budget " + std::to_string(budgetBytes) +
      " bytes is below the smallest footprint this search reaches, " +
      std::to_string(smallestBytes) + " bytes (" + reached +
      "; all high: " + std::to_string(allHighBytes) + " bytes)");
}

Status profiledScores(const std::vector<int64_t> &savedBits,
                      const std::vector<double> &risk, double tolerance,
                      std::vector<double> &out) {
  if (savedBits.size() != risk.size())
    return Status::error(
        "profiled scores: " + std::to_string(savedBits.size()) +
        " groups but " + std::to_string(risk.size()) + " risks");
  if (!(tolerance > 0.0))
    return Status::error("profiled scores: the tolerance must be positive");
  std::vector<double> scores;
  for (size_t g = 0; g < risk.size(); ++g) {
    if (!(risk[g] >= 0.0))
      return Status::error("profiled scores: group " + std::to_string(g) +
                           " has an invalid risk " + std::to_string(risk[g]));
    scores.push_back(double(savedBits[g]) / (1.0 + risk[g] / tolerance));
  }
  out = std::move(scores);
  return Status::success();
}

Status parseByteCount(const std::string &text, int64_t &out) {
  auto bad = [&] {
    return Status::error("'" + text +
                         "' is not a byte count (e.g. 1048576, 512KiB, 4MiB)");
  };
  size_t begin = text.find_first_not_of(" \t");
  size_t end = text.find_last_not_of(" \t");
  if (begin == std::string::npos)
    return bad();
  std::string number = text.substr(begin, end - begin + 1);
  double unit = 1;
  const std::pair<const char *, double> suffixes[] = {
      {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1 << 30},
      {"M", 1 << 20},   {"K", 1 << 10},   {"B", 1}};
  for (const auto &[suffix, scale] : suffixes) {
    size_t length = std::char_traits<char>::length(suffix);
    if (number.size() > length &&
        number.compare(number.size() - length, length, suffix) == 0) {
      number.resize(number.size() - length);
      unit = scale;
      break;
    }
  }
  while (!number.empty() && (number.back() == ' ' || number.back() == '\t'))
    number.pop_back();
  // A plain decimal number: no sign, hex, inf or nan.
  if (number.empty() ||
      (!std::isdigit(static_cast<unsigned char>(number[0])) &&
       number[0] != '.') ||
      number.find_first_of("xXpP") != std::string::npos)
    return bad();
  char *rest = nullptr;
  double value = std::strtod(number.c_str(), &rest) * unit;
  if (rest != number.c_str() + number.size() || !(value >= 0) ||
      value >= 9.0e18)
    return bad();
  out = static_cast<int64_t>(value);
  return Status::success();
}

} // namespace qtrain::search
