//===- TrainerTests.cpp - Tests of the trainer: selection, init, steps ---===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Trainer.h"

#include "qtrain/runtime/Cost.h"
#include "qtrain/runtime/Philox.h"

#include "fixtures/ToyBundle.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <array>
#include <cmath>
#include <fstream>
#include <set>

using namespace qtrain::rt;
using namespace qtrain::rt::testing;
using json = nlohmann::json;
using ::testing::HasSubstr;

namespace {

// The toy's trace state (fixtures/toy_model.c).
enum TraceIndex {
  TraceSlot0,
  TraceSlot1,
  TraceBits,
  TraceGradBits,
  TraceStep,
  TraceSteps,
  TraceErrors,
  TraceSeed
};

std::shared_ptr<const Bundle> openToy(const std::string &dir = toyBundleDir()) {
  std::unique_ptr<Bundle> bundle;
  Status s = openBundle(dir, bundle);
  EXPECT_TRUE(s.isOk()) << s.message();
  return std::shared_ptr<const Bundle>(std::move(bundle));
}

TrainerOptions options(const std::string &schedule, int64_t totalSteps,
                       uint64_t seed = 1) {
  TrainerOptions o;
  o.schedule = schedule;
  o.totalSteps = totalSteps;
  o.seed = seed;
  return o;
}

std::unique_ptr<Trainer> create(std::shared_ptr<const Bundle> bundle,
                                const TrainerOptions &o) {
  std::unique_ptr<Trainer> trainer;
  Status s = Trainer::create(std::move(bundle), o, trainer);
  EXPECT_TRUE(s.isOk()) << s.message();
  return trainer;
}

/// Creates a trainer expecting failure of `kind`; returns the message.
std::string createError(std::shared_ptr<const Bundle> bundle,
                        const TrainerOptions &o, ErrorKind kind) {
  std::unique_ptr<Trainer> trainer;
  ErrorKind got = ErrorKind::None;
  Status s = Trainer::create(std::move(bundle), o, trainer, &got);
  EXPECT_TRUE(s.failed());
  EXPECT_EQ(got, kind) << s.message();
  EXPECT_EQ(trainer, nullptr);
  return s.message();
}

int32_t variantIndex(const SiteSpec &site, int bits, int gradBits) {
  for (size_t j = 0; j < site.variants.size(); ++j)
    if (site.variants[j].bits == bits && site.variants[j].gradBits == gradBits)
      return int32_t(j);
  return -1;
}

std::vector<float> parameter(const Trainer &t, const std::string &name) {
  int64_t i = t.findParameter(name);
  EXPECT_GE(i, 0);
  const float *data = t.getParameterData(size_t(i));
  return std::vector<float>(data, data + t.getParameterSpec(size_t(i)).numel);
}

std::vector<float> trace(const Trainer &t) {
  return std::vector<float>(t.getStateData(0), t.getStateData(0) + 8);
}

/// Runs `steps` steps on the toy batch; returns the losses.
std::vector<float> train(Trainer &t, int steps) {
  ToyBatch batch = toyBatch();
  std::vector<float> losses;
  for (int i = 0; i < steps; ++i) {
    float loss = -1;
    Status s = t.step(batch.x.data(), batch.labels.data(), loss);
    EXPECT_TRUE(s.isOk()) << s.message();
    losses.push_back(loss);
  }
  return losses;
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

/// Every step of `schedule` over `total` steps selects, in every site, the
/// variant with the schedule's (bits, grad_bits), and the library sees it.
void checkSelection(const std::string &text, const std::string &gradText,
                    int64_t total) {
  SCOPED_TRACE(text + " / " + gradText);
  std::shared_ptr<const Bundle> bundle = openToy();
  TrainerOptions o = options(text, total, /*seed=*/12345);
  o.gradSchedule = gradText;
  std::unique_ptr<Trainer> t = create(bundle, o);
  ASSERT_NE(t, nullptr);
  // Empty texts stand for the bundle's schedules.
  Schedule schedule, gradSchedule;
  ASSERT_TRUE(parseSchedule(t->getOptions().schedule, schedule).isOk());
  ASSERT_TRUE(parseSchedule(t->getOptions().gradSchedule, gradSchedule).isOk());
  const Manifest &m = bundle->getManifest();
  ToyBatch batch = toyBatch();
  std::set<int> seen;
  for (int64_t step = 0; step < total; ++step) {
    int bits = scheduleBits(schedule, step, total);
    int gradBits = scheduleBits(gradSchedule, step, total);
    seen.insert(bits);
    ASSERT_EQ(t->getStep(), step);
    ASSERT_EQ(t->getBits(step), bits);
    float loss;
    ASSERT_TRUE(t->step(batch.x.data(), batch.labels.data(), loss).isOk());
    int32_t slot0 = variantIndex(m.sites[0], bits, gradBits);
    int32_t slot1 = variantIndex(m.sites[1], bits, gradBits);
    ASSERT_GE(slot0, 0);
    ASSERT_EQ(t->getSlots()[0], slot0) << "step " << step;
    ASSERT_EQ(t->getSlots()[1], slot1) << "step " << step;
    ASSERT_EQ(t->getLastBits(), bits);
    ASSERT_EQ(t->getLastGradBits(), gradBits);
    std::vector<float> seenByLibrary = trace(*t);
    ASSERT_EQ(seenByLibrary[TraceSlot0], float(slot0)) << "step " << step;
    ASSERT_EQ(seenByLibrary[TraceSlot1], float(slot1)) << "step " << step;
    ASSERT_EQ(seenByLibrary[TraceBits], float(bits));
    ASSERT_EQ(seenByLibrary[TraceGradBits], float(gradBits));
    ASSERT_EQ(seenByLibrary[TraceStep], float(step));
    ASSERT_EQ(seenByLibrary[TraceErrors], 0.0f) << "step " << step;
  }
  EXPECT_EQ(trace(*t)[TraceSteps], float(total));
  EXPECT_EQ(trace(*t)[TraceSeed], float(12345));
  if (schedule.kind == ScheduleKind::Cyclic)
    for (int b = schedule.minBits; b <= schedule.maxBits; ++b)
      EXPECT_TRUE(seen.count(b)) << "the run never used " << b << " bits";
}

TEST(TrainerSelectionTest, WholeCptSchedule) {
  checkSelection("cpt:3:8", "static:8", 640);
}

TEST(TrainerSelectionTest, OtherCyclicSchedules) {
  checkSelection("rex-triangular-horizontal:3:8", "static:8", 200);
  checkSelection("cyclic:linear:4:7:cycles=3", "static:8", 90);
}

TEST(TrainerSelectionTest, StaticAndFp32Schedules) {
  checkSelection("static:8", "static:4", 10);
  checkSelection("fp32", "fp32", 10);
  checkSelection("static:5", "", 10); // the bundle's grad schedule
}

TEST(TrainerSelectionTest, BundleDefaultSchedule) {
  std::unique_ptr<Trainer> t = create(openToy(), options("", 64));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->getOptions().schedule, "cpt:3:8");
  EXPECT_EQ(t->getOptions().gradSchedule, "static:8");
  EXPECT_EQ(t->getSchedule(), Schedule::cpt(3, 8));
  EXPECT_EQ(t->getGradSchedule(), Schedule::staticBits(8));
}

TEST(TrainerSelectionTest, SelectVariantsAlone) {
  std::unique_ptr<Trainer> t = create(openToy(), options("cpt:3:8", 640));
  ASSERT_NE(t, nullptr);
  Schedule cpt = Schedule::cpt(3, 8);
  for (int64_t step : {0, 7, 19, 639, 640, 5000}) {
    ASSERT_TRUE(t->selectVariants(step).isOk());
    int bits = scheduleBits(cpt, step, 640);
    EXPECT_EQ(t->getSlots()[0], bits - 2) << step; // site0: fp32, 3/8, ...
    EXPECT_EQ(t->getSlots()[1], 9 - bits) << step; // site1: 8/4, 8/8, 7/8..
  }
  EXPECT_EQ(t->getStep(), 0);
  ErrorKind kind;
  Status s = t->selectVariants(-1, &kind);
  EXPECT_EQ(s.message(), "step -1 is outside the ABI's int32 step range");
  EXPECT_EQ(kind, ErrorKind::InvalidArgument);
  s = t->selectVariants(int64_t(1) << 31, &kind);
  EXPECT_EQ(s.message(),
            "step 2147483648 is outside the ABI's int32 step range");
}

//===----------------------------------------------------------------------===//
// Refused schedules
//===----------------------------------------------------------------------===//

TEST(TrainerScheduleTest, RefusesMissingForwardBits) {
  EXPECT_EQ(createError(openToy(), options("cpt:2:8", 640),
                        ErrorKind::MissingVariant),
            "schedule 'cpt:2:8' needs 2-bit forward / 8-bit backward, but "
            "site 'site0' has no such variant (it has 3/8 4/8 5/8 6/8 7/8 8/4 "
            "8/8 fp32/fp32)");
}

TEST(TrainerScheduleTest, RefusesASiteWithoutTheVariant) {
  ToyBundle toy;
  json &variants = toy.manifest["sites"][1]["variants"];
  variants.erase(6); // site1's 3/8
  toy.write();
  std::shared_ptr<const Bundle> bundle = openToy(toy.dir);
  std::string expected = "schedule 'cpt:3:8' needs 3-bit forward / 8-bit "
                         "backward, but site 'site1' has no such variant (it "
                         "has 4/8 5/8 6/8 7/8 8/4 8/8 fp32/fp32)";
  EXPECT_EQ(
      createError(bundle, options("cpt:3:8", 640), ErrorKind::MissingVariant),
      expected);
  // The bundle's own default schedule is checked the same way.
  EXPECT_EQ(createError(bundle, options("", 640), ErrorKind::MissingVariant),
            expected);
  // A schedule that avoids 3 bits is fine.
  EXPECT_NE(create(bundle, options("cpt:4:8", 640)), nullptr);
}

// The site serves 3-bit forward with 8-bit gradients: the backward schedule
// is named as the one at fault.
TEST(TrainerScheduleTest, RefusesMissingGradientBits) {
  TrainerOptions o = options("cpt:3:8", 640);
  o.gradSchedule = "static:4";
  EXPECT_EQ(createError(openToy(), o, ErrorKind::MissingVariant),
            "backward schedule 'static:4' needs 3-bit forward / 4-bit "
            "backward, but "
            "site 'site0' has no such variant (it has 3/8 4/8 5/8 6/8 7/8 8/4 "
            "8/8 fp32/fp32)");
}

TEST(TrainerScheduleTest, RefusesFp32WithQuantizedGradients) {
  EXPECT_EQ(
      createError(openToy(), options("fp32", 10), ErrorKind::MissingVariant),
      "backward schedule 'static:8' needs fp32 forward / 8-bit backward, but "
      "site "
      "'site0' has no such variant (it has 3/8 4/8 5/8 6/8 7/8 8/4 8/8 "
      "fp32/fp32)");
}

TEST(TrainerScheduleTest, RefusesLearnedSchedules) {
  // The toy bundle has no learnable precisions (it is not LDP).
  EXPECT_EQ(
      createError(openToy(), options("ldp:3:8", 640), ErrorKind::Unsupported),
      "schedule 'ldp:3:8' learns the bits per layer, but this bundle has no "
      "learnable precisions (compile it with --policy=ldp)");
  TrainerOptions o = options("cpt:3:8", 640);
  o.gradSchedule = "ldp";
  EXPECT_EQ(createError(openToy(), o, ErrorKind::Unsupported),
            "grad schedule 'ldp': backward precisions are not learned (LDP "
            "learns the forward bits per layer)");
}

TEST(TrainerScheduleTest, ValidatesLearnedSchedules) {
  // An LDP manifest: the site's bits come from parameter 0.
  Manifest m;
  m.schedule = "ldp:3:8";
  SiteSpec site;
  site.name = "conv";
  site.macs = 10;
  site.precision = "ldp_site0";
  site.precisionParameter = 0;
  for (int bits = 4; bits <= 8; ++bits)
    site.variants.push_back({bits, 8, "v" + std::to_string(bits), {}});
  m.sites.push_back(site);
  Schedule ldp;
  ASSERT_TRUE(parseSchedule("ldp:3:8", ldp).isOk());
  ErrorKind kind;
  Status s = validateSchedule(m, ldp, "ldp:3:8", Schedule::staticBits(8),
                              "static:8", &kind);
  EXPECT_EQ(kind, ErrorKind::MissingVariant);
  EXPECT_EQ(s.message(), "schedule 'ldp:3:8' needs 3-bit forward / 8-bit "
                         "backward, but site 'conv' has no such variant (it "
                         "has 4/8 5/8 6/8 7/8 8/8)");
  m.sites[0].variants.push_back({3, 8, "v3", {}});
  EXPECT_TRUE(validateSchedule(m, ldp, "ldp:3:8", Schedule::staticBits(8),
                               "static:8", &kind)
                  .isOk());
  // Other bounds than the compiled ones, and a cyclic schedule, are refused.
  Schedule other;
  ASSERT_TRUE(parseSchedule("ldp:4:8", other).isOk());
  s = validateSchedule(m, other, "ldp:4:8", Schedule::staticBits(8), "static:8",
                       &kind);
  EXPECT_EQ(kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(s.message(), "schedule 'ldp:4:8': the bundle's steps map p to "
                         "bits with 'ldp:3:8'; use that schedule");
  s = validateSchedule(m, Schedule::cpt(3, 8), "cpt:3:8",
                       Schedule::staticBits(8), "static:8", &kind);
  EXPECT_EQ(kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(s.message(), "schedule 'cpt:3:8': this bundle learns its "
                         "precisions per layer (LDP) and is served by its "
                         "schedule 'ldp:3:8' only");
}

TEST(TrainerScheduleTest, ValidateScheduleDirectly) {
  Manifest m;
  SiteSpec site;
  site.name = "conv";
  site.variants = {{4, 8, "a", {}}, {0, 0, "b", {}}};
  m.sites.push_back(site);
  ErrorKind kind;
  EXPECT_TRUE(validateSchedule(m, Schedule::staticBits(4), "static:4",
                               Schedule::staticBits(8), "static:8", &kind)
                  .isOk());
  EXPECT_EQ(kind, ErrorKind::None);
  Status s = validateSchedule(m, Schedule::cpt(4, 5), "cpt:4:5",
                              Schedule::staticBits(8), "static:8", &kind);
  EXPECT_EQ(s.message(), "schedule 'cpt:4:5' needs 5-bit forward / 8-bit "
                         "backward, but site 'conv' has no such variant (it "
                         "has 4/8 fp32/fp32)");
  EXPECT_EQ(kind, ErrorKind::MissingVariant);
  // No sites: anything goes.
  EXPECT_TRUE(validateSchedule(Manifest(), Schedule::cpt(2, 16), "cpt:2:16",
                               Schedule::cpt(1, 3), "cpt:1:3")
                  .isOk());
}

TEST(TrainerScheduleTest, InvalidOptions) {
  std::shared_ptr<const Bundle> bundle = openToy();
  EXPECT_THAT(
      createError(bundle, options("cpt:3", 640), ErrorKind::InvalidArgument),
      HasSubstr("schedule: invalid schedule 'cpt:3' at column 6"));
  TrainerOptions o = options("cpt:3:8", 640);
  o.gradSchedule = "static";
  EXPECT_THAT(createError(bundle, o, ErrorKind::InvalidArgument),
              HasSubstr("grad schedule: invalid schedule 'static'"));
  EXPECT_EQ(
      createError(bundle, options("cpt:3:8", 0), ErrorKind::InvalidArgument),
      "total steps must be in [1, 2^31 - 1], got 0");
  EXPECT_EQ(createError(bundle, options("cpt:3:8", int64_t(1) << 31),
                        ErrorKind::InvalidArgument),
            "total steps must be in [1, 2^31 - 1], got 2147483648");
  EXPECT_THAT(
      createError(bundle, options("cpt:3:8", 10), ErrorKind::InvalidArgument),
      HasSubstr("schedule 'cpt:3:8' over 10 steps: "));
  o = options("static:8", 10);
  o.learningRate = NAN;
  EXPECT_EQ(createError(bundle, o, ErrorKind::InvalidArgument),
            "learning rate must be finite");
  o = options("static:8", 10);
  o.momentum = INFINITY;
  EXPECT_EQ(createError(bundle, o, ErrorKind::InvalidArgument),
            "momentum must be finite");
  o = options("static:8", 10);
  o.weightDecay = -INFINITY;
  EXPECT_EQ(createError(bundle, o, ErrorKind::InvalidArgument),
            "weight decay must be finite");
  EXPECT_EQ(
      createError(nullptr, options("static:8", 10), ErrorKind::InvalidArgument),
      "trainer: no bundle");
  o = options("static:8", 10);
  o.maxStepMemory = -1;
  EXPECT_EQ(createError(bundle, o, ErrorKind::InvalidArgument),
            "step memory limit must not be negative");
  // The toy library has its own allocator: no limit to set.
  o.maxStepMemory = 1 << 20;
  EXPECT_THAT(createError(bundle, o, ErrorKind::InvalidArgument),
              HasSubstr("the library has no step memory limit"));
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QTRAIN_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define QTRAIN_TEST_ASAN 1
#endif

TEST(TrainerScheduleTest, OutOfMemory) {
#ifdef QTRAIN_TEST_ASAN
  GTEST_SKIP() << "AddressSanitizer aborts on a 4 TiB request";
#endif
  std::ifstream overcommit("/proc/sys/vm/overcommit_memory");
  int mode = -1;
  overcommit >> mode;
  if (mode == 1)
    GTEST_SKIP() << "vm.overcommit_memory = 1 would grant 4 TiB";
  ToyBundle toy;
  toy.manifest["parameters"][2]["shape"] = {int64_t(1) << 20, int64_t(1) << 20};
  toy.write();
  EXPECT_THAT(createError(openToy(toy.dir), options("static:8", 10),
                          ErrorKind::OutOfMemory),
              HasSubstr("out of memory allocating 4398046511104 bytes for "
                        "'z'"));
}

//===----------------------------------------------------------------------===//
// Initialization
//===----------------------------------------------------------------------===//

TEST(TrainerInitTest, OnesForNormalizationScales) {
  ToyBundle toy;
  toy.manifest["parameters"][2]["init"] = {{"kind", "ones"}};
  toy.write();
  auto trainer = create(openToy(toy.dir), options("static:8", 10));
  ASSERT_NE(trainer, nullptr);
  for (float v : parameter(*trainer, "z"))
    EXPECT_EQ(v, 1.0f);
}

uint32_t fnv1a(const std::string &text) {
  uint32_t hash = 2166136261u;
  for (char c : text)
    hash = (hash ^ uint8_t(c)) * 16777619u;
  return hash;
}

TEST(TrainerInitTest, DocumentedFormula) {
  std::unique_ptr<Trainer> t = create(openToy(), options("static:8", 10, 42));
  ASSERT_NE(t, nullptr);
  for (const char *name : {"w", "b"}) {
    PhiloxStream stream(42, fnv1a(name), 0xFFFFFFFFu);
    std::vector<float> values = parameter(*t, name);
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_EQ(values[i], (2.0f * stream.noise(i)) * 0.5f) << name << i;
  }
  EXPECT_EQ(parameter(*t, "z"), std::vector<float>(3, 0.0f));
  EXPECT_EQ(parameter(*t, "f"), (std::vector<float>{0.25f, -0.5f, 0.125f}));
  for (size_t i = 0; i < t->getNumParameters(); ++i)
    for (int64_t e = 0; e < t->getParameterSpec(i).numel; ++e)
      EXPECT_EQ(t->getMomentumData(i)[e], 0.0f);
  EXPECT_EQ(trace(*t), std::vector<float>(8, 0.0f));
}

TEST(TrainerInitTest, SameSeedSameValuesOtherSeedOtherValues) {
  std::shared_ptr<const Bundle> bundle = openToy();
  std::unique_ptr<Trainer> a = create(bundle, options("static:8", 10, 7));
  std::unique_ptr<Trainer> b = create(bundle, options("static:8", 10, 7));
  std::unique_ptr<Trainer> c = create(bundle, options("static:8", 10, 8));
  for (const char *name : {"w", "b"}) {
    EXPECT_EQ(parameter(*a, name), parameter(*b, name)) << name;
    EXPECT_NE(parameter(*a, name), parameter(*c, name)) << name;
  }
  EXPECT_NE(parameter(*a, "w"), parameter(*a, "b"));
}

TEST(TrainerInitTest, IndependentOfParameterOrder) {
  ToyBundle toy;
  json &params = toy.manifest["parameters"];
  std::swap(params[0], params[1]);
  toy.write();
  std::unique_ptr<Trainer> swapped =
      create(openToy(toy.dir), options("static:8", 10, 3));
  std::unique_ptr<Trainer> original =
      create(openToy(), options("static:8", 10, 3));
  EXPECT_EQ(swapped->findParameter("w"), 1);
  EXPECT_EQ(parameter(*swapped, "w"), parameter(*original, "w"));
  EXPECT_EQ(parameter(*swapped, "b"), parameter(*original, "b"));
}

TEST(TrainerInitTest, NormalForEmbeddingTables) {
  ToyBundle toy;
  toy.manifest["parameters"][0]["shape"] = {256, 64};
  toy.manifest["parameters"][0]["init"] = {{"kind", "normal"}};
  toy.write();
  std::unique_ptr<Trainer> t =
      create(openToy(toy.dir), options("static:8", 10, 5));
  ASSERT_NE(t, nullptr);
  std::vector<float> v = parameter(*t, "w");
  // The documented draw (Box-Muller on words 2e and 2e+1 of the
  // parameter's init stream).
  PhiloxStream stream(5, fnv1a("w"), 0xFFFFFFFFu);
  for (size_t e : {size_t(0), size_t(1), v.size() - 1}) {
    double u1 = 0.5 - double(stream.noise(2 * e));
    double u2 = double(stream.noise(2 * e + 1)) + 0.5;
    EXPECT_EQ(v[e], float(std::sqrt(-2.0 * std::log(u1)) *
                          std::cos(6.283185307179586 * u2)))
        << e;
  }
  // N(0, 1) over 16384 draws: mean within 0.05, standard deviation within
  // 0.05 of 1, tails past 3 present but rare.
  double sum = 0, squares = 0;
  int beyond3 = 0;
  for (float x : v) {
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    squares += double(x) * x;
    beyond3 += std::abs(x) > 3.0f;
  }
  double mean = sum / double(v.size());
  double std = std::sqrt(squares / double(v.size()) - mean * mean);
  EXPECT_LT(std::abs(mean), 0.05);
  EXPECT_NEAR(std, 1.0, 0.05);
  EXPECT_GT(beyond3, 0);
  EXPECT_LT(beyond3, 100); // 0.27% of 16384 is 44
}

TEST(TrainerInitTest, KaimingBoundOnALargeTensor) {
  ToyBundle toy;
  toy.manifest["parameters"][0]["shape"] = {256, 64};
  toy.manifest["parameters"][0]["init"]["fan_in"] = 64;
  toy.manifest["parameters"][1]["shape"] = {256};
  toy.manifest["parameters"][1]["init"]["fan_in"] = 9;
  toy.write();
  std::unique_ptr<Trainer> t =
      create(openToy(toy.dir), options("static:8", 10, 99));
  for (auto [name, bound] :
       {std::pair<const char *, float>{"w", 0.125f}, {"b", float(1.0 / 3.0)}}) {
    std::vector<float> v = parameter(*t, name);
    float lo = *std::min_element(v.begin(), v.end());
    float hi = *std::max_element(v.begin(), v.end());
    EXPECT_GE(lo, -bound) << name;
    EXPECT_LT(hi, bound) << name;
    // Uniform: the extremes come close to the bound, the mean to zero.
    EXPECT_LT(lo, -0.9f * bound) << name;
    EXPECT_GT(hi, 0.9f * bound) << name;
    double mean = 0;
    for (float x : v)
      mean += x;
    mean /= double(v.size());
    EXPECT_LT(std::abs(mean), 0.1 * bound) << name;
  }
}

//===----------------------------------------------------------------------===//
// Steps
//===----------------------------------------------------------------------===//

TEST(TrainerStepTest, LossDecreases) {
  for (const char *schedule : {"cpt:3:8", "static:8"}) {
    TrainerOptions o = options(schedule, 64);
    o.learningRate = 0.5f;
    std::unique_ptr<Trainer> t = create(openToy(), o);
    std::vector<float> losses = train(*t, 64);
    EXPECT_LT(losses.back(), 0.5f * losses.front()) << schedule;
    EXPECT_EQ(t->getStep(), 64);
  }
}

TEST(TrainerStepTest, DoubleBuffersAndHyperParameters) {
  TrainerOptions o = options("static:8", 10);
  o.learningRate = 0.0f;
  std::unique_ptr<Trainer> t = create(openToy(), o);
  std::vector<float> before = parameter(*t, "w");
  const float *first = t->getParameterData(0);
  train(*t, 1);
  const float *second = t->getParameterData(0);
  EXPECT_NE(first, second);
  // lr = 0: the new buffer holds the same values; momentum = the gradient.
  EXPECT_EQ(parameter(*t, "w"), before);
  bool moved = false;
  for (int e = 0; e < 3; ++e)
    moved |= t->getMomentumData(1)[e] != 0.0f;
  EXPECT_TRUE(moved);
  train(*t, 1);
  EXPECT_EQ(t->getParameterData(0), first);
}

TEST(TrainerStepTest, BitOps) {
  std::unique_ptr<Trainer> t = create(openToy(), options("cpt:3:8", 640));
  EXPECT_EQ(t->getLastBits(), -1);
  EXPECT_EQ(t->getLastGradBits(), -1);
  EXPECT_EQ(t->getLastBitOps(), 0.0);
  double total = 0;
  for (int i = 0; i < 40; ++i) {
    train(*t, 1);
    int bits = t->getLastBits();
    EXPECT_EQ(t->getLastBitOps(), bitOps(96, bits, 8) + bitOps(32, bits, 8));
    total += t->getLastBitOps();
  }
  EXPECT_EQ(t->getTotalBitOps(), total);

  TrainerOptions o = options("fp32", 10);
  o.gradSchedule = "fp32";
  std::unique_ptr<Trainer> fp32 = create(openToy(), o);
  train(*fp32, 1);
  EXPECT_EQ(fp32->getLastBitOps(), 128.0 * 3 * 32 * 32);
}

TEST(TrainerStepTest, StepErrors) {
  std::unique_ptr<Trainer> t = create(openToy(), options("static:8", 10));
  ToyBatch batch = toyBatch();
  float loss = 7;
  ErrorKind kind;
  Status s = t->step(static_cast<const float *>(nullptr), batch.labels.data(),
                     loss, &kind);
  EXPECT_EQ(s.message(), "step: x is null");
  EXPECT_EQ(kind, ErrorKind::InvalidArgument);
  s = t->step(batch.x.data(), nullptr, loss, &kind);
  EXPECT_EQ(s.message(), "step: labels is null");
  batch.labels[3] = 3;
  s = t->step(batch.x.data(), batch.labels.data(), loss, &kind);
  EXPECT_EQ(s.message(), "step: labels[3] = 3 is outside [0, 3)");
  EXPECT_EQ(kind, ErrorKind::InvalidArgument);
  batch.labels[3] = -1;
  s = t->step(batch.x.data(), batch.labels.data(), loss, &kind);
  EXPECT_EQ(s.message(), "step: labels[3] = -1 is outside [0, 3)");
  EXPECT_EQ(loss, 7.0f);
  EXPECT_EQ(t->getStep(), 0);
}

TEST(TrainerStepTest, TokenIdInputs) {
  ToyBundle toy;
  toy.manifest["input"]["dtype"] = "i64";
  toy.manifest["input"]["max_value"] = 5;
  toy.write();
  // In fp32: the toy reads the ids' bytes as floats (tiny ones), which a
  // quantizer would scale to NaN.
  TrainerOptions o = options("fp32", 10);
  o.gradSchedule = "fp32";
  std::unique_ptr<Trainer> t = create(openToy(toy.dir), o);
  ToyBatch batch = toyBatch();
  std::vector<int64_t> ids(32, 1);
  std::vector<float> logits(24);
  float loss = 7;
  ErrorKind kind;
  Status s = t->step(batch.x.data(), batch.labels.data(), loss, &kind);
  EXPECT_EQ(s.message(),
            "step: the bundle's input is i64 (token ids), not f32");
  EXPECT_EQ(kind, ErrorKind::InvalidArgument);
  s = t->eval(batch.x.data(), logits.data(), 0, &kind);
  EXPECT_EQ(s.message(),
            "eval: the bundle's input is i64 (token ids), not f32");
  ids[9] = 6;
  s = t->step(ids.data(), batch.labels.data(), loss, &kind);
  EXPECT_EQ(s.message(), "step: x[9] = 6 is outside [0, 5] (the token ids the "
                         "bundle's tables have)");
  EXPECT_EQ(kind, ErrorKind::InvalidArgument);
  ids[9] = -1;
  s = t->eval(ids.data(), logits.data(), 0, &kind);
  EXPECT_EQ(s.message(),
            "eval: x[9] = -1 is negative (token ids are table rows from 0)");
  EXPECT_EQ(loss, 7.0f);
  EXPECT_EQ(t->getStep(), 0);
  ids[9] = 5;
  s = t->step(ids.data(), batch.labels.data(), loss, &kind);
  EXPECT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(t->getStep(), 1);

  std::unique_ptr<Trainer> f32 = create(openToy(), options("static:8", 10));
  s = f32->step(ids.data(), batch.labels.data(), loss, &kind);
  EXPECT_EQ(s.message(), "step: the bundle's input is f32, not i64");
}

TEST(TrainerStepTest, TwoTrainersSideBySide) {
  std::shared_ptr<const Bundle> bundle = openToy();
  TrainerOptions oa = options("cpt:3:8", 64, 1),
                 ob = options("static:6", 64, 2);
  oa.learningRate = 0.3f;
  ob.learningRate = 0.1f;
  ob.momentum = 0.5f;
  // Alone.
  std::unique_ptr<Trainer> soloA = create(bundle, oa);
  std::vector<float> lossesA = train(*soloA, 64);
  std::unique_ptr<Trainer> soloB = create(bundle, ob);
  std::vector<float> lossesB = train(*soloB, 64);
  // Interleaved, one of them from another copy of the bundle.
  ToyBundle toy;
  std::unique_ptr<Trainer> a = create(bundle, oa);
  std::unique_ptr<Trainer> b = create(openToy(toy.dir), ob);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(train(*a, 1)[0], lossesA[size_t(i)]);
    EXPECT_EQ(train(*b, 1)[0], lossesB[size_t(i)]);
  }
  for (const char *name : {"w", "b", "z", "f"}) {
    EXPECT_EQ(parameter(*a, name), parameter(*soloA, name));
    EXPECT_EQ(parameter(*b, name), parameter(*soloB, name));
  }
  EXPECT_EQ(trace(*a), trace(*soloA));
  EXPECT_EQ(trace(*b)[TraceSeed], 2.0f);
  EXPECT_NE(lossesA, lossesB);
}

TEST(TrainerStepTest, TrainerOutlivesItsBundleHandle) {
  std::shared_ptr<const Bundle> bundle = openToy();
  std::unique_ptr<Trainer> t = create(bundle, options("static:8", 10));
  bundle.reset();
  EXPECT_EQ(train(*t, 3).size(), 3u);
}

//===----------------------------------------------------------------------===//
// Eval
//===----------------------------------------------------------------------===//

/// The toy's fp32 forward: x . w^T + b + z + f.
std::vector<float> referenceLogits(const Trainer &t, const ToyBatch &batch) {
  std::vector<float> w = parameter(t, "w"), b = parameter(t, "b"),
                     z = parameter(t, "z"), f = parameter(t, "f");
  std::vector<float> logits;
  for (int n = 0; n < 8; ++n)
    for (int c = 0; c < 3; ++c) {
      float acc = b[size_t(c)] + z[size_t(c)] + f[size_t(c)];
      for (int k = 0; k < 4; ++k)
        acc += batch.x[size_t(n * 4 + k)] * w[size_t(c * 4 + k)];
      logits.push_back(acc);
    }
  return logits;
}

TEST(TrainerEvalTest, Fp32MatchesTheReference) {
  std::unique_ptr<Trainer> t = create(openToy(), options("cpt:3:8", 640));
  train(*t, 5);
  ToyBatch batch = toyBatch();
  std::vector<float> logits(24, -1.0f);
  // (0, 8) is no class of the table: each site falls back to its fp32
  // variant.
  Status s = t->eval(batch.x.data(), logits.data(), 0);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(logits, referenceLogits(*t, batch));
  EXPECT_EQ(t->getStep(), 5);
}

TEST(TrainerEvalTest, ScheduleBitsAndQuantizedBits) {
  std::unique_ptr<Trainer> t = create(openToy(), options("cpt:3:8", 640));
  ToyBatch batch = toyBatch();
  std::vector<float> logits(24);
  for (int bits : {kScheduleBits, 3, 4, 8}) {
    Status s = t->eval(batch.x.data(), logits.data(), bits);
    ASSERT_TRUE(s.isOk()) << s.message();
    for (float v : logits)
      EXPECT_TRUE(std::isfinite(v))
          << "the toy saw a wrong variant at " << bits;
  }
  // Eval selection leaves the training slots alone.
  train(*t, 1);
  int32_t slot0 = t->getSlots()[0];
  ASSERT_TRUE(t->eval(batch.x.data(), logits.data(), 0).isOk());
  EXPECT_EQ(t->getSlots()[0], slot0);
}

TEST(TrainerEvalTest, EvalErrors) {
  std::unique_ptr<Trainer> t = create(openToy(), options("cpt:3:8", 640));
  ToyBatch batch = toyBatch();
  std::vector<float> logits(24);
  ErrorKind kind;
  Status s =
      t->eval(static_cast<const float *>(nullptr), logits.data(), 0, &kind);
  EXPECT_EQ(s.message(), "eval: x is null");
  EXPECT_EQ(kind, ErrorKind::InvalidArgument);
  s = t->eval(batch.x.data(), nullptr, 0, &kind);
  EXPECT_EQ(s.message(), "eval: logits is null");
  s = t->eval(batch.x.data(), logits.data(), 17, &kind);
  EXPECT_EQ(s.message(), "eval: bits must be in [0, 16] or -1, got 17");
  EXPECT_EQ(kind, ErrorKind::InvalidArgument);
  s = t->eval(batch.x.data(), logits.data(), -2, &kind);
  EXPECT_EQ(s.message(), "eval: bits must be in [0, 16] or -1, got -2");
  s = t->eval(batch.x.data(), logits.data(), 2, &kind);
  EXPECT_EQ(s.message(), "eval at 2-bit forward: site 'site0' has no 2-bit "
                         "variant (it has 3/8 4/8 5/8 6/8 7/8 8/4 8/8 "
                         "fp32/fp32)");
  EXPECT_EQ(kind, ErrorKind::MissingVariant);
}

} // namespace

//===----------------------------------------------------------------------===//
// A device that checks finiteness itself (StepDevice::checkFinite)
//===----------------------------------------------------------------------===//

namespace {

/// The toy's steps on the CPU behind the StepDevice interface, with a
/// finiteness check whose verdict the test sets.
class CheckingDevice final : public StepDevice {
public:
  explicit CheckingDevice(std::shared_ptr<const Bundle> bundle)
      : bundle(std::move(bundle)) {}
  void *allocate(size_t bytes) override {
    return std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  }
  void release(void *pointer) override { std::free(pointer); }
  Status run(bool train, void **args, size_t, size_t, size_t, size_t,
             ErrorKind *kind) override {
    return bundle->runStep(
        train ? bundle->getTrainStep() : bundle->getEvalStep(), args, 1, kind);
  }
  Status checkFinite(const float *const *buffers, const size_t *counts,
                     size_t n, bool &finite, bool &checked) override {
    ++checks;
    buffersChecked = n;
    for (size_t i = 0; i < n; ++i)
      elementsChecked += counts[i];
    (void)buffers;
    finite = verdict;
    checked = true;
    return Status::success();
  }
  std::string describe() const override { return "checking device"; }

  std::shared_ptr<const Bundle> bundle;
  bool verdict = true;
  int checks = 0;
  size_t buffersChecked = 0, elementsChecked = 0;
};

} // namespace

/// An fp32 trainer of the toy on `device`.
std::unique_ptr<Trainer> createOnDevice(std::shared_ptr<const Bundle> bundle,
                                        std::shared_ptr<StepDevice> device) {
  TrainerOptions o = options("fp32", 4);
  o.gradSchedule = "fp32";
  o.device = std::move(device);
  return create(std::move(bundle), o);
}

TEST(TrainerDeviceTest, TheDeviceChecksFinitenessAfterEachStep) {
  std::shared_ptr<const Bundle> bundle = openToy();
  auto device = std::make_shared<CheckingDevice>(bundle);
  std::unique_ptr<Trainer> t = createOnDevice(bundle, device);
  ASSERT_NE(t, nullptr);
  ToyBatch batch = toyBatch();
  float loss;
  ASSERT_TRUE(t->step(batch.x.data(), batch.labels.data(), loss).isOk());
  ASSERT_TRUE(t->step(batch.x.data(), batch.labels.data(), loss).isOk());
  EXPECT_EQ(device->checks, 2);
  // The new parameters and their momentum: every element of each.
  size_t parameters = bundle->getManifest().parameters.size(), elements = 0;
  for (const ParameterSpec &p : bundle->getManifest().parameters)
    elements += size_t(p.numel);
  EXPECT_EQ(device->buffersChecked, 2 * parameters);
  EXPECT_EQ(device->elementsChecked, 2 * 2 * elements);
  EXPECT_EQ(t->getStep(), 2);
}

TEST(TrainerDeviceTest, TheDevicesVerdictStandsWhereTheHostSeesNoInfinity) {
  // The device is authoritative: a non-finite verdict fails the step
  // (the toy has no loss scaling to halve) and keeps the parameters.
  std::shared_ptr<const Bundle> bundle = openToy();
  auto device = std::make_shared<CheckingDevice>(bundle);
  std::unique_ptr<Trainer> t = createOnDevice(bundle, device);
  ASSERT_NE(t, nullptr);
  std::vector<float> before(t->getParameterData(0),
                            t->getParameterData(0) +
                                t->getParameterSpec(0).numel);
  device->verdict = false;
  ToyBatch batch = toyBatch();
  float loss;
  ErrorKind kind = ErrorKind::None;
  Status s = t->step(batch.x.data(), batch.labels.data(), loss, &kind);
  ASSERT_TRUE(s.failed());
  EXPECT_EQ(kind, ErrorKind::Diverged);
  EXPECT_THAT(s.message(), HasSubstr("not finite (found on the device)"));
  EXPECT_EQ(
      std::vector<float>(t->getParameterData(0),
                         t->getParameterData(0) + t->getParameterSpec(0).numel),
      before);
}
