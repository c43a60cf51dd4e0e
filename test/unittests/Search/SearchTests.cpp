//===- SearchTests.cpp - Tests of the precision search -------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Search/Assignment.h"

#include "qtrain/runtime/FloatFormat.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace qtrain::search;
using qtrain::rt::FloatFormat;
using qtrain::rt::Status;

namespace {

const FloatFormat kFp690{6, 9, 0};
const FloatFormat kFp434{4, 3, 4};
const FloatFormat kFp520{5, 2, 0};

/// Groups numbered 0.. with one Y tensor of the given element counts.
std::vector<Group> groupsOfSizes(const std::vector<int64_t> &sizes) {
  std::vector<Group> groups;
  for (size_t i = 0; i < sizes.size(); ++i) {
    Group group;
    group.id = static_cast<int>(i);
    group.tensors.push_back(
        {static_cast<int>(i), TensorClass::Y, -1, sizes[i]});
    group.elements = sizes[i];
    groups.push_back(group);
  }
  return groups;
}

/// The chosen group ids, ascending.
std::vector<int> chosen(const Assignment &assignment) {
  std::vector<int> ids;
  for (size_t id = 0; id < assignment.low.size(); ++id)
    if (assignment.low[id])
      ids.push_back(static_cast<int>(id));
  return ids;
}

std::vector<int> chosenAt(const std::vector<Group> &groups, double r,
                          const Options &options = {}) {
  Assignment assignment;
  Status status = assignByRatio(groups, r, options, assignment);
  EXPECT_TRUE(status.isOk()) << status.message();
  return chosen(assignment);
}

std::vector<int> orderOf(const std::vector<Group> &groups,
                         const Options &options) {
  std::vector<int> order;
  Status status = orderGroups(groups, options, order);
  EXPECT_TRUE(status.isOk()) << status.message();
  return order;
}

/// "conv1.Y", "conv1.w.P", ...: a readable name of a tensor.
std::string nameOf(const std::vector<ModuleSpec> &modules,
                   const TensorRef &tensor) {
  const ModuleSpec &module = modules[tensor.module];
  std::string name = module.name + ".";
  if (tensor.param >= 0)
    name += module.params[tensor.param].name + ".";
  return name + toString(tensor.cls);
}

std::vector<std::string> namesOf(const std::vector<ModuleSpec> &modules,
                                 const Group &group) {
  std::vector<std::string> names;
  for (const TensorRef &tensor : group.tensors)
    names.push_back(nameOf(modules, tensor));
  return names;
}

/// A LeNet-like chain at batch 2: input, conv1, relu, pool, conv2, relu,
/// pool, linear1, relu, linear2.
std::vector<ModuleSpec> leNet() {
  return {
      {"input", ModuleKind::Input, -1, 2 * 1 * 28 * 28, {}},
      {"conv1",
       ModuleKind::Conv,
       0,
       2 * 6 * 24 * 24,
       {{"w", 6 * 1 * 5 * 5}, {"b", 6}}},
      {"relu1", ModuleKind::Other, 1, 2 * 6 * 24 * 24, {}},
      {"pool1", ModuleKind::Other, 2, 2 * 6 * 12 * 12, {}},
      {"conv2",
       ModuleKind::Conv,
       3,
       2 * 16 * 8 * 8,
       {{"w", 16 * 6 * 5 * 5}, {"b", 16}}},
      {"relu2", ModuleKind::Other, 4, 2 * 16 * 8 * 8, {}},
      {"pool2", ModuleKind::Other, 5, 2 * 16 * 4 * 4, {}},
      {"linear1",
       ModuleKind::Linear,
       6,
       2 * 120,
       {{"w", 120 * 256}, {"b", 120}}},
      {"relu3", ModuleKind::Other, 7, 2 * 120, {}},
      {"linear2", ModuleKind::Linear, 8, 2 * 10, {{"w", 10 * 120}, {"b", 10}}},
  };
}

//===----------------------------------------------------------------------===//
// Formats and the memory model
//===----------------------------------------------------------------------===//

TEST(SearchFormats, BitsPerElement) {
  EXPECT_EQ(formatBits(kFp690), 16);
  EXPECT_EQ(formatBits(kFp434), 8);
  EXPECT_EQ(formatBits(kFp520), 8);
  EXPECT_EQ(formatBits(FloatFormat::fp32()), 32);
}

TEST(SearchFormats, Defaults) {
  Formats formats;
  EXPECT_EQ(formats.high, kFp690);
  EXPECT_EQ(formats.lowPY, kFp434);
  EXPECT_EQ(formats.lowGY, kFp520);
  EXPECT_EQ(formats.lowGP, kFp690);
}

TEST(SearchFormats, Thresholds) {
  EXPECT_EQ(kFp434.overflowThreshold(), 31.0);
  EXPECT_EQ(kFp434.underflowThreshold(), std::ldexp(1.0, -14));
  EXPECT_EQ(kFp520.overflowThreshold(), 122880.0);
  EXPECT_EQ(kFp520.underflowThreshold(), std::ldexp(1.0, -17));
}

TEST(SearchFormats, BitsToBytes) {
  EXPECT_EQ(bitsToBytes(0), 0);
  EXPECT_EQ(bitsToBytes(1), 1);
  EXPECT_EQ(bitsToBytes(8), 1);
  EXPECT_EQ(bitsToBytes(9), 2);
  EXPECT_EQ(bitsToBytes(160), 20);
}

//===----------------------------------------------------------------------===//
// Groups
//===----------------------------------------------------------------------===//

TEST(SearchGroups, LeNetMembership) {
  std::vector<ModuleSpec> modules = leNet();
  std::vector<Group> groups;
  Status status = formGroups(modules, groups);
  ASSERT_TRUE(status.isOk()) << status.message();
  ASSERT_EQ(groups.size(), 5u);

  using Names = std::vector<std::string>;
  // A parameter goes to its predecessor's group: conv1's to the input's.
  EXPECT_EQ(namesOf(modules, groups[0]),
            (Names{"input.Y", "input.GY", "conv1.w.P", "conv1.w.GP",
                   "conv1.b.P", "conv1.b.GP"}));
  EXPECT_EQ(namesOf(modules, groups[1]),
            (Names{"conv1.Y", "conv1.GY", "relu1.Y", "relu1.GY", "pool1.Y",
                   "pool1.GY", "conv2.w.P", "conv2.w.GP", "conv2.b.P",
                   "conv2.b.GP"}));
  EXPECT_EQ(namesOf(modules, groups[2]),
            (Names{"conv2.Y", "conv2.GY", "relu2.Y", "relu2.GY", "pool2.Y",
                   "pool2.GY", "linear1.w.P", "linear1.w.GP", "linear1.b.P",
                   "linear1.b.GP"}));
  EXPECT_EQ(
      namesOf(modules, groups[3]),
      (Names{"linear1.Y", "linear1.GY", "relu3.Y", "relu3.GY", "linear2.w.P",
             "linear2.w.GP", "linear2.b.P", "linear2.b.GP"}));
  EXPECT_EQ(namesOf(modules, groups[4]), (Names{"linear2.Y", "linear2.GY"}));

  for (int id = 0; id < 5; ++id)
    EXPECT_EQ(groups[id].id, id);
  EXPECT_EQ(groups[0].elements, 2 * 1568 + 2 * 150 + 2 * 6);
  EXPECT_EQ(groups[1].elements, 2 * (6912 + 6912 + 1728) + 2 * 2400 + 2 * 16);
  EXPECT_EQ(groups[2].elements, 2 * (2048 + 2048 + 512) + 2 * 30720 + 2 * 120);
  EXPECT_EQ(groups[3].elements, 2 * (240 + 240) + 2 * 1200 + 2 * 10);
  EXPECT_EQ(groups[4].elements, 2 * 20);
  // Element counts and classes of the tensor records themselves.
  EXPECT_EQ(groups[1].tensors[6].module, 4);
  EXPECT_EQ(groups[1].tensors[6].param, 0);
  EXPECT_EQ(groups[1].tensors[6].elements, 2400);
  EXPECT_EQ(groups[1].tensors[0].param, -1);
  EXPECT_EQ(groups[1].tensors[0].elements, 6912);
}

TEST(SearchGroups, ParamsWithoutPredecessorStayInTheirGroup) {
  std::vector<ModuleSpec> modules = {
      {"x", ModuleKind::Input, -1, 4, {}},
      {"embed", ModuleKind::Linear, -1, 8, {{"table", 100}}},
      {"act", ModuleKind::Other, 1, 8, {{"alpha", 1}}},
  };
  std::vector<Group> groups;
  Status status = formGroups(modules, groups);
  ASSERT_TRUE(status.isOk()) << status.message();
  ASSERT_EQ(groups.size(), 2u);
  using Names = std::vector<std::string>;
  EXPECT_EQ(namesOf(modules, groups[0]), (Names{"x.Y", "x.GY"}));
  EXPECT_EQ(namesOf(modules, groups[1]),
            (Names{"embed.Y", "embed.GY", "embed.table.P", "embed.table.GP",
                   "act.Y", "act.GY", "act.alpha.P", "act.alpha.GP"}));
}

TEST(SearchGroups, Errors) {
  std::vector<Group> groups = groupsOfSizes({1});
  auto expectError = [&](const std::vector<ModuleSpec> &modules,
                         const std::string &part) {
    std::vector<Group> out = groups;
    Status status = formGroups(modules, out);
    ASSERT_TRUE(status.failed()) << "expected an error containing " << part;
    EXPECT_NE(status.message().find(part), std::string::npos)
        << status.message();
    // Failures leave the output alone.
    EXPECT_EQ(out.size(), 1u);
  };
  expectError({}, "no modules");
  expectError({{"relu0", ModuleKind::Other, -1, 4, {}}}, "'relu0'");
  expectError({{"x", ModuleKind::Input, -1, 4, {}},
               {"late", ModuleKind::Other, 2, 4, {}},
               {"y", ModuleKind::Other, 1, 4, {}}},
              "'late' has predecessor 2");
  expectError({{"x", ModuleKind::Input, -1, 4, {}},
               {"self", ModuleKind::Other, 1, 4, {}}},
              "'self' has predecessor 1");
  expectError({{"x", ModuleKind::Input, -1, 4, {}},
               {"neg", ModuleKind::Other, -2, 4, {}}},
              "'neg' has predecessor -2");
  expectError({{"x", ModuleKind::Input, -1, 0, {}}}, "'x' has 0 output");
  expectError({{"x", ModuleKind::Input, -1, 4, {}},
               {"fc", ModuleKind::Linear, 0, 4, {{"w", -3}}}},
              "'fc' has parameter 'w' with -3 elements");
}

//===----------------------------------------------------------------------===//
// Greedy assignment by ratio
//===----------------------------------------------------------------------===//

TEST(SearchRatio, PaperVectors) {
  // PAPERS.md §4: sizes {A: 0.5, B: 0.3, C: 0.2}.
  std::vector<Group> groups = groupsOfSizes({5, 3, 2});
  EXPECT_EQ(chosenAt(groups, 0.6), (std::vector<int>{0, 1}));
  EXPECT_EQ(chosenAt(groups, 0.5), (std::vector<int>{0}));
  // Given in another id order the choice follows the sizes.
  std::vector<Group> shuffled = groupsOfSizes({2, 5, 3});
  EXPECT_EQ(chosenAt(shuffled, 0.6), (std::vector<int>{1, 2}));
  EXPECT_EQ(chosenAt(shuffled, 0.5), (std::vector<int>{1}));
}

TEST(SearchRatio, Extremes) {
  std::vector<Group> groups = groupsOfSizes({5, 3, 2});
  EXPECT_EQ(chosenAt(groups, 0.0), (std::vector<int>{}));
  EXPECT_EQ(chosenAt(groups, 1.0), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(chosenAt(groups, 0.8), (std::vector<int>{0, 1}));
  EXPECT_EQ(chosenAt(groups, std::nextafter(0.8, 1.0)),
            (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(chosenAt(groups, 1e-12), (std::vector<int>{0}));

  // Ratios of tenths whose running double sum falls short of 1.
  std::vector<Group> tenths = groupsOfSizes(std::vector<int64_t>(10, 1));
  double sum = 0;
  for (int i = 0; i < 10; ++i)
    sum += 0.1;
  ASSERT_LT(sum, 1.0);
  Assignment all;
  ASSERT_TRUE(assignByRatio(tenths, 1.0, {}, all).isOk());
  EXPECT_EQ(all.numLow, 10);
  EXPECT_EQ(all.covered, 1.0);
}

TEST(SearchRatio, TiesByIdAscending) {
  std::vector<Group> groups = groupsOfSizes({2, 3, 3, 2});
  EXPECT_EQ(orderOf(groups, {}), (std::vector<int>{1, 2, 0, 3}));
  EXPECT_EQ(chosenAt(groups, 0.2), (std::vector<int>{1}));
  EXPECT_EQ(chosenAt(groups, 0.5), (std::vector<int>{1, 2}));
  EXPECT_EQ(chosenAt(groups, 0.7), (std::vector<int>{0, 1, 2}));
}

TEST(SearchRatio, ResultFields) {
  std::vector<Group> groups = groupsOfSizes({5, 3, 2});
  Assignment a;
  ASSERT_TRUE(assignByRatio(groups, 0.6, {}, a).isOk());
  EXPECT_EQ(a.order, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(a.numLow, 2);
  EXPECT_EQ(a.ratio, 0.6);
  EXPECT_DOUBLE_EQ(a.covered, 0.8);
  EXPECT_EQ(a.bitsBefore, 10 * 16);
  EXPECT_EQ(a.bitsAfter, 8 * 8 + 2 * 16);
  EXPECT_EQ(a.bytesBefore(), 20);
  EXPECT_EQ(a.bytesAfter(), 12);
  EXPECT_EQ(a.groupBitsBefore, (std::vector<int64_t>{80, 48, 32}));
  EXPECT_EQ(a.groupBitsAfter, (std::vector<int64_t>{40, 24, 32}));
}

TEST(SearchRatio, FormatsPerClass) {
  std::vector<ModuleSpec> modules = leNet();
  std::vector<Group> groups;
  ASSERT_TRUE(formGroups(modules, groups).isOk());
  Assignment a;
  // Group 2 (conv2, relu2, pool2, linear1's parameters) is the largest.
  ASSERT_TRUE(assignByRatio(groups, 1e-9, {}, a).isOk());
  ASSERT_EQ(chosen(a), (std::vector<int>{2}));
  EXPECT_EQ(a.formatOf(2, TensorClass::P), kFp434);
  EXPECT_EQ(a.formatOf(2, TensorClass::Y), kFp434);
  EXPECT_EQ(a.formatOf(2, TensorClass::GY), kFp520);
  EXPECT_EQ(a.formatOf(2, TensorClass::GP), kFp690);
  for (TensorClass cls :
       {TensorClass::P, TensorClass::Y, TensorClass::GY, TensorClass::GP})
    EXPECT_EQ(a.formatOf(1, cls), kFp690);

  // Footprint: P, Y, GY halve, GP stays 16 bits.
  int64_t y = 2048 + 2048 + 512, p = 30720 + 120;
  EXPECT_EQ(a.groupBitsBefore[2], 16 * (2 * y + 2 * p));
  EXPECT_EQ(a.groupBitsAfter[2], 8 * y + 8 * y + 8 * p + 16 * p);
  int64_t total = 0;
  for (const Group &group : groups)
    total += group.elements;
  EXPECT_EQ(a.bitsBefore, 16 * total);
  EXPECT_EQ(a.bitsBefore - a.bitsAfter,
            a.groupBitsBefore[2] - a.groupBitsAfter[2]);
}

TEST(SearchRatio, Errors) {
  std::vector<Group> groups = groupsOfSizes({5, 3, 2});
  Assignment a;
  a.numLow = 42;
  for (double r : {-0.1, 1.5, std::nan("")}) {
    Status status = assignByRatio(groups, r, {}, a);
    ASSERT_TRUE(status.failed()) << r;
    EXPECT_NE(status.message().find("outside [0, 1]"), std::string::npos);
  }
  EXPECT_EQ(a.numLow, 42);

  auto expectError = [&](const std::vector<Group> &bad, const Options &options,
                         const std::string &part) {
    Status status = assignByRatio(bad, 0.5, options, a);
    ASSERT_TRUE(status.failed()) << "expected an error containing " << part;
    EXPECT_NE(status.message().find(part), std::string::npos)
        << status.message();
  };
  expectError({}, {}, "no groups");
  std::vector<Group> misnumbered = groups;
  misnumbered[1].id = 2;
  expectError(misnumbered, {}, "group 1 has id 2");
  std::vector<Group> miscounted = groups;
  miscounted[2].elements = 3;
  expectError(miscounted, {}, "group 2 says it has 3 elements");
  std::vector<Group> emptyTensor = groups;
  emptyTensor[0].tensors[0].elements = 0;
  expectError(emptyTensor, {}, "group 0 holds a Y tensor");
  std::vector<Group> noTensors = groups;
  noTensors[0].tensors.clear();
  expectError(noTensors, {}, "group 0 has no tensors");
  Options badFormat;
  badFormat.formats.lowGY = {9, 2, 0};
  expectError(groups, badFormat, "low GY format");
}

//===----------------------------------------------------------------------===//
// Orders
//===----------------------------------------------------------------------===//

TEST(SearchOrder, Names) {
  for (Order order :
       {Order::Largest, Order::Smallest, Order::Random, Order::Scored}) {
    Order parsed = Order::Largest;
    ASSERT_TRUE(parseOrder(toString(order), parsed).isOk());
    EXPECT_EQ(parsed, order);
  }
  EXPECT_STREQ(toString(Order::Smallest), "smallest");
  Order parsed = Order::Scored;
  Status status = parseOrder("Largest", parsed);
  ASSERT_TRUE(status.failed());
  EXPECT_NE(status.message().find("'Largest'"), std::string::npos);
  EXPECT_EQ(parsed, Order::Scored);
}

TEST(SearchOrder, Smallest) {
  Options options;
  options.order = Order::Smallest;
  std::vector<Group> groups = groupsOfSizes({2, 3, 3, 2, 5});
  EXPECT_EQ(orderOf(groups, options), (std::vector<int>{0, 3, 1, 2, 4}));
  // Sizes 2 + 2 + 3 = 7 of 15 reach 0.4.
  EXPECT_EQ(chosenAt(groups, 0.4, options), (std::vector<int>{0, 1, 3}));
}

TEST(SearchOrder, SplitMix64Reference) {
  // The first outputs of splitmix64 seeded with 0.
  uint64_t state = 0;
  EXPECT_EQ(splitMix64(state), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitMix64(state), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(splitMix64(state), 0x06c45d188009454fULL);
}

TEST(SearchOrder, Random) {
  std::vector<Group> groups = groupsOfSizes({1, 2, 3, 4, 5, 6, 7, 8});
  Options options;
  options.order = Order::Random;
  options.seed = 7;
  std::vector<int> first = orderOf(groups, options);
  EXPECT_EQ(orderOf(groups, options), first);
  // Pinned so that the order is the same on every platform and release
  // (computed independently from the description in Assignment.h).
  EXPECT_EQ(first, (std::vector<int>{1, 4, 5, 2, 6, 0, 3, 7}));
  options.seed = 0;
  EXPECT_EQ(orderOf(groups, options),
            (std::vector<int>{2, 5, 0, 3, 4, 6, 1, 7}));
  options.seed = 7;
  std::vector<int> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));

  bool differs = false;
  for (uint64_t seed = 8; seed < 16 && !differs; ++seed) {
    options.seed = seed;
    differs = orderOf(groups, options) != first;
  }
  EXPECT_TRUE(differs);

  // The greedy takes a prefix of that order.
  options.seed = 7;
  Assignment a;
  ASSERT_TRUE(assignByRatio(groups, 0.5, options, a).isOk());
  EXPECT_EQ(a.order, first);
  int64_t covered = 0;
  for (int k = 0; k < a.numLow; ++k) {
    EXPECT_TRUE(a.low[first[k]]);
    covered += groups[first[k]].elements;
  }
  EXPECT_GE(covered * 2, 36);
  EXPECT_LT((covered - groups[first[a.numLow - 1]].elements) * 2, 36);

  // A single group is its own order.
  EXPECT_EQ(orderOf(groupsOfSizes({4}), options), (std::vector<int>{0}));
}

TEST(SearchOrder, Scored) {
  std::vector<Group> groups = groupsOfSizes({5, 3, 2, 4});
  Options options;
  options.order = Order::Scored;
  options.scores = {1.0, 3.0, 3.0, -2.0};
  EXPECT_EQ(orderOf(groups, options), (std::vector<int>{1, 2, 0, 3}));
  // 3 + 2 of 14 falls short of 0.4; group 0 is next.
  EXPECT_EQ(chosenAt(groups, 0.4, options), (std::vector<int>{0, 1, 2}));
  options.scores = {0.0, -INFINITY, INFINITY, 0.0};
  EXPECT_EQ(orderOf(groups, options), (std::vector<int>{2, 0, 3, 1}));

  std::vector<int> out{9};
  options.scores = {1.0, 2.0, 3.0};
  Status status = orderGroups(groups, options, out);
  ASSERT_TRUE(status.failed());
  EXPECT_NE(status.message().find("3 scores for 4 groups"), std::string::npos)
      << status.message();
  options.scores = {1.0, std::nan(""), 3.0, 4.0};
  status = orderGroups(groups, options, out);
  ASSERT_TRUE(status.failed());
  EXPECT_NE(status.message().find("group 1 is NaN"), std::string::npos)
      << status.message();
  EXPECT_EQ(out, (std::vector<int>{9}));
}

//===----------------------------------------------------------------------===//
// Assignment by budget
//===----------------------------------------------------------------------===//

TEST(SearchBudget, ParseByteCount) {
  struct Case {
    const char *text;
    int64_t bytes;
  };
  for (const Case &c : {Case{"0", 0}, Case{"1048576", 1048576},
                        Case{"512B", 512}, Case{"512KiB", 512 << 10},
                        Case{"4MiB", 4 << 20}, Case{"6.05MiB", 6343884},
                        Case{"6.5M", 6815744}, Case{"1GiB", int64_t(1) << 30},
                        Case{" 2 K ", 2048}, Case{"1e3", 1000}}) {
    int64_t bytes = -1;
    Status status = parseByteCount(c.text, bytes);
    ASSERT_TRUE(status.isOk()) << c.text << ": " << status.message();
    EXPECT_EQ(bytes, c.bytes) << c.text;
  }
  for (const char *text : {"", "MiB", "-4", "+4", "4QiB", "0x10", "inf", "nan",
                           "4 MiB MiB", "1e19", "."}) {
    int64_t bytes = 7;
    Status status = parseByteCount(text, bytes);
    EXPECT_TRUE(status.failed()) << text;
    EXPECT_EQ(bytes, 7) << text;
    EXPECT_NE(status.message().find("is not a byte count"), std::string::npos)
        << status.message();
  }
}

TEST(SearchBudget, PrefixesOfTheOrder) {
  // All high 160 bits = 20 bytes; A low: 15; A, B low: 12; all low: 10.
  std::vector<Group> groups = groupsOfSizes({5, 3, 2});
  struct Case {
    int64_t budget;
    std::vector<int> chosen;
    double ratio;
  };
  for (const Case &c :
       {Case{1000, {}, 0.0}, Case{20, {}, 0.0}, Case{19, {0}, 0.5},
        Case{15, {0}, 0.5}, Case{14, {0, 1}, 0.8}, Case{12, {0, 1}, 0.8},
        Case{11, {0, 1, 2}, 1.0}, Case{10, {0, 1, 2}, 1.0}}) {
    Assignment a;
    Status status = assignByBudget(groups, c.budget, {}, a);
    ASSERT_TRUE(status.isOk()) << c.budget << ": " << status.message();
    EXPECT_EQ(chosen(a), c.chosen) << c.budget;
    EXPECT_DOUBLE_EQ(a.ratio, c.ratio) << c.budget;
    EXPECT_EQ(a.ratio, a.covered) << c.budget;
    EXPECT_LE(a.bytesAfter(), c.budget);
    // The reported ratio reproduces the choice.
    EXPECT_EQ(chosenAt(groups, a.ratio), c.chosen) << c.budget;
  }
}

TEST(SearchBudget, ExactFitAndOneByteLess) {
  std::vector<ModuleSpec> modules = leNet();
  std::vector<Group> groups;
  ASSERT_TRUE(formGroups(modules, groups).isOk());
  // Every prefix of the largest-first order, through the ratio it covers.
  Assignment order;
  ASSERT_TRUE(assignByRatio(groups, 0.0, {}, order).isOk());
  int64_t total = 0;
  for (const Group &group : groups)
    total += group.elements;
  int64_t prefix = 0;
  int64_t previousBytes = order.bytesBefore() + 1;
  for (size_t k = 0; k <= groups.size(); ++k) {
    if (k > 0)
      prefix += groups[order.order[k - 1]].elements;
    Assignment atRatio;
    double r = static_cast<double>(prefix) / static_cast<double>(total);
    ASSERT_TRUE(assignByRatio(groups, r, {}, atRatio).isOk());
    ASSERT_EQ(atRatio.numLow, static_cast<int>(k));
    int64_t bytes = atRatio.bytesAfter();
    ASSERT_LT(bytes, previousBytes);
    previousBytes = bytes;

    Assignment exact;
    ASSERT_TRUE(assignByBudget(groups, bytes, {}, exact).isOk());
    EXPECT_EQ(exact.numLow, static_cast<int>(k));
    EXPECT_EQ(exact.bytesAfter(), bytes);
    EXPECT_EQ(exact.low, atRatio.low);
    EXPECT_EQ(exact.ratio, r);
    if (k == groups.size())
      break;
    Assignment less;
    ASSERT_TRUE(assignByBudget(groups, bytes - 1, {}, less).isOk());
    EXPECT_EQ(less.numLow, static_cast<int>(k + 1));
    EXPECT_LE(less.bytesAfter(), bytes - 1);
  }
}

TEST(SearchBudget, Infeasible) {
  std::vector<Group> groups = groupsOfSizes({5, 3, 2});
  Assignment a;
  a.numLow = 42;
  Status status = assignByBudget(groups, 9, {}, a);
  ASSERT_TRUE(status.failed());
  EXPECT_EQ(status.message(),
            "budget 9 bytes is below the smallest footprint this search "
            "reaches, 10 bytes (all groups low; all high: 20 bytes)");
  EXPECT_EQ(a.numLow, 42);

  status = assignByBudget(groups, -1, {}, a);
  ASSERT_TRUE(status.failed());
  EXPECT_NE(status.message().find("negative"), std::string::npos);

  // Low formats wider than high: the smallest footprint is all high.
  Options wide;
  wide.formats.lowPY = FloatFormat::fp32();
  status = assignByBudget(groups, 19, wide, a);
  ASSERT_TRUE(status.failed());
  EXPECT_NE(status.message().find("20 bytes (all groups high; all high: 20 "
                                  "bytes)"),
            std::string::npos)
      << status.message();
}

TEST(SearchBudget, BytesRoundUp) {
  // 7-bit high and 5-bit low formats: 3 elements take 21 bits (3 bytes)
  // high and 15 bits (2 bytes) low.
  Options options;
  options.formats.high = {4, 2, 0};
  options.formats.lowPY = {3, 1, 0};
  std::vector<Group> groups = groupsOfSizes({3});
  Assignment a;
  ASSERT_TRUE(assignByBudget(groups, 3, options, a).isOk());
  EXPECT_EQ(a.numLow, 0);
  EXPECT_EQ(a.bitsBefore, 21);
  EXPECT_EQ(a.bytesBefore(), 3);
  ASSERT_TRUE(assignByBudget(groups, 2, options, a).isOk());
  EXPECT_EQ(a.numLow, 1);
  EXPECT_EQ(a.bitsAfter, 15);
  EXPECT_EQ(a.bytesAfter(), 2);
  Status status = assignByBudget(groups, 1, options, a);
  ASSERT_TRUE(status.failed());
  EXPECT_NE(status.message().find("2 bytes (all groups low; all high: 3 "
                                  "bytes)"),
            std::string::npos)
      << status.message();
}

TEST(SearchBudget, FollowsTheOrder) {
  std::vector<Group> groups = groupsOfSizes({5, 3, 2});
  Options options;
  options.order = Order::Smallest;
  // Smallest first: C low saves 2 bytes (18), then B (15), then A (10).
  Assignment a;
  ASSERT_TRUE(assignByBudget(groups, 17, options, a).isOk());
  EXPECT_EQ(chosen(a), (std::vector<int>{1, 2}));
  EXPECT_DOUBLE_EQ(a.ratio, 0.5);
  EXPECT_EQ(chosenAt(groups, a.ratio, options), (std::vector<int>{1, 2}));
}

TEST(SearchProfiled, ScoresFollowSavingsAndOverflow) {
  std::vector<double> scores;
  ASSERT_TRUE(
      profiledScores({800, 400, 100}, {0.0, 0.001, 0.0}, 0.001, scores).isOk());
  // No overflow: the score is the saving; overflow at the tolerance halves.
  EXPECT_EQ(scores, (std::vector<double>{800.0, 200.0, 100.0}));
  // A group that overflows heavily drops behind a smaller clean one.
  ASSERT_TRUE(profiledScores({800, 100}, {0.05, 0.0}, 0.001, scores).isOk());
  EXPECT_LT(scores[0], scores[1]);
}

TEST(SearchProfiled, ScoredOrderUsesThem) {
  std::vector<Group> groups = groupsOfSizes({5, 3, 2});
  Options options;
  options.order = Order::Scored;
  // The largest group overflows: it goes last.
  ASSERT_TRUE(
      profiledScores({5, 3, 2}, {0.1, 0.0, 0.0}, 0.001, options.scores).isOk());
  Assignment a;
  ASSERT_TRUE(assignByRatio(groups, 0.5, options, a).isOk());
  EXPECT_EQ(a.order, (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(chosen(a), (std::vector<int>{1, 2}));
}

TEST(SearchProfiled, Errors) {
  std::vector<double> scores{7.0};
  EXPECT_TRUE(profiledScores({1, 2}, {0.0}, 0.001, scores).failed());
  EXPECT_TRUE(profiledScores({1}, {-0.1}, 0.001, scores).failed());
  EXPECT_TRUE(profiledScores({1}, {std::nan("")}, 0.001, scores).failed());
  EXPECT_TRUE(profiledScores({1}, {0.0}, 0.0, scores).failed());
  EXPECT_EQ(scores, std::vector<double>{7.0}); // unchanged on failure
}

} // namespace
