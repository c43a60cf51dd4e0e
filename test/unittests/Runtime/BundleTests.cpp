//===- BundleTests.cpp - Tests of bundle reading and validation ----------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/Sha256.h"

#include "fixtures/ToyBundle.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <dlfcn.h>
#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include <string>

using namespace qtrain::rt;
using namespace qtrain::rt::testing;
using json = nlohmann::json;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

/// Opens `dir` expecting failure of `kind`; returns the message.
std::string openError(const std::string &dir, ErrorKind kind) {
  std::unique_ptr<Bundle> bundle;
  ErrorKind got = ErrorKind::None;
  Status s = openBundle(dir, bundle, &got);
  EXPECT_TRUE(s.failed());
  EXPECT_EQ(got, kind) << s.message();
  EXPECT_EQ(bundle, nullptr);
  return s.message();
}

/// Writes the edited manifest of `toy` and returns the Format error.
std::string formatError(const ToyBundle &toy) {
  toy.write();
  return openError(toy.dir, ErrorKind::Format);
}

/// Parses `text` (in memory) expecting a Format error; returns it.
std::string parseError(const std::string &text) {
  Manifest m;
  ErrorKind kind = ErrorKind::None;
  Status s = parseManifest(text, "manifest.json", m, &kind);
  EXPECT_TRUE(s.failed());
  EXPECT_EQ(kind, ErrorKind::Format) << s.message();
  return s.message();
}

TEST(BundleTest, OpensTheToyBundle) {
  std::unique_ptr<Bundle> bundle;
  ErrorKind kind = ErrorKind::Io;
  Status s = openBundle(toyBundleDir() + "//", bundle, &kind);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(kind, ErrorKind::None);
  EXPECT_EQ(bundle->getDirectory(), toyBundleDir());
  const Manifest &m = bundle->getManifest();
  EXPECT_EQ(m.format, "qtrain-bundle");
  EXPECT_EQ(m.version, 1);
  EXPECT_EQ(m.compiler.name, "hand-written");
  EXPECT_EQ(m.compiler.version, "0.1.0");
  EXPECT_EQ(m.library, "model.so");
  EXPECT_EQ(m.trainEntry, "qtrain_train_step");
  EXPECT_EQ(m.evalEntry, "qtrain_eval_step");
  EXPECT_EQ(m.batch, 8);
  EXPECT_EQ(m.classes, 3);
  EXPECT_EQ(m.input.name, "x");
  EXPECT_EQ(m.input.shape, (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(m.input.numel, 32);
  EXPECT_EQ(m.input.dtype, DType::F32);
  EXPECT_EQ(m.labels.name, "labels");
  EXPECT_EQ(m.labels.shape, (std::vector<int64_t>{8}));
  EXPECT_EQ(m.labels.dtype, DType::I64);
  ASSERT_EQ(m.parameters.size(), 4u);
  EXPECT_EQ(m.parameters[0].name, "w");
  EXPECT_EQ(m.parameters[0].shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(m.parameters[0].numel, 12);
  EXPECT_EQ(m.parameters[0].init.kind, InitKind::KaimingUniform);
  EXPECT_EQ(m.parameters[0].init.fanIn, 4);
  EXPECT_EQ(m.parameters[1].init.kind, InitKind::BiasUniform);
  EXPECT_EQ(m.parameters[2].init.kind, InitKind::Zeros);
  EXPECT_EQ(m.parameters[3].init.kind, InitKind::File);
  EXPECT_EQ(m.parameters[3].init.path, "params/f.bin");
  ASSERT_EQ(m.state.size(), 1u);
  EXPECT_EQ(m.state[0].name, "trace");
  EXPECT_EQ(m.state[0].kind, "trace");
  EXPECT_EQ(m.controls,
            (std::vector<std::string>{"bits", "grad_bits", "seed", "step"}));
  EXPECT_EQ(m.schedule, "cpt:3:8");
  EXPECT_EQ(m.gradSchedule, "static:8");
  ASSERT_EQ(m.sites.size(), 2u);
  EXPECT_EQ(m.sites[0].name, "site0");
  EXPECT_EQ(m.sites[0].op, "matmul_transpose_b");
  EXPECT_EQ(m.sites[0].macs, 96);
  ASSERT_EQ(m.sites[1].variants.size(), 8u);
  EXPECT_EQ(m.sites[1].variants[0].bits, 8);
  EXPECT_EQ(m.sites[1].variants[0].gradBits, 4);
  EXPECT_EQ(m.sites[1].variants[0].symbol, "site1_b8_g4");

  EXPECT_NE(bundle->getTrainStep(), nullptr);
  EXPECT_NE(bundle->getEvalStep(), nullptr);
  EXPECT_NE(bundle->getVariantAddress(1, 0), nullptr);
  EXPECT_NE(bundle->getVariantAddress(1, 0), bundle->getVariantAddress(0, 7));
  EXPECT_TRUE(bundle->getFileInit(0).empty());
  EXPECT_EQ(bundle->getFileInit(3), (std::vector<float>{0.25f, -0.5f, 0.125f}));
}

TEST(BundleTest, ClosesTheLibraryWhenDestroyed) {
  ToyBundle toy;
  std::unique_ptr<Bundle> bundle;
  ASSERT_TRUE(openBundle(toy.dir, bundle).isOk());
  void *handle = dlopen(toy.libraryPath().c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr) << "the bundle should hold the library";
  dlclose(handle);
  bundle.reset();
  EXPECT_EQ(dlopen(toy.libraryPath().c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr);
}

TEST(BundleTest, LibraryHashIsChecked) {
  ToyBundle toy;
  std::string actual;
  ASSERT_TRUE(sha256File(toy.libraryPath(), actual).isOk());
  toy.manifest["library_sha256"] = actual;
  toy.write();
  std::unique_ptr<Bundle> bundle;
  ASSERT_TRUE(openBundle(toy.dir, bundle).isOk());
  EXPECT_EQ(bundle->getManifest().librarySha256, actual);
  bundle.reset();
  // Another library than the compiler's is not loaded.
  std::string other = actual;
  other[0] = other[0] == '0' ? '1' : '0';
  toy.manifest["library_sha256"] = other;
  EXPECT_NE(formatError(toy).find("does not match the manifest's "
                                  "library_sha256 " +
                                  other),
            std::string::npos);
  toy.manifest["library_sha256"] = "ABC";
  EXPECT_NE(formatError(toy).find(
                "library_sha256: expected 64 lowercase hex digits, got 'ABC'"),
            std::string::npos);
}

TEST(Sha256Test, Fips180Vectors) {
  EXPECT_EQ(sha256Hex("", 0),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc", 3),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::string two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(sha256Hex(two.data(), two.size()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // A million 'a', fed in uneven pieces.
  std::string a(1000000, 'a');
  Sha256 hash;
  for (size_t at = 0, piece = 1; at < a.size();
       at += piece, piece = piece * 3 % 1000 + 1)
    hash.update(a.data() + at, std::min(piece, a.size() - at));
  EXPECT_EQ(hash.hexDigest(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(BundleTest, KernelKindsAreRead) {
  ToyBundle toy;
  toy.manifest["sites"][0]["variants"][1]["kernels"] = {
      {"forward", "i8"}, {"input_grad", "f32"}, {"weight_grad", "i16"}};
  toy.write();
  std::unique_ptr<Bundle> bundle;
  Status s = openBundle(toy.dir, bundle);
  ASSERT_TRUE(s.isOk()) << s.message();
  const VariantSpec &v = bundle->getManifest().sites[0].variants[1];
  EXPECT_EQ(v.kernels.at("forward"), "i8");
  EXPECT_EQ(v.kernels.at("input_grad"), "f32");
  EXPECT_EQ(v.kernels.at("weight_grad"), "i16");
  EXPECT_TRUE(bundle->getManifest().sites[0].variants[0].kernels.empty());
}

TEST(BundleTest, UnknownFieldsAreIgnored) {
  ToyBundle toy;
  toy.manifest["future"] = {{"anything", 1}};
  toy.manifest["sites"][0]["flops"] = 192;
  toy.write();
  std::unique_ptr<Bundle> bundle;
  Status s = openBundle(toy.dir, bundle);
  EXPECT_TRUE(s.isOk()) << s.message();
}

TEST(BundleTest, ScalarParametersAndEmptyStateAndSitesAreAllowed) {
  json m = ToyBundle().manifest;
  m["parameters"][2]["shape"] = json::array();
  m["state"] = json::array();
  m["sites"] = json::array();
  Manifest out;
  Status s = parseManifest(m.dump(), "manifest.json", out);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_TRUE(out.parameters[2].shape.empty());
  EXPECT_EQ(out.parameters[2].numel, 1);
  EXPECT_TRUE(out.state.empty());
  EXPECT_TRUE(out.sites.empty());
}

//===----------------------------------------------------------------------===//
// Files and directories
//===----------------------------------------------------------------------===//

TEST(BundleErrorTest, EmptyDirectory) {
  EXPECT_EQ(openError("", ErrorKind::InvalidArgument),
            "bundle directory: empty path");
}

TEST(BundleErrorTest, MissingDirectory) {
  std::string message = openError("/nonexistent/qtrain.qtb", ErrorKind::Io);
  EXPECT_EQ(message, "/nonexistent/qtrain.qtb/manifest.json: cannot open: No "
                     "such file or directory");
}

TEST(BundleErrorTest, ManifestIsADirectory) {
  ToyBundle toy;
  std::filesystem::remove(toy.manifestPath());
  std::filesystem::create_directory(toy.manifestPath());
  EXPECT_EQ(openError(toy.dir, ErrorKind::Format),
            toy.manifestPath() +
                ": not a regular file (a directory); refusing to read it");
}

TEST(BundleErrorTest, MissingLibrary) {
  ToyBundle toy;
  std::filesystem::remove(toy.libraryPath());
  std::string message = openError(toy.dir, ErrorKind::Io);
  EXPECT_THAT(message, StartsWith(toy.libraryPath() + ": cannot open: "));
}

TEST(BundleErrorTest, GarbageLibrary) {
  ToyBundle toy;
  toy.writeFile("model.so", "this is not an ELF file");
  std::string message = openError(toy.dir, ErrorKind::Format);
  EXPECT_EQ(message, toy.libraryPath() +
                         ": not a loadable shared library: the file has 23 "
                         "bytes, fewer than an ELF header; refusing to load "
                         "it");
}

TEST(BundleErrorTest, TruncatedLibraryIsNotMapped) {
  // Regression: dlopen mapped the segments of a truncated library past the
  // end of the file, and the process died of SIGBUS. Without section
  // headers (e_shoff 0, as a stripped file may be) only the program headers
  // show the truncation.
  ToyBundle toy;
  std::ifstream in(toy.libraryPath(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  in.close();
  ASSERT_GT(bytes.size(), sizeof(Elf64_Ehdr));
  // Cut inside the loadable segment that ends last: where the segments end
  // depends on the build (a sanitizer build's fixture has long sections
  // after them), so the cut is found from the program headers.
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  uint64_t end = 0;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    size_t at = header.e_phoff + size_t(i) * header.e_phentsize;
    ASSERT_LE(at + sizeof(segment), bytes.size());
    std::memcpy(&segment, bytes.data() + at, sizeof(segment));
    if (segment.p_type == PT_LOAD && segment.p_filesz > 0)
      end = std::max<uint64_t>(end, segment.p_offset + segment.p_filesz);
  }
  size_t cut = size_t(end) - 1;
  ASSERT_GT(cut, size_t(header.e_phoff) + header.e_phnum * header.e_phentsize);
  std::memset(&bytes[0x28], 0, 8); // e_shoff of an ELF64 header
  toy.writeFile("model.so", bytes.substr(0, cut));
  std::string message = openError(toy.dir, ErrorKind::Format);
  EXPECT_THAT(message, StartsWith(toy.libraryPath() +
                                  ": not a loadable shared library: segment "));
  EXPECT_THAT(message, HasSubstr("ends past the end of the file (" +
                                 std::to_string(cut) + " bytes; truncated?)"));
}

TEST(BundleErrorTest, MissingEntryPoint) {
  ToyBundle toy;
  toy.manifest["entry"]["eval"] = "qtrain_eval_step_v2";
  EXPECT_EQ(formatError(toy), toy.libraryPath() +
                                  ": entry point 'qtrain_eval_step_v2' "
                                  "(entry.eval in manifest.json) is missing");
}

TEST(BundleErrorTest, MissingVariantSymbol) {
  ToyBundle toy;
  toy.manifest["sites"][1]["name"] = "site3";
  toy.manifest["sites"][1]["variants"][6]["symbol"] = "site3_b3_g8";
  EXPECT_EQ(formatError(toy), "site 'site3' variant 3/8: symbol 'site3_b3_g8' "
                              "missing from " +
                                  toy.libraryPath());
}

TEST(BundleErrorTest, MissingFp32VariantSymbol) {
  ToyBundle toy;
  toy.manifest["sites"][0]["variants"][0]["symbol"] = "site0_f32";
  EXPECT_EQ(formatError(toy), "site 'site0' variant fp32/fp32: symbol "
                              "'site0_f32' missing from " +
                                  toy.libraryPath());
}

TEST(BundleErrorTest, FileInitOfTheWrongSize) {
  ToyBundle toy;
  toy.writeFile("params/f.bin", std::string(8, '\0'));
  EXPECT_EQ(openError(toy.dir, ErrorKind::Format),
            toy.dir + "/params/f.bin: expected 12 bytes (3 f32 values of "
                      "parameter 'f'), got 8");
  toy.writeFile("params/f.bin", std::string(13, '\0'));
  EXPECT_EQ(openError(toy.dir, ErrorKind::Format),
            toy.dir + "/params/f.bin: expected 12 bytes (3 f32 values of "
                      "parameter 'f'), got 13");
}

TEST(BundleErrorTest, MissingFileInit) {
  ToyBundle toy;
  std::filesystem::remove(toy.dir + "/params/f.bin");
  EXPECT_EQ(openError(toy.dir, ErrorKind::Io),
            toy.dir + "/params/f.bin: cannot open: No such file or directory "
                      "(the initial values of parameter 'f')");
}

TEST(BundleErrorTest, FileInitIsADirectory) {
  ToyBundle toy;
  std::filesystem::remove(toy.dir + "/params/f.bin");
  std::filesystem::create_directory(toy.dir + "/params/f.bin");
  EXPECT_EQ(openError(toy.dir, ErrorKind::Format),
            toy.dir + "/params/f.bin: not a regular file (a directory); "
                      "refusing to read it (the initial values of parameter "
                      "'f')");
}

TEST(BundleErrorTest, FileInitNotFinite) {
  // The bad init file is named with the parameter and the element, not
  // left to the first step to report as a diverged training.
  ToyBundle toy;
  for (auto [value, name] :
       {std::pair(NAN, "NaN"), std::pair(-INFINITY, "-inf"),
        std::pair(INFINITY, "inf")}) {
    float values[3] = {0.5f, 0.25f, value};
    toy.writeFile("params/f.bin",
                  std::string(reinterpret_cast<const char *>(values), 12));
    EXPECT_EQ(openError(toy.dir, ErrorKind::Format),
              toy.dir + "/params/f.bin: element 2 of parameter 'f' is " + name +
                  ": a bad init file (initial values must be finite)");
  }
}

//===----------------------------------------------------------------------===//
// JSON syntax
//===----------------------------------------------------------------------===//

TEST(BundleErrorTest, TruncatedManifest) {
  ToyBundle toy;
  std::string text = toy.manifest.dump(2);
  toy.writeText(text.substr(0, text.size() / 2));
  std::string message = openError(toy.dir, ErrorKind::Format);
  EXPECT_THAT(message, StartsWith(toy.manifestPath() +
                                  ": invalid JSON: parse error at line "));
  EXPECT_THAT(message, HasSubstr("unexpected end of input"));
}

TEST(BundleErrorTest, EmptyManifest) {
  EXPECT_EQ(parseError(""),
            "manifest.json: invalid JSON: parse error at line 1, column 1: "
            "syntax error while parsing value - unexpected end of input; "
            "expected '[', '{', or a literal");
}

TEST(BundleErrorTest, GarbageManifest) {
  std::string message = parseError("{\"format\": \"qtrain-bundle\",\n  ver");
  EXPECT_THAT(message,
              StartsWith("manifest.json: invalid JSON: parse error at line 2, "
                         "column 3: syntax error while parsing object key"));
  EXPECT_THAT(parseError("{} trailing"),
              HasSubstr("syntax error while parsing value - invalid literal; "
                        "last read: '{} tra'; expected end of input"));
  EXPECT_THAT(parseError("\x7f\x45\x4c\x46\x02"),
              StartsWith("manifest.json: invalid JSON: parse error at line 1, "
                         "column 1"));
}

TEST(BundleErrorTest, TopLevelNotAnObject) {
  EXPECT_EQ(parseError("[1, 2]"),
            "manifest.json: expected a JSON object at the top level, got an "
            "array");
  EXPECT_EQ(parseError("42"), "manifest.json: expected a JSON object at the "
                              "top level, got 42");
}

//===----------------------------------------------------------------------===//
// Format and version
//===----------------------------------------------------------------------===//

TEST(BundleErrorTest, WrongVersion) {
  ToyBundle toy;
  toy.manifest["version"] = 2;
  // Nothing else is checked for another version.
  toy.manifest.erase("sites");
  toy.write();
  EXPECT_EQ(openError(toy.dir, ErrorKind::Unsupported),
            toy.manifestPath() +
                ": unsupported bundle version 2 (this runtime reads 1)");
  toy.manifest["version"] = 0;
  toy.write();
  EXPECT_EQ(openError(toy.dir, ErrorKind::Unsupported),
            toy.manifestPath() +
                ": unsupported bundle version 0 (this runtime reads 1)");
}

TEST(BundleErrorTest, VersionOfTheWrongType) {
  ToyBundle toy;
  toy.manifest["version"] = "1";
  EXPECT_EQ(formatError(toy),
            toy.manifestPath() + ": version: expected an integer, got \"1\"");
  toy.manifest["version"] = 1.5;
  EXPECT_EQ(formatError(toy),
            toy.manifestPath() + ": version: expected an integer, got 1.5");
}

TEST(BundleErrorTest, WrongFormat) {
  ToyBundle toy;
  toy.manifest["format"] = "onnx";
  EXPECT_EQ(formatError(toy),
            toy.manifestPath() +
                ": format: expected \"qtrain-bundle\", got \"onnx\"");
}

//===----------------------------------------------------------------------===//
// Missing fields and wrong types
//===----------------------------------------------------------------------===//

TEST(BundleErrorTest, MissingTopLevelFields) {
  for (const char *field :
       {"format", "version", "compiler", "library", "entry", "batch", "classes",
        "input", "labels", "parameters", "state", "controls", "schedule",
        "grad_schedule", "sites"}) {
    ToyBundle toy;
    toy.manifest.erase(field);
    EXPECT_EQ(formatError(toy),
              toy.manifestPath() + ": missing required field '" + field + "'");
  }
}

TEST(BundleErrorTest, MissingNestedFields) {
  struct Case {
    json::json_pointer pointer;
    std::string message;
  } cases[] = {
      {json::json_pointer("/compiler/flags"),
       "compiler: missing required field 'flags'"},
      {json::json_pointer("/entry/eval"),
       "entry: missing required field 'eval'"},
      {json::json_pointer("/input/name"),
       "input: missing required field 'name'"},
      {json::json_pointer("/labels/dtype"),
       "labels: missing required field 'dtype'"},
      {json::json_pointer("/parameters/1/init"),
       "parameters[1]: missing required field 'init'"},
      {json::json_pointer("/parameters/0/init/fan_in"),
       "parameters[0].init: missing required field 'fan_in'"},
      {json::json_pointer("/parameters/3/init/path"),
       "parameters[3].init: missing required field 'path'"},
      {json::json_pointer("/parameters/2/shape"),
       "parameters[2]: missing required field 'shape'"},
      {json::json_pointer("/state/0/kind"),
       "state[0]: missing required field 'kind'"},
      {json::json_pointer("/sites/1/macs"),
       "sites[1]: missing required field 'macs'"},
      {json::json_pointer("/sites/0/variants/2/symbol"),
       "sites[0].variants[2]: missing required field 'symbol'"},
      {json::json_pointer("/sites/0/variants/2/grad_bits"),
       "sites[0].variants[2]: missing required field 'grad_bits'"},
  };
  for (const Case &c : cases) {
    ToyBundle toy;
    json &parent = toy.manifest[c.pointer.parent_pointer()];
    std::string key = c.pointer.back();
    parent.erase(key);
    EXPECT_EQ(formatError(toy), toy.manifestPath() + ": " + c.message);
  }
}

TEST(BundleErrorTest, WrongTypes) {
  struct Case {
    std::string pointer;
    json value;
    std::string message;
  } cases[] = {
      {"/batch", "8", "batch: expected a positive integer, got \"8\""},
      {"/batch", 8.0, "batch: expected a positive integer, got 8.0"},
      {"/batch", 0, "batch: expected a positive integer, got 0"},
      {"/classes", -3, "classes: expected a positive integer, got -3"},
      {"/classes", nullptr, "classes: expected a positive integer, got null"},
      {"/compiler", "qtrain", "compiler: expected an object, got \"qtrain\""},
      {"/compiler/name", 3, "compiler.name: expected a string, got 3"},
      {"/library", "", "library: expected a non-empty string"},
      {"/entry", json::array(), "entry: expected an object, got an array"},
      {"/entry/train", true, "entry.train: expected a string, got true"},
      {"/input", 1, "input: expected an object, got 1"},
      {"/input/shape", "8x4", "input.shape: expected an array, got \"8x4\""},
      {"/input/dtype", "f16",
       "input.dtype: unknown dtype 'f16' (expected f32 or i64)"},
      {"/input/max_value", 63,
       "input.max_value: only an i64 (token id) input has a max_value"},
      {"/labels/dtype", "f32",
       "labels.dtype: expected \"i64\" (labels are class indices), got "
       "\"f32\""},
      {"/parameters", json::object(),
       "parameters: expected an array, got an object"},
      {"/parameters", json::array(),
       "parameters: expected at least one parameter"},
      {"/parameters/2", "z", "parameters[2]: expected an object, got \"z\""},
      {"/parameters/2/shape/1", -4,
       "parameters[2].shape[1]: expected a positive integer, got -4"},
      {"/parameters/2/shape",
       {3, 0},
       "parameters[2].shape[1]: expected a positive integer, got 0"},
      {"/parameters/0/shape",
       {1 << 20, 1 << 20, 2},
       "parameters[0].shape: more than 2^40 elements"},
      {"/parameters/0/shape/0", json(uint64_t(1) << 63),
       "parameters[0].shape[0]: expected a positive integer, got "
       "9223372036854775808"},
      {"/parameters/0/dtype", "i64",
       "parameters[0].dtype: expected \"f32\" (parameters are f32 buffers), "
       "got \"i64\""},
      {"/parameters/0/name", "",
       "parameters[0].name: expected a non-empty "
       "string"},
      {"/parameters/0/name", std::string("w\0x", 3),
       "parameters[0].name: string contains a NUL character"},
      {"/parameters/0/init", "kaiming",
       "parameters[0].init: expected an object, got \"kaiming\""},
      {"/parameters/0/init/kind", "xavier",
       "parameters[0].init.kind: unknown init kind 'xavier' (expected "
       "kaiming_uniform, bias_uniform, zeros, ones, normal or file)"},
      {"/parameters/1/init/fan_in", 0,
       "parameters[1].init.fan_in: expected a positive integer, got 0"},
      {"/state", json::object(), "state: expected an array, got an object"},
      {"/state/0/dtype", "i64",
       "state[0].dtype: expected \"f32\" (state tensors are f32 buffers), "
       "got \"i64\""},
      {"/controls", "bits", "controls: expected an array, got \"bits\""},
      {"/controls",
       {"bits", "grad_bits", "step", "seed"},
       "controls: expected [\"bits\", \"grad_bits\", \"seed\", \"step\"] "
       "(the version-1 step ABI)"},
      {"/controls",
       {"bits", "grad_bits", "seed"},
       "controls: expected [\"bits\", \"grad_bits\", \"seed\", \"step\"] "
       "(the version-1 step ABI)"},
      {"/schedule", 8, "schedule: expected a string, got 8"},
      {"/schedule", "cpt:9:3",
       "schedule: invalid schedule 'cpt:9:3' at column 5: min bits '9' is "
       "greater than max bits '3'"},
      {"/grad_schedule", "static:99",
       "grad_schedule: invalid schedule 'static:99' at column 8: static bits "
       "'99' out of range [0, 16]"},
      {"/sites", json::object(), "sites: expected an array, got an object"},
      {"/sites/0", json::array(),
       "sites[0]: expected an object, got an "
       "array"},
      {"/sites/0/macs", -1,
       "sites[0].macs: expected a non-negative integer, got -1"},
      {"/sites/0/variants", json::array(),
       "sites[0].variants: expected at least one variant"},
      {"/sites/0/variants/1", 3,
       "sites[0].variants[1]: expected an object, got 3"},
      {"/sites/0/variants/1/bits", 17,
       "sites[0].variants[1].bits: expected an integer in [0, 16], got 17"},
      {"/sites/1/variants/1/grad_bits", -8,
       "sites[1].variants[1].grad_bits: expected an integer in [0, 16], got "
       "-8"},
      {"/sites/1/variants/1/symbol", json::object(),
       "sites[1].variants[1].symbol: expected a string, got an object"},
      {"/sites/0/variants/1/kernels", "i8",
       "sites[0].variants[1].kernels: expected an object, got \"i8\""},
      {"/sites/0/variants/1/kernels/forward", "int4",
       "sites[0].variants[1].kernels.forward: expected a kernel kind (i8, "
       "i16, f32, bf16 or f64), got \"int4\""},
  };
  for (const Case &c : cases) {
    ToyBundle toy;
    toy.manifest[json::json_pointer(c.pointer)] = c.value;
    EXPECT_EQ(formatError(toy), toy.manifestPath() + ": " + c.message)
        << "at " << c.pointer;
  }
}

//===----------------------------------------------------------------------===//
// Consistency
//===----------------------------------------------------------------------===//

TEST(BundleErrorTest, InputBatchMismatch) {
  ToyBundle toy;
  toy.manifest["input"]["shape"] = {4, 4};
  EXPECT_EQ(formatError(toy), toy.manifestPath() +
                                  ": input.shape: expected the batch size 8 "
                                  "as the first dimension");
  toy.manifest["input"]["shape"] = json::array();
  EXPECT_EQ(formatError(toy), toy.manifestPath() +
                                  ": input.shape: expected the batch size 8 "
                                  "as the first dimension");
}

TEST(BundleTest, TokenIdInputs) {
  ToyBundle toy;
  toy.manifest["input"]["dtype"] = "i64";
  toy.write();
  std::unique_ptr<Bundle> bundle;
  Status s = openBundle(toy.dir, bundle);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(bundle->getManifest().input.dtype, DType::I64);
  EXPECT_EQ(bundle->getManifest().inputMaxValue, -1);
  toy.manifest["input"]["max_value"] = 63;
  toy.write();
  s = openBundle(toy.dir, bundle);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(bundle->getManifest().inputMaxValue, 63);
  for (json bad : {json(-1), json("63"), json(6.5)}) {
    toy.manifest["input"]["max_value"] = bad;
    EXPECT_EQ(formatError(toy),
              toy.manifestPath() +
                  ": input.max_value: expected a non-negative integer, got " +
                  bad.dump())
        << bad;
  }
}

TEST(BundleErrorTest, LabelsBatchMismatch) {
  ToyBundle toy;
  toy.manifest["labels"]["shape"] = {7};
  EXPECT_EQ(formatError(toy), toy.manifestPath() +
                                  ": labels.shape: expected the batch size 8 "
                                  "as the first dimension");
}

TEST(BundleErrorTest, DuplicateNames) {
  {
    ToyBundle toy;
    toy.manifest["sites"][1]["name"] = "site0";
    EXPECT_EQ(formatError(toy), toy.manifestPath() +
                                    ": sites[1].name: duplicate site name "
                                    "'site0' (also sites[0])");
  }
  {
    ToyBundle toy;
    toy.manifest["parameters"][3]["name"] = "b";
    EXPECT_EQ(formatError(toy), toy.manifestPath() +
                                    ": parameters[3].name: duplicate "
                                    "parameter name 'b' (also parameters[1])");
  }
  {
    ToyBundle toy;
    toy.manifest["state"].push_back(toy.manifest["state"][0]);
    EXPECT_EQ(formatError(toy), toy.manifestPath() +
                                    ": state[1].name: duplicate state name "
                                    "'trace' (also state[0])");
  }
}

TEST(BundleErrorTest, DuplicateVariant) {
  ToyBundle toy;
  toy.manifest["sites"][0]["variants"][5]["bits"] = 3;
  EXPECT_EQ(formatError(toy), toy.manifestPath() +
                                  ": sites[0].variants[5]: duplicate variant "
                                  "3/8 in site 'site0' (also "
                                  "sites[0].variants[1])");
}

TEST(BundleErrorTest, PathsLeavingTheBundle) {
  struct Case {
    std::string pointer;
    std::string path;
  } cases[] = {
      {"/library", "../model.so"},
      {"/library", "/usr/lib/model.so"},
      {"/library", "lib/../../model.so"},
      {"/library", ".."},
      {"/parameters/3/init/path", "params/../../f.bin"},
      {"/parameters/3/init/path", "/etc/passwd"},
  };
  for (const Case &c : cases) {
    ToyBundle toy;
    toy.manifest[json::json_pointer(c.pointer)] = c.path;
    std::string field =
        c.pointer == "/library" ? "library" : "parameters[3].init.path";
    EXPECT_EQ(formatError(toy), toy.manifestPath() + ": " + field + ": path '" +
                                    c.path +
                                    "' leaves the bundle directory (paths "
                                    "are relative, without '..')");
  }
}

TEST(BundleTest, PathsWithDotsInNamesStayInside) {
  // "..x" and "./" are not parent references.
  ToyBundle toy;
  std::filesystem::rename(toy.libraryPath(), toy.dir + "/..model.so");
  toy.manifest["library"] = "./..model.so";
  toy.write();
  std::unique_ptr<Bundle> bundle;
  Status s = openBundle(toy.dir, bundle);
  EXPECT_TRUE(s.isOk()) << s.message();
}

TEST(BundleErrorTest, NoKindPointerIsFine) {
  std::unique_ptr<Bundle> bundle;
  EXPECT_TRUE(openBundle("/nonexistent", bundle).failed());
  Manifest m;
  EXPECT_TRUE(parseManifest("{", "m.json", m).failed());
}

} // namespace
