//===- ManifestTests.cpp - Tests of the manifest writer and reader -------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
//
// The compiler writes manifests with printManifest and the runtime reads
// them with parseManifest (Manifest.h): a manifest must survive the trip
// both ways, and the writer must write what qtrain-compile always wrote.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Abi.h"
#include "qtrain/runtime/Manifest.h"

#include "gtest/gtest.h"

#include <fstream>
#include <iterator>
#include <string>
#include <tuple>

using namespace qtrain::rt;

namespace {

TensorSpec tensor(std::string name, std::vector<int64_t> shape, DType dtype) {
  TensorSpec t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.dtype = dtype;
  for (int64_t d : t.shape)
    t.numel *= d;
  return t;
}

/// A manifest with every field and every optional field set.
Manifest fullManifest() {
  Manifest m;
  m.format = kBundleFormat;
  m.version = kBundleFormatVersion;
  m.compiler = {"qtrain-compile", "0.1.0", "a.mlir -o \"b c\".qtb\t\\"};
  m.library = "lib/model.so";
  m.librarySha256 = std::string(64, 'a');
  m.trainEntry = "qtrain_train_step";
  m.evalEntry = "qtrain_eval_step";
  m.batch = 4;
  m.classes = 3;
  m.input = tensor("x", {4, 2}, DType::F32);
  m.labels = tensor("labels", {4}, DType::I64);
  InitKind kinds[] = {InitKind::KaimingUniform, InitKind::BiasUniform,
                      InitKind::Zeros,          InitKind::Ones,
                      InitKind::Normal,         InitKind::File};
  for (InitKind kind : kinds) {
    ParameterSpec p;
    static_cast<TensorSpec &>(p) =
        tensor("p" + std::to_string(m.parameters.size()), {3, 2}, DType::F32);
    p.init.kind = kind;
    if (kind == InitKind::KaimingUniform || kind == InitKind::BiasUniform)
      p.init.fanIn = 2;
    if (kind == InitKind::File)
      p.init.path = "params/" + p.name + ".bin";
    m.parameters.push_back(p);
  }
  ParameterSpec precision;
  static_cast<TensorSpec &>(precision) = tensor("ldp_site0", {}, DType::F32);
  precision.init.kind = InitKind::File;
  precision.init.path = "params/ldp_site0.bin";
  m.parameters.push_back(precision);
  StateSpec plain;
  static_cast<TensorSpec &>(plain) = tensor("state0", {2}, DType::F32);
  plain.kind = "ema";
  StateSpec named = plain;
  named.name = "state1";
  named.kind = "overflow";
  named.tensors = {"P0", "Y0"};
  // Values that print with many digits as doubles.
  named.init = {0.1f, 1e-7f};
  m.state = {plain, named};
  m.controls = {"bits", "grad_bits", "seed", "step"};
  m.schedule = "cpt:3:8";
  m.gradSchedule = "static:8";
  SiteSpec site;
  site.name = "site0";
  site.op = "matmul";
  site.macs = 24;
  site.precision = "ldp_site0";
  // Its index in m.parameters: one parameter per init kind, then it.
  site.precisionParameter = int64_t(std::size(kinds));
  VariantSpec v;
  v.bits = 3;
  v.gradBits = 8;
  v.symbol = "train_step_site0_forward_b3";
  v.kernels = {{"forward", "i8"}, {"input_grad", "i16"}};
  site.variants.push_back(v);
  v.bits = 0;
  v.gradBits = 0;
  v.symbol = "train_step_site0_forward_b0";
  v.kernels.clear();
  site.variants.push_back(v);
  m.sites.push_back(site);
  SiteSpec other = site;
  other.name = "site1";
  other.precision.clear();
  other.precisionParameter = -1;
  m.sites.push_back(other);
  return m;
}

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ManifestTest, StructToTextToStruct) {
  Manifest m = fullManifest();
  std::string text = printManifest(m);
  Manifest read;
  Status s = parseManifest(text, "manifest.json", read);
  ASSERT_TRUE(s.isOk()) << s.message() << "\n" << text;
  EXPECT_TRUE(read == m) << text;
  EXPECT_EQ(abiDescription(read), abiDescription(m));
  EXPECT_EQ(printManifest(read), text);
}

TEST(ManifestTest, EqualityNoticesEachPart) {
  Manifest m = fullManifest();
  EXPECT_TRUE(m == fullManifest());
  Manifest other = m;
  other.state[1].init[1] = 2e-7f;
  EXPECT_FALSE(other == m);
  other = m;
  other.sites[0].variants[0].kernels["weight_grad"] = "f32";
  EXPECT_FALSE(other == m);
  other = m;
  other.parameters[4].init.path = "params/other.bin";
  EXPECT_FALSE(other == m);
  other = m;
  other.labels.numel = 5;
  EXPECT_FALSE(other == m);
}

TEST(ManifestTest, OptionalFieldsAreLeftOutWhenEmpty) {
  Manifest m = fullManifest();
  m.librarySha256.clear();
  m.sites[0].precision.clear();
  m.sites[0].precisionParameter = -1;
  m.state[1].tensors.clear();
  m.state[1].init.clear();
  std::string text = printManifest(m);
  EXPECT_EQ(text.find("library_sha256"), std::string::npos);
  EXPECT_EQ(text.find("\"precision\""), std::string::npos);
  EXPECT_EQ(text.find("\"tensors\""), std::string::npos);
  // Parameter inits are objects; a state's init would be an array.
  EXPECT_EQ(text.find("\"init\": ["), std::string::npos);
  // A variant without kernel kinds still says so.
  EXPECT_NE(text.find("\"kernels\": {}"), std::string::npos);
  Manifest read;
  ASSERT_TRUE(parseManifest(text, "manifest.json", read).isOk());
  EXPECT_TRUE(read == m);
}

TEST(ManifestTest, TokenIdInputAndItsBound) {
  Manifest m = fullManifest();
  std::string f32Description = abiDescription(m);
  EXPECT_NE(f32Description.find("\ninput x f32 [4,2]\n"), std::string::npos);
  m.input.dtype = DType::I64;
  std::string text = printManifest(m);
  EXPECT_EQ(text.find("max_value"), std::string::npos);
  m.inputMaxValue = 63;
  text = printManifest(m);
  EXPECT_NE(text.find("\"max_value\": 63"), std::string::npos);
  Manifest read;
  Status s = parseManifest(text, "manifest.json", read);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_TRUE(read == m);
  // The bound is part of what the library relies on; f32 inputs keep the
  // description they always had.
  std::string description = abiDescription(read);
  EXPECT_NE(description.find("\ninput x i64 [4,2] max_value 63\n"),
            std::string::npos);
  Manifest other = read;
  other.inputMaxValue = 64;
  EXPECT_FALSE(other == read);
  EXPECT_NE(abiDigest(other), abiDigest(read));
}

TEST(ManifestTest, GradFormatOfFp8Errors) {
  Manifest m = fullManifest();
  std::string intDescription = abiDescription(m);
  // Integer errors: no field, and the digest bundles always had.
  EXPECT_EQ(printManifest(m).find("grad_format"), std::string::npos);
  EXPECT_EQ(intDescription.find("grad_format"), std::string::npos);
  m.gradSchedule = "static:8";
  m.gradFormat = "e5m2";
  std::string text = printManifest(m);
  EXPECT_NE(text.find("\"grad_format\": \"e5m2\""), std::string::npos);
  Manifest read;
  Status s = parseManifest(text, "manifest.json", read);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_TRUE(read == m);
  Manifest other = read;
  other.gradFormat = "int";
  EXPECT_FALSE(other == read);
  EXPECT_NE(abiDigest(other), abiDigest(read));
  // A format the runtime does not know, and e5m2 at other backward bits.
  for (auto [from, to, message] :
       {std::tuple<std::string, std::string, std::string>{
            "\"grad_format\": \"e5m2\"", "\"grad_format\": \"e4m3\"",
            "expected \"int\" or \"e5m2\", got 'e4m3'"},
        {"\"grad_schedule\": \"static:8\"", "\"grad_schedule\": \"static:6\"",
         "grad_schedule must be static:8, got 'static:6'"}}) {
    std::string bad = text;
    size_t at = bad.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    bad.replace(at, from.size(), to);
    Manifest refused;
    Status status = parseManifest(bad, "manifest.json", refused);
    ASSERT_TRUE(status.failed()) << to;
    EXPECT_NE(status.message().find("grad_format"), std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find(message), std::string::npos)
        << status.message();
  }
}

TEST(ManifestTest, WritesTheVersionItReads) {
  Manifest m = fullManifest();
  m.version = kBundleFormatVersion + 1;
  Manifest read;
  ErrorKind kind = ErrorKind::None;
  EXPECT_TRUE(
      parseManifest(printManifest(m), "manifest.json", read, &kind).failed());
  EXPECT_EQ(kind, ErrorKind::Unsupported);
}

/// Manifests qtrain-compile wrote before the writer moved here (the fuzz
/// corpus holds them): reading and writing one again gives the same bytes.
class CompilerManifestTest : public ::testing::TestWithParam<const char *> {};

TEST_P(CompilerManifestTest, TextToStructToText) {
  std::string path = std::string(QTRAIN_MANIFEST_CORPUS) + "/" + GetParam();
  std::string text = readText(path);
  Manifest m;
  Status s = parseManifest(text, path, m);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(printManifest(m) + "\n", text);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CompilerManifestTest,
                         ::testing::Values("lenet-cpt.json", "ldp-mlp.json"));

} // namespace
