//===- CudaGraphsTests.cpp - Tests of the step's CUDA graphs -------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// CudaGraphRecorder (CudaGraphs.h) and the pool it relies on, over the
/// stand-in driver, which describes a cubin's kernels from its .nv.info
/// sections and captures, updates and launches graphs as the driver does.
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/CudaDriver.h"
#include "qtrain/runtime/CudaGraphs.h"
#include "qtrain/runtime/CudaHostAbi.h"

#include "fixtures/EnvOverride.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

using namespace qtrain::rt;
using namespace qtrain::rt::testing;
using ::testing::HasSubstr;

namespace {

void put(std::string &out, size_t at, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out[at + i] = char(value >> (8 * i));
}

/// A minimal cubin as the stand-in driver reads it: an ELF64 file with one
/// `.nv.info.NAME` section per kernel, an EIATTR_KPARAM_INFO entry per
/// parameter (its ordinal, offset and size).
std::string
cubin(const std::vector<std::pair<std::string, std::vector<size_t>>> &kernels) {
  std::string names(1, '\0');
  std::vector<size_t> nameAt;
  std::vector<std::string> infos;
  for (const auto &[name, sizes] : kernels) {
    nameAt.push_back(names.size());
    names += ".nv.info." + name + '\0';
    std::string info;
    size_t offset = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      offset = (offset + sizes[i] - 1) / sizes[i] * sizes[i];
      std::string entry(16, '\0');
      put(entry, 0, 0x04, 1); // EIFMT_SVAL
      put(entry, 1, 0x17, 1); // EIATTR_KPARAM_INFO
      put(entry, 2, 12, 2);
      put(entry, 8, i, 2);
      put(entry, 10, offset, 2);
      put(entry, 12, uint64_t(sizes[i]) << 18, 4);
      info += entry;
      offset += sizes[i];
    }
    infos.push_back(info);
  }
  nameAt.insert(nameAt.begin(), names.size());
  names += std::string(".shstrtab") + '\0';
  std::string elf(64, '\0');
  elf.replace(0, 4,
              "\x7f"
              "ELF");
  elf[4] = 2; // ELFCLASS64
  elf[5] = 1; // little-endian
  elf[6] = 1;
  std::vector<std::pair<size_t, size_t>> placed; // offset, size
  placed.push_back({elf.size(), names.size()});
  elf += names;
  for (const std::string &info : infos) {
    placed.push_back({elf.size(), info.size()});
    elf += info;
  }
  elf.resize((elf.size() + 7) / 8 * 8, '\0');
  size_t table = elf.size(), count = placed.size() + 1;
  elf.resize(table + 64 * count, '\0');
  for (size_t i = 0; i < placed.size(); ++i) {
    size_t header = table + 64 * (i + 1);
    put(elf, header, nameAt[i], 4);
    put(elf, header + 0x18, placed[i].first, 8);
    put(elf, header + 0x20, placed[i].second, 8);
  }
  put(elf, 0x28, table, 8);
  put(elf, 0x3a, 64, 2);
  put(elf, 0x3c, count, 2);
  put(elf, 0x3e, 1, 2);
  return elf;
}

class CudaGraphsTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(CudaDriver::load(driver).isOk());
    image = cubin({{"scale", {8, 4}}, {"copy", {8, 8}}});
    const CudaDriverApi &f = driver->api();
    ASSERT_EQ(f.cuModuleLoadData(&module, image.data()), kCudaSuccess);
    ASSERT_EQ(f.cuModuleGetFunction(&scale, module, "scale"), kCudaSuccess);
    ASSERT_EQ(f.cuModuleGetFunction(&copy, module, "copy"), kCudaSuccess);
  }

  /// Records scale(buffer, n) then copy(buffer, buffer) on `grid` blocks;
  /// a recorder that is off launches them.
  void record(CudaGraphRecorder &graphs, uint64_t buffer, int32_t n,
              unsigned grid = 4) {
    bool expected = graphs.isRecording();
    unsigned blocks[3] = {grid, 1, 1}, threads[3] = {256, 1, 1};
    void *scaleArgs[] = {&buffer, &n}, *copyArgs[] = {&buffer, &buffer};
    bool recorded = false;
    ASSERT_TRUE(
        graphs.recordKernel(scale, blocks, threads, 0, scaleArgs, 2, recorded)
            .isOk());
    EXPECT_EQ(recorded, expected);
    ASSERT_TRUE(
        graphs.recordKernel(copy, blocks, threads, 0, copyArgs, 2, recorded)
            .isOk());
    EXPECT_EQ(recorded, expected);
  }

  DriverOverride override{QTRAIN_FAKE_CUDA_DRIVER};
  std::unique_ptr<CudaDriver> driver;
  std::string image;
  CUmodule module = nullptr;
  CUfunction scale = nullptr, copy = nullptr;
};

TEST_F(CudaGraphsTest, CapturesEachParameterSetOnceThenUpdates) {
  std::unique_ptr<CudaGraphRecorder> graphs;
  // At most four graphs of one structure.
  Status s = CudaGraphRecorder::open(*driver, 8, graphs, 4);
  ASSERT_TRUE(s.isOk()) << s.message();
  record(*graphs, 0x1000, 5);
  ASSERT_TRUE(graphs->flush().isOk());
  EXPECT_EQ(graphs->getCaptures(), 1);
  EXPECT_EQ(graphs->getGraphLaunches(), 1);
  // The same launches again: the graph as it is.
  record(*graphs, 0x1000, 5);
  ASSERT_TRUE(graphs->flush().isOk());
  EXPECT_EQ(graphs->getCaptures(), 1);
  EXPECT_EQ(graphs->getGraphLaunches(), 2);
  EXPECT_EQ(graphs->getNodeUpdates(), 0);
  // The buffer both kernels take alternates, as the Trainer's parameters
  // do between steps: a second graph of the same launches.
  record(*graphs, 0x2000, 5);
  ASSERT_TRUE(graphs->flush().isOk());
  EXPECT_EQ(graphs->getCaptures(), 2);
  EXPECT_EQ(graphs->getNodeUpdates(), 0);
  // Another scalar (another precision's constants): a graph for each
  // buffer too.
  record(*graphs, 0x1000, 6);
  ASSERT_TRUE(graphs->flush().isOk());
  record(*graphs, 0x2000, 6);
  ASSERT_TRUE(graphs->flush().isOk());
  EXPECT_EQ(graphs->getCaptures(), 4);
  EXPECT_EQ(graphs->getNodeUpdates(), 0);
  // Switching back and forth is a lookup: no capture, no update.
  for (int32_t n : {5, 6, 5}) {
    record(*graphs, 0x1000, n);
    ASSERT_TRUE(graphs->flush().isOk());
    record(*graphs, 0x2000, n);
    ASSERT_TRUE(graphs->flush().isOk());
  }
  EXPECT_EQ(graphs->getCaptures(), 4);
  EXPECT_EQ(graphs->getNodeUpdates(), 0);
  // A fifth set, with the structure's four graphs kept: the nearest graph
  // (0x1000 with 5, which differs only in the scale kernel's n) is
  // updated, one node, and then serves the new set as it is.
  record(*graphs, 0x1000, 7);
  ASSERT_TRUE(graphs->flush().isOk());
  EXPECT_EQ(graphs->getCaptures(), 4);
  EXPECT_EQ(graphs->getNodeUpdates(), 1);
  record(*graphs, 0x1000, 7);
  ASSERT_TRUE(graphs->flush().isOk());
  EXPECT_EQ(graphs->getNodeUpdates(), 1);
  // A third buffer: both nodes of the nearest graph.
  record(*graphs, 0x3000, 7);
  ASSERT_TRUE(graphs->flush().isOk());
  EXPECT_EQ(graphs->getCaptures(), 4);
  EXPECT_EQ(graphs->getNodeUpdates(), 3);
  // Another grid is another structure.
  record(*graphs, 0x3000, 6, /*grid=*/8);
  ASSERT_TRUE(graphs->flush().isOk());
  EXPECT_EQ(graphs->getCaptures(), 5);
  EXPECT_EQ(graphs->getGraphCount(), 5u);
  EXPECT_EQ(graphs->getRecordedKernels(), 30);
  // Nothing recorded: nothing launched.
  ASSERT_TRUE(graphs->flush().isOk());
  EXPECT_EQ(graphs->getGraphLaunches(), 15);
  EXPECT_TRUE(graphs->isRecording());
}

TEST_F(CudaGraphsTest, KeepsAtMostItsCapacity) {
  std::unique_ptr<CudaGraphRecorder> graphs;
  ASSERT_TRUE(CudaGraphRecorder::open(*driver, 2, graphs).isOk());
  for (unsigned grid : {1u, 2u, 3u, 1u}) {
    record(*graphs, 0x1000, 5, grid);
    ASSERT_TRUE(graphs->flush().isOk());
  }
  // The first structure was evicted by the third, so it is captured again.
  EXPECT_EQ(graphs->getGraphCount(), 2u);
  EXPECT_EQ(graphs->getCaptures(), 4);
}

TEST_F(CudaGraphsTest, RefusesALaunchThatPassesAnotherNumberOfParameters) {
  std::unique_ptr<CudaGraphRecorder> graphs;
  ASSERT_TRUE(CudaGraphRecorder::open(*driver, 8, graphs).isOk());
  unsigned blocks[3] = {1, 1, 1};
  uint64_t buffer = 0x1000;
  void *args[] = {&buffer, &buffer, &buffer};
  bool recorded = true;
  Status s = graphs->recordKernel(copy, blocks, blocks, 0, args, 3, recorded);
  ASSERT_TRUE(s.failed());
  EXPECT_FALSE(recorded);
  EXPECT_THAT(s.message(), HasSubstr("a kernel of the step takes 2 "
                                     "parameters, but its launch passes 3"));
  // Off, the recorder still checks.
  graphs->disable("CUDA graphs off");
  EXPECT_TRUE(graphs->checkLaunch(copy, 2).isOk());
  EXPECT_TRUE(graphs->checkLaunch(copy, 1).failed());
  s = graphs->recordKernel(copy, blocks, blocks, 0, args, 3, recorded);
  EXPECT_TRUE(s.failed());
  EXPECT_FALSE(recorded);
}

TEST_F(CudaGraphsTest, AKernelTheDriverCannotDescribeTurnsGraphsOff) {
  std::unique_ptr<CudaGraphRecorder> graphs;
  ASSERT_TRUE(CudaGraphRecorder::open(*driver, 8, graphs).isOk());
  record(*graphs, 0x1000, 5);
  // The stand-in does not read PTX, so it cannot describe its kernels.
  const char ptx[] = "//\n.version 8.6\n.target sm_90\n";
  CUmodule ptxModule = nullptr;
  CUfunction undescribed = nullptr;
  ASSERT_EQ(driver->api().cuModuleLoadData(&ptxModule, ptx), kCudaSuccess);
  ASSERT_EQ(driver->api().cuModuleGetFunction(&undescribed, ptxModule, "k"),
            kCudaSuccess);
  unsigned blocks[3] = {1, 1, 1};
  bool recorded = true;
  ASSERT_TRUE(
      graphs->recordKernel(undescribed, blocks, blocks, 0, nullptr, 0, recorded)
          .isOk());
  // The segment so far ran one launch at a time; the caller launches this.
  EXPECT_FALSE(recorded);
  EXPECT_FALSE(graphs->isRecording());
  EXPECT_THAT(graphs->getDisabledReason(),
              HasSubstr("cuFuncGetParamInfo: CUDA_ERROR_NOT_SUPPORTED"));
  EXPECT_EQ(graphs->getGraphLaunches(), 0);
  record(*graphs, 0x1000, 5); // launched by the caller
  ASSERT_TRUE(graphs->flush().isOk());
  EXPECT_EQ(graphs->getCaptures(), 0);
}

TEST(CudaGraphsPoolTest, AStepGetsTheBuffersOfTheStepBefore) {
  DriverOverride override(QTRAIN_FAKE_CUDA_DRIVER);
  std::unique_ptr<CudaDriver> loaded;
  ASSERT_TRUE(CudaDriver::load(loaded).isOk());
  attachCudaHostAbi(loaded.get());
  // Two buffers of one size, freed in either order: the next step's first
  // request gets the lower address, whatever the order they came back in.
  std::vector<void *> first, second, third;
  for (auto *step : {&first, &second, &third}) {
    void *a = qtrain_cuda_alloc(4096, 0), *b = qtrain_cuda_alloc(4096, 0);
    *step = {a, b};
    if (step == &second)
      qtrain_cuda_free(a), qtrain_cuda_free(b);
    else
      qtrain_cuda_free(b), qtrain_cuda_free(a);
  }
  EXPECT_EQ(second, third);
  EXPECT_LT(second[0], second[1]);
  EXPECT_EQ(takeCudaHostError(), "");
  releaseCudaHostPool();
  attachCudaHostAbi(nullptr);
}

} // namespace
