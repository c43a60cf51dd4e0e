//===- Communicator.h - Collectives between training processes -*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What data-parallel training needs from the processes it runs in
/// (docs/scale-out.md): an all-reduce, a broadcast and a barrier over the
/// ranks of one job. The Trainer and qtrain-run see only this interface;
/// an implementation wraps a trusted engine: MPI (MpiCommunicator.h, the
/// QTrainMpi library), or none for one process (makeSingleProcess()). An
/// NCCL implementation would sit beside the MPI one.
///
/// Contract of every implementation:
/// - every rank calls the same collectives in the same order with the
///   same counts and types (the callers guarantee it);
/// - allReduce() leaves the same bits in every rank's buffer, whatever
///   the reduction order (each element is reduced once, then shared), so
///   that ranks that apply the same update stay bit-identical;
/// - a failure (a rank that died, a broken link) returns a failed Status
///   where the engine can report it, never a silently wrong result.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_COMMUNICATOR_H
#define QTRAIN_RUNTIME_COMMUNICATOR_H

#include "qtrain/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

namespace qtrain::rt {

/// Element types of a collective. BF16 is bfloat16 as its 16 bits
/// (uint16_t); its sum adds in fp32 and rounds each partial sum to bf16
/// (round to nearest even).
enum class CommType { F32, BF16, I16, I32, U8 };

/// Reductions of allReduce(); Max is defined for F32, I16 and I32.
enum class CommOp { Sum, Max };

/// Bytes per element of `type`.
size_t commTypeSize(CommType type);

class Communicator {
public:
  virtual ~Communicator();

  /// This process's rank in [0, getSize()), and the number of ranks.
  virtual int getRank() const = 0;
  virtual int getSize() const = 0;
  /// What runs the collectives, for messages ("MPI (Open MPI 4.1.4)").
  virtual std::string getName() const = 0;

  /// Reduces `count` elements of `data` over all ranks with `op`, in
  /// place; every rank ends with the same bits.
  virtual Status allReduce(void *data, size_t count, CommType type,
                           CommOp op) = 0;
  /// Copies `bytes` bytes of rank `root`'s `data` into every rank's.
  virtual Status broadcast(void *data, size_t bytes, int root) = 0;
  /// Returns once every rank has called it.
  virtual Status barrier() = 0;
  /// Ends every rank of the job with `code` (after an error on one rank,
  /// which the others would otherwise wait for forever). Does not return.
  [[noreturn]] virtual void abort(int code) = 0;
};

/// The size of the job an MPI launcher started this process in, from the
/// launcher's environment (Open MPI's OMPI_COMM_WORLD_SIZE, the PMI_SIZE
/// of MPICH's and Slurm's); 0 when no launcher says so. Readable without
/// MPI, so that a build without it can tell that it was launched by one.
int mpiWorldSize();

/// The communicator of a job of one process: collectives leave the data
/// as it is (the sum and max over one rank).
std::unique_ptr<Communicator> makeSingleProcess();

/// bfloat16 from fp32, round to nearest even (a NaN stays a quiet NaN with
/// its sign), and back. Branch-free, so that loops over them vectorize.
inline uint16_t toBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
  uint32_t quiet = (bits >> 16) | 0x40u;
  bool nan = (bits & 0x7FFFFFFFu) > 0x7F800000u;
  return uint16_t(nan ? quiet : rounded);
}
inline float fromBf16(uint16_t bits) {
  uint32_t word = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_COMMUNICATOR_H
