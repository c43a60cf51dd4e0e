//===- Checkpoint.h - Training checkpoints ----------------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A checkpoint holds everything a training run's future depends on besides
/// the bundle and the data: the trainer's buffers (parameters, momentum,
/// state: Trainer::getBuffer), the step index, the cumulative BitOps, the
/// running sum and count of the training losses of the epoch in progress
/// (so that a resumed run's epoch mean never depends on its logs), and the
/// run's configuration as a JSON object (seed, schedules, total steps,
/// hyper-parameters...), which a resumed run must match.
///
/// File format, little-endian:
///   "QTRAINCK"        8 bytes
///   u32 version       2
///   u32 n             length of the configuration text
///   n bytes           the configuration, a JSON object
///   i64 step, f64 total BitOps
///   f64 epoch loss sum, i64 epoch loss count
///   u32 buffers, then per buffer: u64 count, count f32
///   u32 CRC-32 (zlib's) of every byte before it
/// Version 1 (without the epoch's loss sums) is refused with a message: a
/// run resumed from it could not log its epoch's mean exactly.
/// Saving writes PATH.tmp, fsyncs it, renames it over PATH and fsyncs the
/// directory, so PATH is always a complete checkpoint: the old one or the
/// new one. Loading checks the size of every field against the file, the
/// CRC and the configuration's syntax, and names what is wrong.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_CHECKPOINT_H
#define QTRAIN_RUNTIME_CHECKPOINT_H

#include "qtrain/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qtrain::rt {

class Trainer;

struct Checkpoint {
  /// The run's configuration, a JSON object.
  std::string config;
  int64_t step = 0;
  double totalBitOps = 0;
  /// The sum (in double, in step order) and the count of the training
  /// losses of the steps of the current epoch before `step`; 0 at an
  /// epoch's start.
  double epochLossSum = 0;
  int64_t epochLossCount = 0;
  std::vector<std::vector<float>> buffers;
};

/// A checkpoint of `trainer` now, with `config` and the running sums of the
/// current epoch's training losses.
Checkpoint captureCheckpoint(const Trainer &trainer, std::string config,
                             double epochLossSum = 0,
                             int64_t epochLossCount = 0);

Status saveCheckpoint(const std::string &path, const Checkpoint &checkpoint);
Status loadCheckpoint(const std::string &path, Checkpoint &out);

/// Restores `checkpoint` into `trainer`; the buffer count and sizes must
/// match the trainer's bundle, and parameters and momentum must be finite
/// (Trainer::restore).
Status restoreCheckpoint(Trainer &trainer, const Checkpoint &checkpoint);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_CHECKPOINT_H
