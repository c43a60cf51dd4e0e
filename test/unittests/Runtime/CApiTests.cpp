//===- CApiTests.cpp - Tests of the runtime's flat C API -----------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/qtrain.h"

#include "qtrain/runtime/Schedule.h"

#include "fixtures/ToyBundle.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>

using namespace qtrain::rt::testing;
using ::testing::HasSubstr;
using ::testing::StartsWith;

extern "C" int qtrain_c_header_check(void);

namespace {

/// A bundle and trainer on the toy, released at the end of a test.
struct Toy {
  qtrain_bundle *bundle = nullptr;
  qtrain_trainer *trainer = nullptr;

  explicit Toy(const char *schedule = "cpt:3:8", int64_t totalSteps = 64) {
    EXPECT_EQ(qtrain_bundle_open(toyBundleDir().c_str(), &bundle), QTRAIN_OK)
        << qtrain_last_error();
    qtrain_trainer_options options;
    qtrain_trainer_options_init(&options);
    options.schedule = schedule;
    options.total_steps = totalSteps;
    options.learning_rate = 0.5f;
    EXPECT_EQ(qtrain_trainer_create(bundle, &options, &trainer), QTRAIN_OK)
        << qtrain_last_error();
  }
  ~Toy() {
    qtrain_trainer_destroy(trainer);
    qtrain_bundle_close(bundle);
  }
};

/// Expects `status` to be `expected` with a last error containing `text`.
void expectError(qtrain_status status, qtrain_status expected,
                 const std::string &text) {
  EXPECT_EQ(status, expected) << qtrain_status_name(status);
  EXPECT_THAT(std::string(qtrain_last_error()), HasSubstr(text));
}

TEST(CApiTest, HeaderIsC) { EXPECT_EQ(qtrain_c_header_check(), 1); }

TEST(CApiTest, VersionAndStatusNames) {
  EXPECT_EQ(qtrain_api_version(), QTRAIN_API_VERSION);
  EXPECT_STREQ(qtrain_status_name(QTRAIN_OK), "QTRAIN_OK");
  EXPECT_STREQ(qtrain_status_name(QTRAIN_ERROR_INVALID_ARGUMENT),
               "QTRAIN_ERROR_INVALID_ARGUMENT");
  EXPECT_STREQ(qtrain_status_name(QTRAIN_ERROR_IO), "QTRAIN_ERROR_IO");
  EXPECT_STREQ(qtrain_status_name(QTRAIN_ERROR_FORMAT), "QTRAIN_ERROR_FORMAT");
  EXPECT_STREQ(qtrain_status_name(QTRAIN_ERROR_UNSUPPORTED),
               "QTRAIN_ERROR_UNSUPPORTED");
  EXPECT_STREQ(qtrain_status_name(QTRAIN_ERROR_MISSING_VARIANT),
               "QTRAIN_ERROR_MISSING_VARIANT");
  EXPECT_STREQ(qtrain_status_name(QTRAIN_ERROR_OUT_OF_MEMORY),
               "QTRAIN_ERROR_OUT_OF_MEMORY");
  EXPECT_STREQ(qtrain_status_name(QTRAIN_ERROR_DIVERGED),
               "QTRAIN_ERROR_DIVERGED");
  EXPECT_STREQ(qtrain_status_name(qtrain_status(99)), "unknown");
}

TEST(CApiTest, TrainsTheToy) {
  qtrain_bundle *bundle = nullptr;
  ASSERT_EQ(qtrain_bundle_open(toyBundleDir().c_str(), &bundle), QTRAIN_OK);
  qtrain_bundle_info info;
  info.struct_size = sizeof(info);
  ASSERT_EQ(qtrain_bundle_get_info(bundle, &info), QTRAIN_OK);
  EXPECT_EQ(info.batch, 8);
  EXPECT_EQ(info.classes, 3);
  EXPECT_EQ(info.input_numel, 32);
  EXPECT_EQ(info.labels_numel, 8);
  EXPECT_EQ(info.num_parameters, 4);
  EXPECT_EQ(info.num_state, 1);
  EXPECT_EQ(info.num_sites, 2);
  EXPECT_STREQ(info.schedule, "cpt:3:8");
  EXPECT_STREQ(info.grad_schedule, "static:8");

  qtrain_trainer_options options;
  qtrain_trainer_options_init(&options);
  EXPECT_EQ(options.struct_size, sizeof(options));
  EXPECT_EQ(options.schedule, nullptr);
  EXPECT_EQ(options.total_steps, 0);
  EXPECT_FLOAT_EQ(options.learning_rate, 0.01f);
  EXPECT_FLOAT_EQ(options.momentum, 0.9f);
  EXPECT_EQ(options.weight_decay, 0.0f);
  options.total_steps = 64;
  options.seed = 5;
  options.learning_rate = 0.5f;
  qtrain_trainer *trainer = nullptr;
  ASSERT_EQ(qtrain_trainer_create(bundle, &options, &trainer), QTRAIN_OK)
      << qtrain_last_error();
  // The trainer keeps the library loaded.
  qtrain_bundle_close(bundle);

  int32_t bits = 0, gradBits = 0;
  ASSERT_EQ(qtrain_trainer_get_bits(trainer, &bits, &gradBits), QTRAIN_OK);
  EXPECT_EQ(bits, -1);
  EXPECT_EQ(gradBits, -1);
  double meanBits = 0;
  ASSERT_EQ(qtrain_trainer_get_mean_bits(trainer, &meanBits), QTRAIN_OK);
  EXPECT_EQ(meanBits, -1.0);
  int32_t siteBits = 0;
  ASSERT_EQ(qtrain_trainer_get_site_bits(trainer, 1, &siteBits), QTRAIN_OK);
  EXPECT_EQ(siteBits, -1);
  EXPECT_EQ(qtrain_trainer_get_site_bits(trainer, 2, &siteBits),
            QTRAIN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(qtrain_last_error(),
               "qtrain_trainer_get_site_bits: site 2 is outside [0, 2)");
  EXPECT_EQ(qtrain_trainer_get_site_bits(trainer, -1, &siteBits),
            QTRAIN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(qtrain_trainer_get_site_bits(trainer, 0, nullptr),
            QTRAIN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(qtrain_trainer_get_mean_bits(nullptr, &meanBits),
            QTRAIN_ERROR_INVALID_ARGUMENT);

  ToyBatch batch = toyBatch();
  qtrain::rt::Schedule cpt = qtrain::rt::Schedule::cpt(3, 8);
  float first = 0, loss = 0;
  double total = 0;
  for (int t = 0; t < 64; ++t) {
    ASSERT_EQ(qtrain_trainer_step(trainer, batch.x.data(), batch.labels.data(),
                                  &loss),
              QTRAIN_OK)
        << qtrain_last_error();
    if (t == 0)
      first = loss;
    ASSERT_EQ(qtrain_trainer_get_bits(trainer, &bits, nullptr), QTRAIN_OK);
    EXPECT_EQ(bits, qtrain::rt::scheduleBits(cpt, t, 64));
    // Under a uniform schedule every site and the mean have the step's bits.
    double mean = 0;
    ASSERT_EQ(qtrain_trainer_get_mean_bits(trainer, &mean), QTRAIN_OK);
    EXPECT_EQ(mean, bits);
    for (int64_t site = 0; site < info.num_sites; ++site) {
      int32_t siteBits = -2;
      ASSERT_EQ(qtrain_trainer_get_site_bits(trainer, site, &siteBits),
                QTRAIN_OK);
      EXPECT_EQ(siteBits, bits);
    }
    double last = 0;
    ASSERT_EQ(qtrain_trainer_get_bitops(trainer, &last, nullptr), QTRAIN_OK);
    EXPECT_EQ(last, 128.0 * (bits * bits + 2 * bits * 8));
    total += last;
  }
  EXPECT_LT(loss, first);
  // loss may be NULL.
  EXPECT_EQ(qtrain_trainer_step(trainer, batch.x.data(), batch.labels.data(),
                                nullptr),
            QTRAIN_OK);
  double last = 0, all = 0;
  ASSERT_EQ(qtrain_trainer_get_bitops(trainer, &last, &all), QTRAIN_OK);
  EXPECT_EQ(all, total + last);

  int64_t step = 0;
  ASSERT_EQ(qtrain_trainer_get_step(trainer, &step), QTRAIN_OK);
  EXPECT_EQ(step, 65);

  int64_t count = 0;
  ASSERT_EQ(qtrain_trainer_num_parameters(trainer, &count), QTRAIN_OK);
  EXPECT_EQ(count, 4);
  int64_t index = -1;
  ASSERT_EQ(qtrain_trainer_find_parameter(trainer, "f", &index), QTRAIN_OK);
  EXPECT_EQ(index, 3);
  qtrain_tensor tensor;
  tensor.struct_size = sizeof(tensor);
  ASSERT_EQ(qtrain_trainer_get_parameter(trainer, 0, &tensor), QTRAIN_OK);
  EXPECT_STREQ(tensor.name, "w");
  ASSERT_EQ(tensor.rank, 2);
  EXPECT_EQ(tensor.shape[0], 3);
  EXPECT_EQ(tensor.shape[1], 4);
  EXPECT_EQ(tensor.numel, 12);
  ASSERT_NE(tensor.data, nullptr);
  ASSERT_EQ(qtrain_trainer_num_state(trainer, &count), QTRAIN_OK);
  EXPECT_EQ(count, 1);
  ASSERT_EQ(qtrain_trainer_get_state(trainer, 0, &tensor), QTRAIN_OK);
  EXPECT_STREQ(tensor.name, "trace");
  EXPECT_EQ(tensor.numel, 8);
  EXPECT_EQ(tensor.data[5], 65.0f); // steps the library saw
  EXPECT_EQ(tensor.data[6], 0.0f);  // selection errors it saw
  EXPECT_EQ(tensor.data[7], 5.0f);  // the seed

  float logits[24];
  ASSERT_EQ(qtrain_trainer_eval(trainer, batch.x.data(), QTRAIN_SCHEDULE_BITS,
                                logits),
            QTRAIN_OK);
  ASSERT_EQ(qtrain_trainer_eval(trainer, batch.x.data(), 0, logits), QTRAIN_OK);
  int correct = 0;
  for (int n = 0; n < 8; ++n) {
    int best = 0;
    for (int c = 1; c < 3; ++c)
      if (logits[n * 3 + c] > logits[n * 3 + best])
        best = c;
    correct += best == batch.labels[size_t(n)];
  }
  EXPECT_EQ(correct, 8);
  qtrain_trainer_destroy(trainer);
}

// qtrain_trainer_get_momentum: zero before the first step; after a step
// with momentum 0 and weight decay 0 the buffer is that step's gradient,
// so the update is p - lr * buffer (qtrain-import-torch --check reads
// gradients this way).
TEST(CApiTest, MomentumIsTheGradient) {
  qtrain_bundle *bundle = nullptr;
  ASSERT_EQ(qtrain_bundle_open(toyBundleDir().c_str(), &bundle), QTRAIN_OK)
      << qtrain_last_error();
  qtrain_trainer_options options;
  qtrain_trainer_options_init(&options);
  options.schedule = "static:8";
  options.total_steps = 1;
  options.learning_rate = 0.5f;
  options.momentum = 0.0f;
  qtrain_trainer *trainer = nullptr;
  ASSERT_EQ(qtrain_trainer_create(bundle, &options, &trainer), QTRAIN_OK)
      << qtrain_last_error();
  qtrain_tensor tensor;
  tensor.struct_size = sizeof(tensor);
  ASSERT_EQ(qtrain_trainer_get_momentum(trainer, 0, &tensor), QTRAIN_OK);
  EXPECT_STREQ(tensor.name, "w");
  ASSERT_EQ(tensor.numel, 12);
  for (int64_t i = 0; i < tensor.numel; ++i)
    EXPECT_EQ(tensor.data[i], 0.0f);
  ASSERT_EQ(qtrain_trainer_get_parameter(trainer, 0, &tensor), QTRAIN_OK);
  std::vector<float> before(tensor.data, tensor.data + tensor.numel);

  ToyBatch batch = toyBatch();
  ASSERT_EQ(qtrain_trainer_step(trainer, batch.x.data(), batch.labels.data(),
                                nullptr),
            QTRAIN_OK);
  ASSERT_EQ(qtrain_trainer_get_momentum(trainer, 0, &tensor), QTRAIN_OK);
  std::vector<float> grad(tensor.data, tensor.data + tensor.numel);
  ASSERT_EQ(qtrain_trainer_get_parameter(trainer, 0, &tensor), QTRAIN_OK);
  bool moved = false;
  for (size_t i = 0; i < grad.size(); ++i) {
    EXPECT_FLOAT_EQ(tensor.data[i], before[i] - 0.5f * grad[i]) << i;
    moved |= grad[i] != 0.0f;
  }
  EXPECT_TRUE(moved);

  expectError(qtrain_trainer_get_momentum(nullptr, 0, &tensor),
              QTRAIN_ERROR_INVALID_ARGUMENT,
              "qtrain_trainer_get_momentum: trainer is NULL");
  expectError(qtrain_trainer_get_momentum(trainer, 0, nullptr),
              QTRAIN_ERROR_INVALID_ARGUMENT,
              "qtrain_trainer_get_momentum: tensor is NULL");
  expectError(qtrain_trainer_get_momentum(trainer, 4, &tensor),
              QTRAIN_ERROR_INVALID_ARGUMENT,
              "qtrain_trainer_get_momentum: index 4 is outside [0, 4)");
  qtrain_trainer_destroy(trainer);
  qtrain_bundle_close(bundle);
}

TEST(CApiTest, TokenIdInputs) {
  Toy toy;
  ToyBatch batch = toyBatch();
  std::vector<int64_t> ids(32, 1);
  float loss, logits[24];
  const char *dtype = nullptr;
  int64_t maxValue = 0;
  ASSERT_EQ(qtrain_bundle_get_input_dtype(toy.bundle, &dtype, &maxValue),
            QTRAIN_OK);
  EXPECT_STREQ(dtype, "f32");
  EXPECT_EQ(maxValue, -1);
  expectError(qtrain_bundle_get_input_dtype(toy.bundle, nullptr, nullptr),
              QTRAIN_ERROR_INVALID_ARGUMENT,
              "qtrain_bundle_get_input_dtype: dtype is NULL");
  expectError(qtrain_trainer_step_ids(toy.trainer, ids.data(),
                                      batch.labels.data(), &loss),
              QTRAIN_ERROR_INVALID_ARGUMENT,
              "step: the bundle's input is f32, not i64");

  ToyBundle copy;
  copy.manifest["input"]["dtype"] = "i64";
  copy.manifest["input"]["max_value"] = 5;
  copy.write();
  qtrain_bundle *bundle = nullptr;
  ASSERT_EQ(qtrain_bundle_open(copy.dir.c_str(), &bundle), QTRAIN_OK)
      << qtrain_last_error();
  ASSERT_EQ(qtrain_bundle_get_input_dtype(bundle, &dtype, &maxValue),
            QTRAIN_OK);
  EXPECT_STREQ(dtype, "i64");
  EXPECT_EQ(maxValue, 5);
  qtrain_trainer_options options;
  qtrain_trainer_options_init(&options);
  options.schedule = "fp32";
  options.grad_schedule = "fp32";
  options.total_steps = 4;
  qtrain_trainer *trainer = nullptr;
  ASSERT_EQ(qtrain_trainer_create(bundle, &options, &trainer), QTRAIN_OK)
      << qtrain_last_error();
  expectError(
      qtrain_trainer_step(trainer, batch.x.data(), batch.labels.data(), &loss),
      QTRAIN_ERROR_INVALID_ARGUMENT,
      "step: the bundle's input is i64 (token ids), not f32");
  expectError(
      qtrain_trainer_step_ids(trainer, nullptr, batch.labels.data(), &loss),
      QTRAIN_ERROR_INVALID_ARGUMENT, "qtrain_trainer_step_ids: x is NULL");
  ids[3] = 6;
  expectError(qtrain_trainer_eval_ids(trainer, ids.data(), 0, logits),
              QTRAIN_ERROR_INVALID_ARGUMENT,
              "eval: x[3] = 6 is outside [0, 5]");
  ids[3] = 5;
  EXPECT_EQ(
      qtrain_trainer_step_ids(trainer, ids.data(), batch.labels.data(), &loss),
      QTRAIN_OK)
      << qtrain_last_error();
  EXPECT_EQ(qtrain_trainer_eval_ids(trainer, ids.data(), 0, logits), QTRAIN_OK)
      << qtrain_last_error();
  qtrain_trainer_destroy(trainer);
  qtrain_bundle_close(bundle);
}

TEST(CApiTest, NullHandlesAndPointers) {
  Toy toy;
  ToyBatch batch = toyBatch();
  float loss, logits[24];
  int64_t value;
  qtrain_bundle *bundle;
  qtrain_trainer *trainer;
  qtrain_bundle_info info;
  info.struct_size = sizeof(info);
  qtrain_tensor tensor;
  tensor.struct_size = sizeof(tensor);
  qtrain_trainer_options options;
  qtrain_trainer_options_init(&options);
  options.total_steps = 64;
  const qtrain_status kInvalid = QTRAIN_ERROR_INVALID_ARGUMENT;

  expectError(qtrain_bundle_open(nullptr, &bundle), kInvalid,
              "qtrain_bundle_open: dir is NULL");
  expectError(qtrain_bundle_open(toyBundleDir().c_str(), nullptr), kInvalid,
              "qtrain_bundle_open: out is NULL");
  expectError(qtrain_bundle_get_info(nullptr, &info), kInvalid,
              "qtrain_bundle_get_info: bundle is NULL");
  expectError(qtrain_bundle_get_info(toy.bundle, nullptr), kInvalid,
              "qtrain_bundle_get_info: info is NULL");
  expectError(qtrain_trainer_create(nullptr, &options, &trainer), kInvalid,
              "qtrain_trainer_create: bundle is NULL");
  expectError(qtrain_trainer_create(toy.bundle, nullptr, &trainer), kInvalid,
              "qtrain_trainer_create: options is NULL");
  expectError(qtrain_trainer_create(toy.bundle, &options, nullptr), kInvalid,
              "qtrain_trainer_create: out is NULL");
  expectError(
      qtrain_trainer_step(nullptr, batch.x.data(), batch.labels.data(), &loss),
      kInvalid, "qtrain_trainer_step: trainer is NULL");
  expectError(
      qtrain_trainer_step(toy.trainer, nullptr, batch.labels.data(), &loss),
      kInvalid, "qtrain_trainer_step: x is NULL");
  expectError(qtrain_trainer_step(toy.trainer, batch.x.data(), nullptr, &loss),
              kInvalid, "qtrain_trainer_step: labels is NULL");
  expectError(qtrain_trainer_eval(nullptr, batch.x.data(), 0, logits), kInvalid,
              "qtrain_trainer_eval: trainer is NULL");
  expectError(qtrain_trainer_eval(toy.trainer, nullptr, 0, logits), kInvalid,
              "qtrain_trainer_eval: x is NULL");
  expectError(qtrain_trainer_eval(toy.trainer, batch.x.data(), 0, nullptr),
              kInvalid, "qtrain_trainer_eval: logits is NULL");
  expectError(qtrain_trainer_get_step(nullptr, &value), kInvalid,
              "qtrain_trainer_get_step: trainer is NULL");
  expectError(qtrain_trainer_get_step(toy.trainer, nullptr), kInvalid,
              "qtrain_trainer_get_step: step is NULL");
  expectError(qtrain_trainer_get_bits(nullptr, nullptr, nullptr), kInvalid,
              "qtrain_trainer_get_bits: trainer is NULL");
  expectError(qtrain_trainer_get_bitops(nullptr, nullptr, nullptr), kInvalid,
              "qtrain_trainer_get_bitops: trainer is NULL");
  expectError(qtrain_trainer_num_parameters(nullptr, &value), kInvalid,
              "qtrain_trainer_num_parameters: trainer is NULL");
  expectError(qtrain_trainer_num_parameters(toy.trainer, nullptr), kInvalid,
              "qtrain_trainer_num_parameters: count is NULL");
  expectError(qtrain_trainer_get_parameter(nullptr, 0, &tensor), kInvalid,
              "qtrain_trainer_get_parameter: trainer is NULL");
  expectError(qtrain_trainer_get_parameter(toy.trainer, 0, nullptr), kInvalid,
              "qtrain_trainer_get_parameter: tensor is NULL");
  expectError(qtrain_trainer_find_parameter(nullptr, "w", &value), kInvalid,
              "qtrain_trainer_find_parameter: trainer is NULL");
  expectError(qtrain_trainer_find_parameter(toy.trainer, nullptr, &value),
              kInvalid, "qtrain_trainer_find_parameter: name is NULL");
  expectError(qtrain_trainer_find_parameter(toy.trainer, "w", nullptr),
              kInvalid, "qtrain_trainer_find_parameter: index is NULL");
  expectError(qtrain_trainer_num_state(nullptr, &value), kInvalid,
              "qtrain_trainer_num_state: trainer is NULL");
  expectError(qtrain_trainer_num_state(toy.trainer, nullptr), kInvalid,
              "qtrain_trainer_num_state: count is NULL");
  expectError(qtrain_trainer_get_state(nullptr, 0, &tensor), kInvalid,
              "qtrain_trainer_get_state: trainer is NULL");
  expectError(qtrain_trainer_get_state(toy.trainer, 0, nullptr), kInvalid,
              "qtrain_trainer_get_state: tensor is NULL");
  // No-ops.
  qtrain_bundle_close(nullptr);
  qtrain_trainer_destroy(nullptr);
  qtrain_trainer_options_init(nullptr);
}

TEST(CApiTest, BadIndicesNamesAndSizes) {
  Toy toy;
  qtrain_tensor tensor;
  tensor.struct_size = sizeof(tensor);
  const qtrain_status kInvalid = QTRAIN_ERROR_INVALID_ARGUMENT;
  expectError(qtrain_trainer_get_parameter(toy.trainer, 4, &tensor), kInvalid,
              "qtrain_trainer_get_parameter: index 4 is outside [0, 4)");
  expectError(qtrain_trainer_get_parameter(toy.trainer, -1, &tensor), kInvalid,
              "qtrain_trainer_get_parameter: index -1 is outside [0, 4)");
  expectError(qtrain_trainer_get_state(toy.trainer, 1, &tensor), kInvalid,
              "qtrain_trainer_get_state: index 1 is outside [0, 1)");
  int64_t index = 77;
  expectError(qtrain_trainer_find_parameter(toy.trainer, "nope", &index),
              kInvalid,
              "qtrain_trainer_find_parameter: no parameter named "
              "'nope'");
  EXPECT_EQ(index, 77);

  tensor.struct_size = 8;
  expectError(qtrain_trainer_get_parameter(toy.trainer, 0, &tensor), kInvalid,
              "qtrain_trainer_get_parameter: struct_size 8 is smaller than");
  expectError(qtrain_trainer_get_state(toy.trainer, 0, &tensor), kInvalid,
              "qtrain_trainer_get_state: struct_size 8 is smaller than");
  qtrain_bundle_info info;
  info.struct_size = 4;
  expectError(qtrain_bundle_get_info(toy.bundle, &info), kInvalid,
              "qtrain_bundle_get_info: struct_size 4 is smaller than");

  ToyBatch batch = toyBatch();
  batch.labels[0] = 9;
  expectError(qtrain_trainer_step(toy.trainer, batch.x.data(),
                                  batch.labels.data(), nullptr),
              kInvalid, "step: labels[0] = 9 is outside [0, 3)");
  float logits[24];
  expectError(qtrain_trainer_eval(toy.trainer, batch.x.data(), 2, logits),
              QTRAIN_ERROR_MISSING_VARIANT,
              "eval at 2-bit forward: site 'site0' has no 2-bit variant");
  expectError(qtrain_trainer_eval(toy.trainer, batch.x.data(), 99, logits),
              kInvalid, "eval: bits must be in [0, 16] or -1, got 99");
}

TEST(CApiTest, OptionsStructSize) {
  qtrain_bundle *bundle = nullptr;
  ASSERT_EQ(qtrain_bundle_open(toyBundleDir().c_str(), &bundle), QTRAIN_OK);
  qtrain_trainer *trainer = nullptr;
  // A newer caller's larger struct: fine while the unknown tail is zero.
  struct Newer {
    qtrain_trainer_options options;
    uint64_t futureField;
  } newer;
  std::memset(&newer, 0, sizeof(newer));
  qtrain_trainer_options_init(&newer.options);
  newer.options.struct_size = sizeof(newer);
  newer.options.total_steps = 64;
  ASSERT_EQ(qtrain_trainer_create(bundle, &newer.options, &trainer), QTRAIN_OK)
      << qtrain_last_error();
  qtrain_trainer_destroy(trainer);
  trainer = nullptr;
  newer.futureField = 1;
  expectError(qtrain_trainer_create(bundle, &newer.options, &trainer),
              QTRAIN_ERROR_UNSUPPORTED,
              "qtrain_trainer_create: options set fields this runtime does "
              "not know (built against a newer qtrain.h)");
  EXPECT_EQ(trainer, nullptr);
  newer.options.struct_size = 12;
  expectError(qtrain_trainer_create(bundle, &newer.options, &trainer),
              QTRAIN_ERROR_INVALID_ARGUMENT,
              "qtrain_trainer_create: options->struct_size 12 is smaller than");
  qtrain_bundle_close(bundle);
}

TEST(CApiTest, OpenErrorsMapToStatuses) {
  qtrain_bundle *bundle = nullptr;
  expectError(qtrain_bundle_open("/nonexistent.qtb", &bundle), QTRAIN_ERROR_IO,
              "/nonexistent.qtb/manifest.json: cannot open");
  expectError(qtrain_bundle_open("", &bundle), QTRAIN_ERROR_INVALID_ARGUMENT,
              "bundle directory: empty path");
  {
    ToyBundle toy;
    toy.writeText("{\"format\": ");
    expectError(qtrain_bundle_open(toy.dir.c_str(), &bundle),
                QTRAIN_ERROR_FORMAT,
                "manifest.json: invalid JSON: parse error");
  }
  {
    ToyBundle toy;
    toy.manifest["version"] = 7;
    toy.write();
    expectError(qtrain_bundle_open(toy.dir.c_str(), &bundle),
                QTRAIN_ERROR_UNSUPPORTED,
                "unsupported bundle version 7 (this runtime reads 1)");
  }
  {
    ToyBundle toy;
    toy.manifest["sites"][0]["variants"][3]["symbol"] = "missing_symbol";
    toy.write();
    expectError(qtrain_bundle_open(toy.dir.c_str(), &bundle),
                QTRAIN_ERROR_FORMAT,
                "site 'site0' variant 5/8: symbol 'missing_symbol' missing "
                "from ");
  }
  EXPECT_EQ(bundle, nullptr);
}

TEST(CApiTest, CreateErrorsMapToStatuses) {
  qtrain_bundle *bundle = nullptr;
  ASSERT_EQ(qtrain_bundle_open(toyBundleDir().c_str(), &bundle), QTRAIN_OK);
  qtrain_trainer *trainer = nullptr;
  qtrain_trainer_options options;
  qtrain_trainer_options_init(&options);
  expectError(qtrain_trainer_create(bundle, &options, &trainer),
              QTRAIN_ERROR_INVALID_ARGUMENT,
              "total steps must be in [1, 2^31 - 1], got 0");
  options.total_steps = 640;
  options.schedule = "cpt:2:8";
  expectError(qtrain_trainer_create(bundle, &options, &trainer),
              QTRAIN_ERROR_MISSING_VARIANT,
              "schedule 'cpt:2:8' needs 2-bit forward / 8-bit backward, but "
              "site 'site0' has no such variant");
  options.schedule = "ldp";
  expectError(qtrain_trainer_create(bundle, &options, &trainer),
              QTRAIN_ERROR_UNSUPPORTED,
              "schedule 'ldp' learns the bits per layer, but this bundle has "
              "no learnable precisions (compile it with --policy=ldp)");
  options.schedule = "cpt:3:eight";
  expectError(qtrain_trainer_create(bundle, &options, &trainer),
              QTRAIN_ERROR_INVALID_ARGUMENT, "invalid schedule 'cpt:3:eight'");
  options.schedule = "";
  options.grad_schedule = "static:4";
  expectError(qtrain_trainer_create(bundle, &options, &trainer),
              QTRAIN_ERROR_MISSING_VARIANT,
              "needs 3-bit forward / 4-bit backward");
  EXPECT_EQ(trainer, nullptr);
  qtrain_bundle_close(bundle);
}

TEST(CApiTest, LastErrorIsPerThread) {
  qtrain_bundle *bundle = nullptr;
  EXPECT_NE(qtrain_bundle_open(nullptr, &bundle), QTRAIN_OK);
  std::string here = qtrain_last_error();
  EXPECT_EQ(here, "qtrain_bundle_open: dir is NULL");
  std::string there = "unset";
  std::thread([&] {
    there = qtrain_last_error();
    qtrain_bundle *other = nullptr;
    EXPECT_EQ(qtrain_bundle_open("/nonexistent.qtb", &other), QTRAIN_ERROR_IO);
  }).join();
  EXPECT_EQ(there, "");
  EXPECT_EQ(std::string(qtrain_last_error()), here);
  // Success leaves the message alone.
  Toy toy;
  EXPECT_EQ(std::string(qtrain_last_error()), here);
}

//===----------------------------------------------------------------------===//
// The example program (examples/runtime/train_toy.cpp)
//===----------------------------------------------------------------------===//

/// Runs `command` with stderr folded into stdout; returns the exit status.
int run(const std::string &command, std::string &output) {
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return -1;
  char buffer[4096];
  size_t n;
  output.clear();
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    output.append(buffer, n);
  int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(CApiExampleTest, TrainsTheToyBundle) {
  std::string output;
  ASSERT_EQ(run(std::string("'") + QTRAIN_TRAIN_TOY_EXE + "' '" +
                    toyBundleDir() + "' --steps=64",
                output),
            0)
      << output;
  std::istringstream lines(output);
  std::string line;
  qtrain::rt::Schedule cpt = qtrain::rt::Schedule::cpt(3, 8);
  float first = -1, last = -1;
  int steps = 0;
  while (std::getline(lines, line) && line.rfind("step ", 0) == 0) {
    long long step;
    int bits, gradBits;
    float loss;
    ASSERT_EQ(std::sscanf(line.c_str(), "step %lld bits %d/%d loss %f", &step,
                          &bits, &gradBits, &loss),
              4)
        << line;
    EXPECT_EQ(step, steps);
    EXPECT_EQ(bits, qtrain::rt::scheduleBits(cpt, step, 64));
    EXPECT_EQ(gradBits, 8);
    if (steps == 0)
      first = loss;
    last = loss;
    ++steps;
  }
  EXPECT_EQ(steps, 64);
  EXPECT_LT(last, first);
  EXPECT_THAT(line, StartsWith("eval fp32 accuracy "));
}

TEST(CApiExampleTest, ReportsErrors) {
  std::string output;
  EXPECT_EQ(run(std::string("'") + QTRAIN_TRAIN_TOY_EXE + "' /nonexistent.qtb",
                output),
            1);
  EXPECT_THAT(output, HasSubstr("qtrain-train-toy: opening the bundle: "
                                "QTRAIN_ERROR_IO: /nonexistent.qtb/"
                                "manifest.json: cannot open"));
  EXPECT_EQ(run(std::string("'") + QTRAIN_TRAIN_TOY_EXE + "' '" +
                    toyBundleDir() + "' --steps=10",
                output),
            1);
  EXPECT_THAT(output, HasSubstr("creating the trainer: "
                                "QTRAIN_ERROR_INVALID_ARGUMENT: schedule "
                                "'cpt:3:8' over 10 steps"));
  EXPECT_EQ(run(std::string("'") + QTRAIN_TRAIN_TOY_EXE + "'", output), 2);
  EXPECT_THAT(output, HasSubstr("usage: qtrain-train-toy BUNDLE"));
}

} // namespace
