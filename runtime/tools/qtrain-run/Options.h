//===- Options.h - qtrain-run's command line --------------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// qtrain-run's flags (docs/run.md): their values, --help, and the checks
/// a flag's value gets before the bundle is opened. A bad command line
/// exits with code 2.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUN_OPTIONS_H
#define QTRAIN_RUN_OPTIONS_H

#include "qtrain/runtime/Data.h"
#include "qtrain/runtime/GradientExchange.h"

#include <cstdint>
#include <limits>
#include <string>

namespace qtrain::run {

/// The flags of a run as given; the defaults are those --help names.
struct Options {
  std::string bundle;
  std::string data = "fashion-mnist";
  std::string dataDir;
  /// --mean/--std (one value for every channel), or --normalize; neither
  /// given: the dataset's default (RunData.h).
  float mean = qtrain::rt::kFashionMnistMean,
        std = qtrain::rt::kFashionMnistStd;
  bool meanGiven = false, stdGiven = false;
  std::string normalize;
  /// "crop-flip", "none", or empty: the dataset's default.
  std::string augment;
  std::string cifar100Labels = "fine";
  /// "seeded", "none", or a .npy file of visiting orders (RunData.h).
  std::string shuffle = "seeded";
  int64_t trainLimit = 0, testLimit = 0;
  int64_t epochs = 5, batch = 0;
  float lr = 0.05f, momentum = 0.9f, weightDecay = 5e-4f;
  float lossScale = 65536.0f;
  double promotionThreshold = 0.01;
  int64_t maxStepMemory = 0;
  std::string overflowProfile;
  float ldpLambda = std::numeric_limits<float>::quiet_NaN();
  double ldpTargetCost = 0, ldpLambdaRate = 1.0;
  bool evalBitsGiven = false;
  uint64_t seed = 1;
  int64_t threads = 0;
  std::string schedule, gradSchedule;
  bool printSchedule = false;
  std::string evalBits = "max";
  std::string out;
  int64_t checkpointEvery = 0;
  std::string resume;
  bool overwrite = false;
  int64_t stopAt = 0;
  std::string progress = "auto";
  /// --allreduce as given (empty: fp32 under mpirun, none alone).
  std::string allreduce;
  int64_t allreduceBucket = 4096;
  int64_t checkEvery = 100;
  bool rangeTest = false;
  int64_t rangeSteps = 300, rangeWindow = 50;
  double rangeThreshold = 0.10;
  /// --device: "cpu" (the bundle's library) or "cuda" (its CUDA target,
  /// Device.h).
  std::string device = "cpu";
  /// --cuda-gemm: where the GPU step's products run: "auto" (cuBLASLt where
  /// it loads and serves the product, else the generated kernels),
  /// "cublaslt" (the same; a cuBLASLt that does not load is an error) or
  /// "generated".
  std::string cudaGemm = "auto";
  /// --cuda-graphs: "on" (each step's launches as a CUDA graph,
  /// CudaGraphs.h) or "off".
  std::string cudaGraphs = "on";
};

/// The options of `argv`; prints --help and exits, or exits with code 2 on
/// an unknown flag or a bad value.
Options parseOptions(int argc, char **argv);

} // namespace qtrain::run

#endif // QTRAIN_RUN_OPTIONS_H
