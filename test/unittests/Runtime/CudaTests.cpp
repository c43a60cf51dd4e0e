//===- CudaTests.cpp - Tests of the CUDA driver and module checks --------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// CudaDriver (loaded with dlopen) and the checks of a bundle's CUDA
/// module at openBundle(). Everything here runs without a GPU; the tests
/// that need one (GpuTest) skip where the driver or a device is missing.
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/CublasLt.h"
#include "qtrain/runtime/CudaDriver.h"
#include "qtrain/runtime/CudaFiniteCheck.h"
#include "qtrain/runtime/CudaGraphs.h"
#include "qtrain/runtime/CudaHostAbi.h"
#include "qtrain/runtime/CudaStepDevice.h"
#include "qtrain/runtime/Sha256.h"

#include "fixtures/EnvOverride.h"
#include "fixtures/ToyBundle.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

using namespace qtrain::rt;
using namespace qtrain::rt::testing;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

/// A shared library of this machine that is not the CUDA driver.
std::string notADriver() {
  for (const char *path : {"/lib/x86_64-linux-gnu/libz.so.1",
                           "/usr/lib/x86_64-linux-gnu/libz.so.1",
                           "/lib/aarch64-linux-gnu/libz.so.1",
                           "/usr/lib64/libz.so.1", "/usr/lib/libz.so.1"})
    if (std::filesystem::exists(path))
      return path;
  // dlopen finds it by name where the path differs.
  return "libz.so.1";
}

TEST(CudaDriverTest, NoDriverIsAClearError) {
  DriverOverride driver("/nonexistent/libcuda.so.1");
  std::unique_ptr<CudaDriver> loaded;
  Status s = CudaDriver::load(loaded);
  ASSERT_TRUE(s.failed());
  EXPECT_EQ(loaded, nullptr);
  EXPECT_THAT(s.message(), StartsWith("no CUDA driver: "
                                      "/nonexistent/libcuda.so.1: "));
  EXPECT_THAT(s.message(), HasSubstr("No such file or directory"));
  EXPECT_THAT(s.message(),
              HasSubstr("(training on the GPU needs an NVIDIA GPU and its "
                        "driver)"));
  // The path is said once.
  EXPECT_EQ(s.message().find("libcuda.so.1"),
            s.message().rfind("libcuda.so.1"));
}

TEST(CudaDriverTest, DefaultNameIsLibcuda) {
  DriverOverride driver(nullptr);
  std::unique_ptr<CudaDriver> loaded;
  Status s = CudaDriver::load(loaded);
  if (s.isOk())
    GTEST_SKIP() << "this machine has a CUDA driver";
  if (s.message().rfind("no CUDA device", 0) == 0)
    GTEST_SKIP() << "this machine has a CUDA driver but no GPU";
  EXPECT_THAT(s.message(), StartsWith("no CUDA driver: libcuda.so.1: "));
}

TEST(CudaDriverTest, LibraryWithoutCuInitIsNotADriver) {
  std::string path = notADriver();
  DriverOverride driver(path.c_str());
  std::unique_ptr<CudaDriver> loaded;
  Status s = CudaDriver::load(loaded);
  ASSERT_TRUE(s.failed());
  EXPECT_EQ(loaded, nullptr);
  EXPECT_THAT(s.message(),
              StartsWith(path + ": not a CUDA driver: it has no cuInit ("));
}

TEST(CudaChipTest, ParsesArchitectures) {
  int major = 0, minor = 0;
  bool a = true;
  ASSERT_TRUE(parseCudaChip("sm_90", major, minor, a));
  EXPECT_EQ(major, 9);
  EXPECT_EQ(minor, 0);
  EXPECT_FALSE(a);
  ASSERT_TRUE(parseCudaChip("sm_90a", major, minor, a));
  EXPECT_TRUE(a);
  ASSERT_TRUE(parseCudaChip("sm_120", major, minor, a));
  EXPECT_EQ(major, 12);
  EXPECT_EQ(minor, 0);
  ASSERT_TRUE(parseCudaChip("sm_86", major, minor, a));
  EXPECT_EQ(major, 8);
  EXPECT_EQ(minor, 6);
  EXPECT_FALSE(parseCudaChip("compute_90", major, minor, a));
  EXPECT_FALSE(parseCudaChip("sm_", major, minor, a));
  EXPECT_FALSE(parseCudaChip("sm_9x", major, minor, a));
}

CudaDevice device(const char *name, int major, int minor) {
  CudaDevice d;
  d.name = name;
  d.major = major;
  d.minor = minor;
  return d;
}

TEST(CudaChipTest, RefusesADeviceOlderThanTheBundle) {
  Status s = checkCudaDevice(device("NVIDIA A100", 8, 0), "sm_90", "cubin");
  ASSERT_TRUE(s.failed());
  EXPECT_EQ(s.message(), "the bundle's CUDA module is for sm_90, but device 0 "
                         "(NVIDIA A100) is sm_80: too old for it");
  EXPECT_TRUE(
      checkCudaDevice(device("NVIDIA A100", 8, 0), "sm_90", "ptx").failed());
}

TEST(CudaChipTest, AcceptsTheBundlesChip) {
  EXPECT_TRUE(
      checkCudaDevice(device("NVIDIA H200", 9, 0), "sm_90", "cubin").isOk());
  EXPECT_TRUE(
      checkCudaDevice(device("NVIDIA H200", 9, 0), "sm_90a", "cubin").isOk());
  EXPECT_TRUE(
      checkCudaDevice(device("NVIDIA H200", 9, 0), "sm_80", "ptx").isOk());
  EXPECT_TRUE(
      checkCudaDevice(device("NVIDIA A10", 8, 6), "sm_80", "cubin").isOk());
}

TEST(CudaChipTest, ACubinRunsOnlyOnItsMajorArchitecture) {
  Status s = checkCudaDevice(device("NVIDIA B200", 10, 0), "sm_90", "cubin");
  ASSERT_TRUE(s.failed());
  EXPECT_THAT(s.message(), HasSubstr("a cubin runs only on its own major "
                                     "architecture"));
  EXPECT_TRUE(
      checkCudaDevice(device("NVIDIA B200", 10, 0), "sm_90", "ptx").isOk());
  Status a = checkCudaDevice(device("NVIDIA B200", 10, 0), "sm_90a", "ptx");
  ASSERT_TRUE(a.failed());
  EXPECT_THAT(a.message(), HasSubstr("sm_90a code runs on exactly that "
                                     "architecture"));
}

//===----------------------------------------------------------------------===//
// The module file at openBundle()
//===----------------------------------------------------------------------===//

/// The first 64 bytes of an ELF64 little-endian file for `machine`.
std::string elfHeader(uint16_t machine, unsigned char elfClass = 2) {
  std::string h(64, '\0');
  std::memcpy(h.data(),
              "\x7f"
              "ELF",
              4);
  h[4] = char(elfClass);
  h[5] = 1;
  h[6] = 1;
  h[16] = 2; // ET_EXEC
  h[18] = char(machine & 0xff);
  h[19] = char(machine >> 8);
  return h + std::string(64, 'x');
}

const char *const kPtx = ".version 8.0\n.target sm_90\n.address_size 64\n\n"
                         ".visible .entry gemm_f32_0(\n)\n{\n  ret;\n}\n";

/// A toy bundle with a CUDA target whose module file holds `bytes` (the
/// manifest's SHA-256 is `sha`, or the bytes' own when empty).
struct CudaToy : ToyBundle {
  CudaToy(const std::string &format, const std::string &bytes,
          std::string sha = "") {
    std::filesystem::create_directories(dir + "/cuda");
    std::string module = "cuda/sm_90." + format;
    writeFile(module, bytes);
    if (sha.empty())
      sha = sha256Hex(bytes.data(), bytes.size());
    manifest["cuda"] = {{"chip", "sm_90"},
                        {"module", module},
                        {"format", format},
                        {"module_sha256", sha},
                        {"kernels",
                         {{{"name", "gemm_f32_0"},
                           {"kind", "f32"},
                           {"a", "f32"},
                           {"b", "f32"},
                           {"c", "f32"},
                           {"batch", 1},
                           {"m", 8},
                           {"n", 3},
                           {"k", 4},
                           {"grid", {1, 1, 1}},
                           {"block", {32, 1, 1}}}}}};
    manifest["sites"][0]["cuda"] = {{"forward", {{"f32", "gemm_f32_0"}}}};
    write();
  }
  std::string modulePath(const std::string &format) const {
    return dir + "/cuda/sm_90." + format;
  }
};

std::string openError(const std::string &dir, ErrorKind want) {
  std::unique_ptr<Bundle> bundle;
  ErrorKind kind = ErrorKind::None;
  Status s = openBundle(dir, bundle, &kind);
  EXPECT_TRUE(s.failed());
  EXPECT_EQ(kind, want) << s.message();
  EXPECT_EQ(bundle, nullptr);
  return s.message();
}

TEST(CudaModuleFileTest, OpensABundleWithACubin) {
  std::string cubin = elfHeader(190);
  CudaToy toy("cubin", cubin);
  std::unique_ptr<Bundle> bundle;
  Status s = openBundle(toy.dir, bundle);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_TRUE(hasCudaTarget(bundle->getManifest()));
  EXPECT_EQ(bundle->getCudaModuleImage(), cubin);
  EXPECT_EQ(bundle->getCudaModulePath(), toy.modulePath("cubin"));
}

TEST(CudaModuleFileTest, OpensABundleWithPtx) {
  CudaToy toy("ptx", kPtx);
  std::unique_ptr<Bundle> bundle;
  Status s = openBundle(toy.dir, bundle);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(bundle->getCudaModuleImage(), kPtx);
}

TEST(CudaModuleFileTest, CpuBundleReadsNoModule) {
  std::unique_ptr<Bundle> bundle;
  Status s = openBundle(toyBundleDir(), bundle);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_FALSE(hasCudaTarget(bundle->getManifest()));
  EXPECT_TRUE(bundle->getCudaModuleImage().empty());
}

TEST(CudaModuleFileTest, RefusesAWrongSha256) {
  std::string wrong(64, '0');
  CudaToy toy("cubin", elfHeader(190), wrong);
  std::string cubin = elfHeader(190);
  EXPECT_EQ(openError(toy.dir, ErrorKind::Format),
            toy.modulePath("cubin") + ": SHA-256 " +
                sha256Hex(cubin.data(), cubin.size()) +
                " does not match the manifest's cuda.module_sha256 " + wrong +
                " (the module changed after compilation); refusing to load "
                "it");
}

TEST(CudaModuleFileTest, RefusesAMissingModule) {
  CudaToy toy("cubin", elfHeader(190));
  std::filesystem::remove(toy.modulePath("cubin"));
  std::string message = openError(toy.dir, ErrorKind::Io);
  EXPECT_THAT(message, StartsWith(toy.modulePath("cubin") + ": "));
  EXPECT_THAT(message, HasSubstr("(the bundle's CUDA module, cuda.module in "
                                 "manifest.json)"));
}

TEST(CudaModuleFileTest, RefusesAModuleThatIsNotARegularFile) {
  CudaToy toy("cubin", elfHeader(190));
  std::filesystem::remove(toy.modulePath("cubin"));
  std::filesystem::create_directory(toy.modulePath("cubin"));
  EXPECT_THAT(openError(toy.dir, ErrorKind::Format),
              HasSubstr("not a regular file"));
}

TEST(CudaModuleFileTest, RefusesACubinThatIsNotElf) {
  CudaToy toy("cubin", std::string(kPtx) + std::string(64, ' '));
  EXPECT_EQ(openError(toy.dir, ErrorKind::Format),
            toy.modulePath("cubin") +
                ": not a cubin module (cuda.format in manifest.json): no ELF "
                "magic; refusing to load it");
}

TEST(CudaModuleFileTest, RefusesAShortCubin) {
  CudaToy toy("cubin", "\x7f"
                       "ELF");
  EXPECT_THAT(openError(toy.dir, ErrorKind::Format),
              HasSubstr("the file has 4 bytes, fewer than an ELF header"));
}

TEST(CudaModuleFileTest, RefusesACubinForAnotherMachine) {
  // EM_X86_64: a host object in the GPU module's place.
  CudaToy toy("cubin", elfHeader(62));
  EXPECT_THAT(openError(toy.dir, ErrorKind::Format),
              HasSubstr(": not a cubin module (cuda.format in manifest.json): "
                        "ELF machine 62, not NVIDIA CUDA (190); refusing to "
                        "load it"));
}

TEST(CudaModuleFileTest, RefusesA32BitCubin) {
  CudaToy toy("cubin", elfHeader(190, 1));
  EXPECT_THAT(openError(toy.dir, ErrorKind::Format),
              HasSubstr("not a 64-bit little-endian ELF file"));
}

TEST(CudaModuleFileTest, RefusesPtxWithoutTarget) {
  CudaToy toy("ptx", ".version 8.0\n.address_size 64\n");
  EXPECT_EQ(openError(toy.dir, ErrorKind::Format),
            toy.modulePath("ptx") +
                ": not a ptx module (cuda.format in manifest.json): it has "
                "no .target directive; refusing to load it");
}

TEST(CudaModuleFileTest, RefusesPtxWithoutVersion) {
  CudaToy toy("ptx", ".target sm_90\n");
  EXPECT_THAT(openError(toy.dir, ErrorKind::Format),
              HasSubstr("it has no .version directive"));
}

TEST(CudaModuleFileTest, RefusesPtxForAnotherChip) {
  CudaToy toy("ptx", ".version 8.0\n.target sm_80, debug\n");
  EXPECT_THAT(openError(toy.dir, ErrorKind::Format),
              HasSubstr("its .target is 'sm_80', the manifest's cuda.chip is "
                        "'sm_90'"));
}

TEST(CudaModuleFileTest, RefusesACubinAsPtx) {
  CudaToy toy("ptx", elfHeader(190));
  EXPECT_THAT(openError(toy.dir, ErrorKind::Format),
              HasSubstr("it holds NUL bytes, PTX is text"));
}

//===----------------------------------------------------------------------===//
// Past dlopen, with the stand-in driver (fixtures/fake_cuda_driver.c)
//===----------------------------------------------------------------------===//

/// Sets the stand-in's device for one test.
class FakeDevice {
public:
  explicit FakeDevice(const char *spec) {
    setenv("QTRAIN_FAKE_CUDA_DEVICE", spec, 1);
  }
  ~FakeDevice() { unsetenv("QTRAIN_FAKE_CUDA_DEVICE"); }
};

CudaTargetSpec sm90Target(const std::string &kernel) {
  CudaTargetSpec t;
  t.chip = "sm_90";
  t.format = "cubin";
  CudaKernelSpec k;
  k.name = kernel;
  k.kind = "f32";
  k.grid = {1, 1, 1};
  k.block = {32, 1, 1};
  t.kernels.push_back(k);
  return t;
}

TEST(FakeCudaDriverTest, NoDeviceIsAClearError) {
  DriverOverride driver(QTRAIN_FAKE_CUDA_DRIVER);
  FakeDevice device("none");
  std::unique_ptr<CudaDriver> loaded;
  Status s = CudaDriver::load(loaded);
  ASSERT_TRUE(s.failed());
  EXPECT_EQ(s.message(), "no CUDA device: cuInit: CUDA_ERROR_NO_DEVICE (no "
                         "CUDA-capable device is detected) (training on the "
                         "GPU needs an NVIDIA GPU)");
}

TEST(FakeCudaDriverTest, RefusesADeviceOlderThanTheBundle) {
  DriverOverride driver(QTRAIN_FAKE_CUDA_DRIVER);
  FakeDevice fake("Fake A100:8:0");
  std::unique_ptr<CudaDriver> loaded;
  ASSERT_TRUE(CudaDriver::load(loaded).isOk());
  CudaDevice device;
  Status s = selectCudaDevice(*loaded, sm90Target("k"), device);
  ASSERT_TRUE(s.failed());
  EXPECT_EQ(s.message(), "the bundle's CUDA module is for sm_90, but device 0 "
                         "(Fake A100) is sm_80: too old for it");
}

TEST(FakeCudaDriverTest, LoadsTheModuleAndRefusesAMissingKernel) {
  DriverOverride driver(QTRAIN_FAKE_CUDA_DRIVER);
  FakeDevice fake("Fake H200:9:0");
  std::unique_ptr<CudaDriver> loaded;
  ASSERT_TRUE(CudaDriver::load(loaded).isOk());
  CudaDevice device;
  ASSERT_TRUE(selectCudaDevice(*loaded, sm90Target("k"), device).isOk());
  EXPECT_EQ(device.name, "Fake H200");
  EXPECT_EQ(device.chip(), "sm_90");
  std::unique_ptr<CudaContext> context;
  ASSERT_TRUE(CudaContext::open(*loaded, device, context).isOk());
  std::string cubin = elfHeader(190);
  std::unique_ptr<CudaModule> module;
  Status ok = CudaModule::load(*loaded, sm90Target("gemm_f32_0"), cubin,
                               "m.cubin", module);
  ASSERT_TRUE(ok.isOk()) << ok.message();
  EXPECT_TRUE(module->launch(0, 0, 0, 0).isOk());
  module.reset();
  Status missing = CudaModule::load(*loaded, sm90Target("missing"), cubin,
                                    "m.cubin", module);
  ASSERT_TRUE(missing.failed());
  EXPECT_EQ(missing.message(),
            "m.cubin: kernel 'missing' (cuda.kernels[0]) is not in the "
            "module: cuModuleGetFunction: CUDA_ERROR_NOT_FOUND (named symbol "
            "not found)");
  Status bad =
      CudaModule::load(*loaded, sm90Target("k"), "garbage", "m.cubin", module);
  ASSERT_TRUE(bad.failed());
  EXPECT_EQ(bad.message(), "m.cubin: the driver does not load the cubin "
                           "module: cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE "
                           "(device kernel image is invalid)");
}

TEST(FakeCudaDriverTest, BuffersAndEvents) {
  DriverOverride driver(QTRAIN_FAKE_CUDA_DRIVER);
  std::unique_ptr<CudaDriver> loaded;
  ASSERT_TRUE(CudaDriver::load(loaded).isOk());
  CudaBuffer buffer, moved;
  ASSERT_TRUE(CudaBuffer::allocate(*loaded, 8, buffer).isOk());
  int32_t in[2] = {7, -9}, out[2] = {};
  ASSERT_TRUE(buffer.upload(in, 8).isOk());
  moved = std::move(buffer);
  EXPECT_EQ(buffer.get(), 0u);
  ASSERT_TRUE(moved.download(out, 8).isOk());
  EXPECT_EQ(out[1], -9);
  EXPECT_TRUE(moved.download(out, 9).failed());
  CudaEvent start, end;
  ASSERT_TRUE(CudaEvent::create(*loaded, start).isOk());
  ASSERT_TRUE(CudaEvent::create(*loaded, end).isOk());
  float ms = 0;
  ASSERT_TRUE(end.elapsedSince(start, ms).isOk());
  EXPECT_GT(ms, 0.0f);
}

/// Managed buffers of `values`, for the finiteness check.
static std::vector<CudaBuffer> finiteCheckBuffers(
    const CudaDriver &driver, const std::vector<std::vector<float>> &values,
    std::vector<const float *> &pointers, std::vector<size_t> &counts) {
  std::vector<CudaBuffer> buffers(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_TRUE(
        CudaBuffer::allocate(driver, values[i].size() * 4 + 4, buffers[i])
            .isOk());
    if (!values[i].empty())
      EXPECT_TRUE(
          buffers[i].upload(values[i].data(), values[i].size() * 4).isOk());
    pointers.push_back(reinterpret_cast<const float *>(buffers[i].get()));
    counts.push_back(values[i].size());
  }
  return buffers;
}

/// Checks `values` on the device: whether all are finite.
static bool allFiniteOnDevice(const CudaDriver &driver, CudaFiniteCheck &check,
                              const std::vector<std::vector<float>> &values) {
  std::vector<const float *> pointers;
  std::vector<size_t> counts;
  std::vector<CudaBuffer> buffers =
      finiteCheckBuffers(driver, values, pointers, counts);
  bool finite = false;
  Status s =
      check.allFinite(pointers.data(), counts.data(), pointers.size(), finite);
  EXPECT_TRUE(s.isOk()) << s.message();
  return finite;
}

/// The values the finiteness checks read: finite ones (the largest, the
/// smallest subnormal, -0), then one inf or NaN placed in a later buffer.
static void expectFiniteCheck(const CudaDriver &driver,
                              CudaFiniteCheck &check) {
  const float big = std::numeric_limits<float>::max();
  const float tiny = std::numeric_limits<float>::denorm_min();
  std::vector<float> many(5000, 1.5f);
  EXPECT_TRUE(
      allFiniteOnDevice(driver, check, {{big, -big, tiny, -0.0f}, many, {}}));
  std::vector<float> lateInf = many;
  lateInf[4999] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(allFiniteOnDevice(driver, check, {{1.0f}, lateInf}));
  std::vector<float> nan = many;
  nan[300] = -std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(allFiniteOnDevice(driver, check, {nan, {2.0f}}));
  // The flag is cleared before each check.
  EXPECT_TRUE(allFiniteOnDevice(driver, check, {{3.0f}}));
  EXPECT_EQ(check.getChecks(), 4);
}

TEST(FakeCudaDriverTest, FiniteCheckRunsOnTheDevice) {
  // The stand-in runs qtrain_find_nonfinite as its PTX states, on host
  // memory: this checks the launches, arguments and flag; GpuTest
  // FiniteCheckFindsInfAndNan runs the PTX itself.
  DriverOverride driver(QTRAIN_FAKE_CUDA_DRIVER);
  std::unique_ptr<CudaDriver> loaded;
  ASSERT_TRUE(CudaDriver::load(loaded).isOk());
  CudaDevice device;
  ASSERT_TRUE(loaded->getDevice(0, device).isOk());
  std::unique_ptr<CudaContext> context;
  ASSERT_TRUE(CudaContext::open(*loaded, device, context).isOk());
  std::unique_ptr<CudaFiniteCheck> check;
  Status s = CudaFiniteCheck::open(*loaded, check);
  ASSERT_TRUE(s.isOk()) << s.message();
  expectFiniteCheck(*loaded, *check);
  check.reset();
  context.reset();
}

//===----------------------------------------------------------------------===//
// With a GPU
//===----------------------------------------------------------------------===//

/// A kernel of the GEMM kernels' signature (A, B, C): C[t] = A[t] * B[t]
/// for threads t < 4. Checked with ptxas 13 for sm_90.
const char *const kMulPtx = R"(.version 7.0
.target sm_52
.address_size 64

.visible .entry qtrain_test_mul(.param .u64 pa, .param .u64 pb, .param .u64 pc)
{
  .reg .pred %p;
  .reg .b32 %t;
  .reg .b64 %a, %b, %c, %off;
  .reg .f32 %x, %y, %z;
  mov.u32 %t, %tid.x;
  setp.ge.u32 %p, %t, 4;
  @%p bra DONE;
  ld.param.u64 %a, [pa];
  ld.param.u64 %b, [pb];
  ld.param.u64 %c, [pc];
  cvta.to.global.u64 %a, %a;
  cvta.to.global.u64 %b, %b;
  cvta.to.global.u64 %c, %c;
  mul.wide.u32 %off, %t, 4;
  add.s64 %a, %a, %off;
  add.s64 %b, %b, %off;
  add.s64 %c, %c, %off;
  ld.global.f32 %x, [%a];
  ld.global.f32 %y, [%b];
  mul.rn.f32 %z, %x, %y;
  st.global.f32 [%c], %z;
DONE:
  ret;
}
)";

/// The driver and device 0, or a skip.
class GpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    Status s = CudaDriver::load(driver);
    if (s.failed())
      GTEST_SKIP() << "no GPU here: " << s.message();
    int count = 0;
    ASSERT_TRUE(driver->getDeviceCount(count).isOk());
    if (count == 0)
      GTEST_SKIP() << "the CUDA driver sees no device";
    ASSERT_TRUE(driver->getDevice(0, device).isOk());
    Status c = CudaContext::open(*driver, device, context);
    ASSERT_TRUE(c.isOk()) << c.message();
  }
  void TearDown() override { context.reset(); }

  std::unique_ptr<CudaDriver> driver;
  CudaDevice device;
  std::unique_ptr<CudaContext> context;
};

TEST_F(GpuTest, FiniteCheckFindsInfAndNan) {
  std::unique_ptr<CudaFiniteCheck> check;
  Status s = CudaFiniteCheck::open(*driver, check);
  ASSERT_TRUE(s.isOk()) << s.message();
  expectFiniteCheck(*driver, *check);
}

TEST_F(GpuTest, DescribesTheDevice) {
  EXPECT_FALSE(device.name.empty());
  EXPECT_GE(device.major, 3);
  EXPECT_EQ(
      driver->describe(kCudaErrorNoDevice).rfind("CUDA_ERROR_NO_DEVICE", 0),
      0u);
  Status s = driver->check(kCudaErrorNoDevice, "cuSomething");
  EXPECT_THAT(s.message(), StartsWith("cuSomething: CUDA_ERROR_NO_DEVICE ("));
}

TEST_F(GpuTest, BuffersRoundTrip) {
  CudaBuffer buffer;
  ASSERT_TRUE(CudaBuffer::allocate(*driver, 16, buffer).isOk());
  float in[4] = {1, -2, 3.5f, 0.25f}, out[4] = {};
  ASSERT_TRUE(buffer.upload(in, sizeof(in)).isOk());
  ASSERT_TRUE(buffer.download(out, sizeof(out)).isOk());
  EXPECT_EQ(std::memcmp(in, out, sizeof(in)), 0);
  ASSERT_TRUE(buffer.fill(0).isOk());
  ASSERT_TRUE(buffer.download(out, sizeof(out)).isOk());
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_TRUE(buffer.upload(in, 17).failed());
}

CudaTargetSpec mulTarget(const std::string &name) {
  CudaTargetSpec t;
  t.chip = "sm_52";
  t.format = "ptx";
  CudaKernelSpec k;
  k.name = name;
  k.kind = "f32";
  k.grid = {1, 1, 1};
  k.block = {32, 1, 1};
  t.kernels.push_back(k);
  return t;
}

TEST_F(GpuTest, LoadsAndLaunchesAPtxModule) {
  std::unique_ptr<CudaModule> module;
  Status s = CudaModule::load(*driver, mulTarget("qtrain_test_mul"), kMulPtx,
                              "mul.ptx", module);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(module->findKernel("qtrain_test_mul"), 0);
  EXPECT_EQ(module->findKernel("other"), -1);
  CudaBuffer a, b, c;
  ASSERT_TRUE(CudaBuffer::allocate(*driver, 16, a).isOk());
  ASSERT_TRUE(CudaBuffer::allocate(*driver, 16, b).isOk());
  ASSERT_TRUE(CudaBuffer::allocate(*driver, 16, c).isOk());
  float x[4] = {1, 2, 3, 4}, y[4] = {0.5f, -1, 2, 0}, z[4] = {};
  ASSERT_TRUE(a.upload(x, 16).isOk());
  ASSERT_TRUE(b.upload(y, 16).isOk());
  ASSERT_TRUE(module->launch(0, a.get(), b.get(), c.get()).isOk());
  ASSERT_TRUE(context->synchronize().isOk());
  ASSERT_TRUE(c.download(z, 16).isOk());
  EXPECT_EQ(z[0], 0.5f);
  EXPECT_EQ(z[1], -2.0f);
  EXPECT_EQ(z[2], 6.0f);
  EXPECT_EQ(z[3], 0.0f);
}

TEST_F(GpuTest, RefusesAMissingKernelByName) {
  std::unique_ptr<CudaModule> module;
  Status s = CudaModule::load(*driver, mulTarget("gemm_i8_7"), kMulPtx,
                              "mul.ptx", module);
  ASSERT_TRUE(s.failed());
  EXPECT_THAT(s.message(),
              StartsWith("mul.ptx: kernel 'gemm_i8_7' (cuda.kernels[0]) is "
                         "not in the module: cuModuleGetFunction: "
                         "CUDA_ERROR_NOT_FOUND"));
}

TEST_F(GpuTest, RefusesAModuleTheDriverCannotLoad) {
  std::unique_ptr<CudaModule> module;
  Status s = CudaModule::load(*driver, mulTarget("qtrain_test_mul"),
                              ".version 7.0\n.target sm_52\nnot ptx\n",
                              "bad.ptx", module);
  ASSERT_TRUE(s.failed());
  EXPECT_THAT(s.message(), StartsWith("bad.ptx: the driver does not load the "
                                      "ptx module: cuModuleLoadData: "));
}

} // namespace

//===----------------------------------------------------------------------===//
// The CUDA step's host ABI (CudaHostAbi.h), over the stand-in driver
//===----------------------------------------------------------------------===//

TEST(CudaHostAbiTest, PoolReusesBuffersOfTheSameSizeAndKind) {
  DriverOverride driver(QTRAIN_FAKE_CUDA_DRIVER);
  std::unique_ptr<CudaDriver> loaded;
  ASSERT_TRUE(CudaDriver::load(loaded).isOk());
  attachCudaHostAbi(loaded.get());
  void *a = qtrain_cuda_alloc(1024, 0);
  void *shared = qtrain_cuda_alloc(1024, 1);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(shared, nullptr);
  EXPECT_NE(a, shared);
  qtrain_cuda_free(a);
  qtrain_cuda_free(shared);
  // The next step's buffers are the last step's.
  EXPECT_EQ(qtrain_cuda_alloc(1024, 0), a);
  EXPECT_EQ(qtrain_cuda_alloc(1024, 1), shared);
  void *other = qtrain_cuda_alloc(2048, 0);
  EXPECT_NE(other, a);
  EXPECT_EQ(getCudaHostPoolBytes(), 4096);
  // Copies go through the driver (host memory in the stand-in).
  std::memset(a, 7, 1024);
  qtrain_cuda_memcpy(other, a, 1024);
  EXPECT_EQ(static_cast<unsigned char *>(other)[1023], 7);
  EXPECT_EQ(takeCudaHostError(), "");
  for (void *p : {a, shared, other})
    qtrain_cuda_free(p);
  releaseCudaHostPool();
  EXPECT_EQ(getCudaHostPoolBytes(), 0);
  attachCudaHostAbi(nullptr);
}

TEST(CudaHostAbiTest, TheFirstFailureIsKeptAndReported) {
  DriverOverride driver(QTRAIN_FAKE_CUDA_DRIVER);
  std::unique_ptr<CudaDriver> loaded;
  ASSERT_TRUE(CudaDriver::load(loaded).isOk());
  attachCudaHostAbi(loaded.get());
  char notPtx[] = "not a module";
  EXPECT_EQ(mgpuModuleLoadJIT(notPtx, 3), nullptr);
  // Later calls do nothing; the first failure is what is reported.
  char ptx[] = "//\n.version 8.6\n.target sm_90\n";
  EXPECT_EQ(mgpuModuleLoadJIT(ptx, 3), nullptr);
  EXPECT_EQ(takeCudaHostError(),
            "cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE (device kernel image "
            "is invalid)");
  EXPECT_EQ(takeCudaHostError(), "");
  void *module = mgpuModuleLoadJIT(ptx, 3);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(mgpuModuleGetFunction(module, "missing"), nullptr);
  EXPECT_EQ(takeCudaHostError(), "cuModuleGetFunction: CUDA_ERROR_NOT_FOUND "
                                 "(named symbol not found) (kernel missing)");
  void *function = mgpuModuleGetFunction(module, "step_kernel");
  ASSERT_NE(function, nullptr);
  mgpuLaunchKernel(function, 4, 1, 1, 256, 1, 1, 0, mgpuStreamCreate(), nullptr,
                   nullptr, 0);
  EXPECT_EQ(getCudaHostLaunches(), 1);
  // The host waits once for what was launched, then not again.
  qtrain_cuda_synchronize();
  qtrain_cuda_synchronize();
  EXPECT_EQ(getCudaHostWaits(), 1);
  EXPECT_EQ(takeCudaHostError(), "");
  mgpuModuleUnload(module);
  attachCudaHostAbi(nullptr);
  // Without a driver nothing runs, and that is a failure too.
  EXPECT_EQ(mgpuModuleLoadJIT(ptx, 3), nullptr);
  EXPECT_THAT(takeCudaHostError(), HasSubstr("no CUDA driver is attached"));
}

TEST(CudaHostAbiTest, UploadsReadTheValuesOfTheirCall) {
  DriverOverride driver(QTRAIN_FAKE_CUDA_DRIVER);
  std::unique_ptr<CudaDriver> loaded;
  ASSERT_TRUE(CudaDriver::load(loaded).isOk());
  attachCudaHostAbi(loaded.get());
  auto *record = static_cast<int64_t *>(qtrain_cuda_alloc(16, 0));
  ASSERT_NE(record, nullptr);
  // Launched one by one: the values of the call, whatever the host's
  // memory holds afterwards (the stack of the step's host code).
  int64_t values[2] = {3, 40};
  qtrain_cuda_upload(record, values, sizeof(values));
  values[0] = -1;
  qtrain_cuda_synchronize();
  EXPECT_EQ(record[0], 3);
  EXPECT_EQ(record[1], 40);
  EXPECT_EQ(getCudaHostWaits(), 1);

  // Recorded: each step's upload is the same node of one graph, which
  // reads the values of that step's call when the graph runs.
  std::unique_ptr<CudaGraphRecorder> graphs;
  ASSERT_TRUE(CudaGraphRecorder::open(*loaded, 4, graphs).isOk());
  attachCudaHostGraphs(graphs.get());
  for (int64_t step = 1; step <= 3; ++step) {
    int64_t now[2] = {step, 10 * step};
    qtrain_cuda_upload(record, now, sizeof(now));
    now[0] = now[1] = -1;
    qtrain_cuda_synchronize();
    EXPECT_EQ(record[0], step);
    EXPECT_EQ(record[1], 10 * step);
  }
  EXPECT_EQ(graphs->getCaptures(), 1);
  EXPECT_EQ(graphs->getGraphLaunches(), 3);
  EXPECT_EQ(graphs->getNodeUpdates(), 0);
  EXPECT_EQ(getCudaHostWaits(), 4);

  // Two uploads to one buffer without a wait between them: the second
  // waits for the first's copy before it reuses the staging memory.
  int64_t first[2] = {7, 8}, second[2] = {9, 10};
  qtrain_cuda_upload(record, first, sizeof(first));
  qtrain_cuda_upload(record, second, sizeof(second));
  EXPECT_EQ(getCudaHostWaits(), 5);
  EXPECT_EQ(record[0], 7);
  qtrain_cuda_synchronize();
  EXPECT_EQ(record[0], 9);
  EXPECT_EQ(record[1], 10);
  EXPECT_EQ(takeCudaHostError(), "");
  attachCudaHostGraphs(nullptr);
  graphs.reset();
  qtrain_cuda_free(record);
  releaseCudaHostPool();
  attachCudaHostAbi(nullptr);
}

/// Row-major A [batch, m, k] x B [batch, n, k]^T, exactly.
template <typename T, typename Acc>
static std::vector<Acc> referenceGemm(const std::vector<T> &a,
                                      const std::vector<T> &b, int64_t batch,
                                      int64_t m, int64_t n, int64_t k) {
  std::vector<Acc> c(size_t(batch * m * n));
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        Acc sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += Acc(a[size_t((z * m + i) * k + p)]) *
                 Acc(b[size_t((z * n + j) * k + p)]);
        c[size_t((z * m + i) * n + j)] = sum;
      }
  return c;
}

TEST(CudaHostAbiTest, ProductsRunOnTheGemmLibraryInTheKernelsLayout) {
  DriverOverride driver(QTRAIN_FAKE_CUDA_DRIVER);
  EnvOverride library(/*name=*/"QTRAIN_CUBLASLT", QTRAIN_FAKE_CUBLASLT);
  std::unique_ptr<CudaDriver> loaded;
  ASSERT_TRUE(CudaDriver::load(loaded).isOk());
  attachCudaHostAbi(loaded.get());
  constexpr int32_t f32 = int32_t(CudaGemmKind::F32),
                    i8 = int32_t(CudaGemmKind::I8),
                    bf16 = int32_t(CudaGemmKind::BF16);
  constexpr int32_t eF32 = int32_t(CudaGemmEncoding::F32),
                    eS8 = int32_t(CudaGemmEncoding::S8),
                    eBF16 = int32_t(CudaGemmEncoding::BF16);
  auto address = [](auto &v) { return uintptr_t(v.data()); };

  // Small integers: every product and sum is exact in f32.
  int64_t batch = 2, m = 3, n = 5, k = 7;
  std::vector<float> a(size_t(batch * m * k)), b(size_t(batch * n * k));
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(int(i % 7) - 3);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = float(int(i % 5) - 2);
  std::vector<float> c(size_t(batch * m * n), -1.0f);
  // No library attached: the step launches its kernel.
  EXPECT_EQ(qtrain_cuda_gemm(address(a), address(b), address(c), f32, eF32,
                             eF32, batch, m, n, k),
            0);
  EXPECT_EQ(c[0], -1.0f);

  std::unique_ptr<CublasLt> lt;
  ASSERT_TRUE(CublasLt::load(lt).isOk());
  attachCudaHostGemms(lt.get(), 0, 0);
  EXPECT_EQ(qtrain_cuda_gemm(address(a), address(b), address(c), f32, eF32,
                             eF32, batch, m, n, k),
            1);
  EXPECT_EQ(c, (referenceGemm<float, float>(a, b, batch, m, n, k)));

  // 8-bit codes, exact s32 sums.
  int64_t codesK = 12;
  std::vector<int8_t> p(size_t(m * codesK)), q(size_t(n * codesK));
  for (size_t i = 0; i < p.size(); ++i)
    p[i] = int8_t(int(i * 37 % 255) - 127);
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = int8_t(int(i * 53 % 255) - 127);
  std::vector<int32_t> r(size_t(m * n));
  EXPECT_EQ(qtrain_cuda_gemm(address(p), address(q), address(r), i8, eS8, eS8,
                             1, m, n, codesK),
            1);
  EXPECT_EQ(r, (referenceGemm<int8_t, int32_t>(p, q, 1, m, n, codesK)));

  // bf16 bits (of small integers), f32 sums.
  std::vector<uint16_t> x(size_t(m * k)), y(size_t(n * k));
  std::vector<float> xf(x.size()), yf(y.size());
  auto bits = [](float v) {
    uint32_t u;
    std::memcpy(&u, &v, sizeof(u));
    return uint16_t(u >> 16);
  };
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = bits(xf[i] = float(int(i % 9) - 4));
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = bits(yf[i] = float(int(i % 4) - 1));
  std::vector<float> z(size_t(m * n));
  EXPECT_EQ(qtrain_cuda_gemm(address(x), address(y), address(z), bf16, eBF16,
                             eBF16, 1, m, n, k),
            1);
  EXPECT_EQ(z, (referenceGemm<float, float>(xf, yf, 1, m, n, k)));

  // No algorithm for it (the stand-in, like cuBLASLt's int8 kernels, wants
  // k a multiple of 4): declined, asked once, declined again from the plan.
  std::vector<int32_t> untouched(size_t(m * n), 42);
  for (int twice = 0; twice < 2; ++twice)
    EXPECT_EQ(qtrain_cuda_gemm(address(p), address(q), address(untouched), i8,
                               eS8, eS8, 1, m, n, 6),
              0);
  EXPECT_EQ(untouched[0], 42);
  EXPECT_EQ(getCudaHostLibraryGemms(), 3);
  EXPECT_EQ(getCudaHostDeclinedGemms(), 2);
  EXPECT_EQ(takeCudaHostError(), "");

  // A code the compiler never emits is a failure, reported after the step.
  EXPECT_EQ(qtrain_cuda_gemm(address(a), address(b), address(c), 9, eF32, eF32,
                             1, m, n, k),
            0);
  EXPECT_THAT(takeCudaHostError(), HasSubstr("not a product of the step"));
  attachCudaHostGemms(nullptr, 0, 0);
  attachCudaHostAbi(nullptr);
}

TEST(CudaStepDeviceTest, RefusesBundlesWithoutAStepLibrary) {
  std::unique_ptr<Bundle> opened;
  ASSERT_TRUE(openBundle(QTRAIN_TOY_BUNDLE, opened).isOk());
  std::shared_ptr<StepDevice> device;
  ErrorKind kind = ErrorKind::None;
  Status s = openCudaStepDevice(*opened, device, &kind);
  ASSERT_TRUE(s.failed());
  EXPECT_EQ(kind, ErrorKind::Unsupported);
  EXPECT_THAT(s.message(), HasSubstr("has no CUDA target: compile it with "
                                     "qtrain-compile --target=cuda:CHIP"));
}
