//===- MpiCommunicator.cpp - Collectives through MPI ----------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/MpiCommunicator.h"

// The C API only (Open MPI and MPICH otherwise pull in their C++ bindings,
// whose names clash).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace qtrain::rt;

bool qtrain::rt::launchedByMpi() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name))
      return true;
  return false;
}

namespace {

/// bf16 sum for MPI: adds in fp32, rounds the sum to bf16.
void bf16Sum(void *in, void *inout, int *len, MPI_Datatype *) {
  const uint16_t *a = static_cast<const uint16_t *>(in);
  uint16_t *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = toBf16(fromBf16(a[i]) + fromBf16(b[i]));
}

MPI_Datatype mpiType(CommType type) {
  switch (type) {
  case CommType::F32:
    return MPI_FLOAT;
  case CommType::BF16:
    return MPI_UINT16_T;
  case CommType::I16:
    return MPI_INT16_T;
  case CommType::I32:
    return MPI_INT32_T;
  case CommType::U8:
    return MPI_UINT8_T;
  }
  return MPI_DATATYPE_NULL;
}

class Mpi final : public Communicator {
public:
  Mpi() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op_create(&bf16Sum, /*commute=*/1, &bf16SumOp);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    library.assign(version, size_t(length));
    library = library.substr(0, library.find_first_of(",\n"));
  }
  ~Mpi() override {
    MPI_Op_free(&bf16SumOp);
    MPI_Finalize();
  }

  int getRank() const override { return rank; }
  int getSize() const override { return size; }
  std::string getName() const override { return "MPI (" + library + ")"; }

  Status allReduce(void *data, size_t count, CommType type,
                   CommOp op) override {
    if (count == 0)
      return Status::success();
    bool floating = type == CommType::F32 || type == CommType::BF16;
    if (op == CommOp::Max && (type == CommType::BF16 || type == CommType::U8))
      return Status::error("all-reduce: no maximum of this type");
    if (!floating || op == CommOp::Max) {
      return check(MPI_Allreduce(MPI_IN_PLACE, data, int(count), mpiType(type),
                                 op == CommOp::Sum ? MPI_SUM : MPI_MAX,
                                 MPI_COMM_WORLD),
                   "all-reduce");
    }
    // Each rank reduces one block of the (padded) buffer, then all blocks
    // go to every rank.
    size_t element = commTypeSize(type), ranks = size_t(size);
    size_t block = (count + ranks - 1) / ranks;
    if (block > size_t(INT32_MAX))
      return Status::error("all-reduce of " + std::to_string(count) +
                           " elements: blocks past MPI's int counts");
    padded.assign(block * ranks * element, 0);
    std::memcpy(padded.data(), data, count * element);
    reduced.resize(block * element);
    MPI_Op mpiOp = type == CommType::BF16 ? bf16SumOp : MPI_SUM;
    if (Status s = check(MPI_Reduce_scatter_block(padded.data(), reduced.data(),
                                                  int(block), mpiType(type),
                                                  mpiOp, MPI_COMM_WORLD),
                         "reduce-scatter");
        s.failed())
      return s;
    if (Status s = check(MPI_Allgather(reduced.data(), int(block),
                                       mpiType(type), padded.data(), int(block),
                                       mpiType(type), MPI_COMM_WORLD),
                         "all-gather");
        s.failed())
      return s;
    std::memcpy(data, padded.data(), count * element);
    return Status::success();
  }

  Status broadcast(void *data, size_t bytes, int root) override {
    if (root < 0 || root >= size)
      return Status::error("broadcast from rank " + std::to_string(root) +
                           " of " + std::to_string(size));
    // MPI counts are ints: large buffers go in pieces.
    constexpr size_t kPiece = size_t(1) << 30;
    for (size_t at = 0; at < bytes; at += kPiece)
      if (Status s = check(MPI_Bcast(static_cast<char *>(data) + at,
                                     int(std::min(kPiece, bytes - at)),
                                     MPI_BYTE, root, MPI_COMM_WORLD),
                           "broadcast");
          s.failed())
        return s;
    return Status::success();
  }

  Status barrier() override {
    return check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
  }

  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

private:
  Status check(int rc, const char *what) const {
    if (rc == MPI_SUCCESS)
      return Status::success();
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    return Status::error(
        std::string(what) + " failed on rank " + std::to_string(rank) + " (" +
        std::string(text, size_t(length)) + "): another rank may have stopped");
  }

  int rank = 0, size = 1;
  MPI_Op bf16SumOp = MPI_OP_NULL;
  std::string library;
  std::vector<char> padded, reduced;
};

} // namespace

Status qtrain::rt::openMpi(int *argc, char ***argv,
                           std::unique_ptr<Communicator> &out) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(argc, argv) != MPI_SUCCESS)
    return Status::error("MPI_Init failed");
  // Errors come back as codes; the caller ends the job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  out = std::make_unique<Mpi>();
  return Status::success();
}
