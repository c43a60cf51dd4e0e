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

bool qtrain::rt::launchedByMpi() { return mpiWorldSize() > 0; }

namespace {

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
  /// `owner`: this communicator initialized MPI and finalizes it.
  explicit Mpi(bool owner) : owner(owner) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    library.assign(version, size_t(length));
    library = library.substr(0, library.find_first_of(",\n"));
  }
  ~Mpi() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owner && !finalized)
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
      // Elementwise, so in pieces that fit MPI's int counts.
      constexpr size_t kPiece = size_t(1) << 30;
      char *bytes = static_cast<char *>(data);
      for (size_t at = 0; at < count; at += kPiece)
        if (Status s = check(
                MPI_Allreduce(MPI_IN_PLACE, bytes + at * commTypeSize(type),
                              int(std::min(kPiece, count - at)), mpiType(type),
                              op == CommOp::Sum ? MPI_SUM : MPI_MAX,
                              MPI_COMM_WORLD),
                "all-reduce");
            s.failed())
          return s;
      return Status::success();
    }
    return ringSum(data, count, type);
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
  /// A ring all-reduce (sum) of floating-point data: P - 1 steps of
  /// reduce-scatter, each rank adding the block its left neighbour sends
  /// into its own, then P - 1 steps of all-gather. Block k is summed on
  /// one rank, in ring order, and copied to the others, so every rank ends
  /// with the same bits; each rank sends 2 (P - 1) / P of the buffer.
  /// (Open MPI's MPI_Reduce_scatter_block took 25 times longer than this
  /// for 1 Mi floats on one node.)
  Status ringSum(void *data, size_t count, CommType type) {
    size_t element = commTypeSize(type), ranks = size_t(size);
    auto begin = [&](size_t block) { return block * count / ranks; };
    auto blockSize = [&](size_t block) {
      return begin(block + 1) - begin(block);
    };
    if (blockSize(0) + 1 > size_t(INT32_MAX))
      return Status::error("all-reduce of " + std::to_string(count) +
                           " elements: blocks past MPI's int counts");
    char *bytes = static_cast<char *>(data);
    incoming.resize((count / ranks + 1) * element);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    auto at = [&](size_t step, int offset) {
      return size_t((rank + offset - int(step) % size + 2 * size) % size);
    };
    for (size_t step = 0; step + 1 < ranks; ++step) {
      size_t out = at(step, 0), in = at(step, -1);
      if (Status s = check(MPI_Sendrecv(bytes + begin(out) * element,
                                        int(blockSize(out)), mpiType(type),
                                        right, 0, incoming.data(),
                                        int(blockSize(in)), mpiType(type), left,
                                        0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                           "all-reduce");
          s.failed())
        return s;
      add(bytes + begin(in) * element, incoming.data(), blockSize(in), type);
    }
    for (size_t step = 0; step + 1 < ranks; ++step) {
      size_t out = at(step, 1), in = at(step, 0);
      if (Status s = check(MPI_Sendrecv(bytes + begin(out) * element,
                                        int(blockSize(out)), mpiType(type),
                                        right, 1, bytes + begin(in) * element,
                                        int(blockSize(in)), mpiType(type), left,
                                        1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                           "all-reduce");
          s.failed())
        return s;
    }
    return Status::success();
  }

  /// into[i] += from[i] (bf16: in fp32, rounded back).
  static void add(char *into, const char *from, size_t n, CommType type) {
    if (type == CommType::F32) {
      float *a = reinterpret_cast<float *>(into);
      const float *b = reinterpret_cast<const float *>(from);
      for (size_t i = 0; i < n; ++i)
        a[i] += b[i];
      return;
    }
    uint16_t *a = reinterpret_cast<uint16_t *>(into);
    const uint16_t *b = reinterpret_cast<const uint16_t *>(from);
    for (size_t i = 0; i < n; ++i)
      a[i] = toBf16(fromBf16(a[i]) + fromBf16(b[i]));
  }

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

  bool owner = false;
  int rank = 0, size = 1;
  std::string library;
  std::vector<char> incoming;
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
  out = std::make_unique<Mpi>(/*owner=*/!initialized);
  return Status::success();
}
