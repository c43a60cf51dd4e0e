//===- Communicator.cpp - The one-process communicator --------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Communicator.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace qtrain::rt;

Communicator::~Communicator() = default;

size_t qtrain::rt::commTypeSize(CommType type) {
  switch (type) {
  case CommType::F32:
  case CommType::I32:
    return 4;
  case CommType::BF16:
  case CommType::I16:
    return 2;
  case CommType::U8:
    return 1;
  }
  return 0;
}

namespace {

class SingleProcess final : public Communicator {
public:
  int getRank() const override { return 0; }
  int getSize() const override { return 1; }
  std::string getName() const override { return "one process"; }
  Status allReduce(void *, size_t, CommType, CommOp) override {
    return Status::success();
  }
  Status broadcast(void *, size_t, int root) override {
    if (root != 0)
      return Status::error("broadcast from rank " + std::to_string(root) +
                           " in a job of one process");
    return Status::success();
  }
  Status barrier() override { return Status::success(); }
  [[noreturn]] void abort(int code) override { std::exit(code); }
};

} // namespace

int qtrain::rt::mpiWorldSize() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char *value = std::getenv(name))
      return std::max(1, std::atoi(value));
  return 0;
}

std::unique_ptr<Communicator> qtrain::rt::makeSingleProcess() {
  return std::make_unique<SingleProcess>();
}
