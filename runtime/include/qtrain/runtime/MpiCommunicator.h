//===- MpiCommunicator.h - Collectives through MPI --------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The Communicator of a job started by an MPI launcher (`mpirun -np P`),
/// over MPI_COMM_WORLD (the QTrainMpi library, built when CMake finds MPI;
/// Debian: libopenmpi-dev). Errors are returned, not fatal: a collective
/// that fails (a rank died, a link broke) gives a failed Status with MPI's
/// message, and the caller decides how the job ends.
///
/// Sums of F32 and BF16 run as a ring all-reduce of MPI point-to-point
/// messages (a reduce-scatter, then an all-gather), so that each element
/// is summed on one rank and every rank receives the same bits (MPI does
/// not promise that of MPI_Allreduce for floating point). Integer sums and
/// maxima are exact in any order and run as MPI_Allreduce.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_MPICOMMUNICATOR_H
#define QTRAIN_RUNTIME_MPICOMMUNICATOR_H

#include "qtrain/runtime/Communicator.h"

#include <memory>

namespace qtrain::rt {

/// Whether an MPI launcher started this process as a rank of a job
/// (mpiWorldSize() > 0).
bool launchedByMpi();

/// Initializes MPI (once per process) and returns the communicator of
/// MPI_COMM_WORLD; MPI is finalized when it is destroyed.
Status openMpi(int *argc, char ***argv, std::unique_ptr<Communicator> &out);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_MPICOMMUNICATOR_H
