//===- allreduce.cpp - The Communicator's all-reduce: checked and timed ---===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
//
//   mpirun -np P qtrain-bench-allreduce [--max-elements=N] [--repeats=R]
//
// For each wire type of the gradient exchange (fp32, bf16, int16) and sizes
// from 1 Ki elements to N (default 16 Mi), every rank fills its buffer with
// values that depend on its rank and the index, all-reduces them (sum), and
// checks every element against the exact sum (small integers, exact in
// each type); then times R all-reduces (default 20) and prints the mean
// time and the bus bandwidth, 2 (P - 1) / P * bytes / time, the figure the
// scaling model (docs/scale-out.md) takes as a link's bandwidth. Rank 0
// prints; a wrong element ends the job with its index and value.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/MpiCommunicator.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace qtrain::rt;

namespace {

[[noreturn]] void fail(Communicator &c, const std::string &message) {
  std::fprintf(stderr, "qtrain-bench-allreduce: rank %d: %s\n", c.getRank(),
               message.c_str());
  c.abort(1);
}

/// Rank r's value at index i: a small integer, so that every partial sum
/// is exact in fp32, bf16 (|sum| <= 256) and int16.
int valueAt(int rank, size_t i) {
  return int((i * 7 + size_t(rank) * 3) % 9) - 4;
}

template <typename T, typename ToWire, typename FromWire>
double run(Communicator &c, CommType type, size_t n, int repeats, ToWire to,
           FromWire from) {
  std::vector<T> data(n);
  int ranks = c.getSize();
  for (size_t i = 0; i < n; ++i)
    data[i] = to(valueAt(c.getRank(), i));
  if (Status s = c.allReduce(data.data(), n, type, CommOp::Sum); s.failed())
    fail(c, s.message());
  for (size_t i = 0; i < n; ++i) {
    int expected = 0;
    for (int r = 0; r < ranks; ++r)
      expected += valueAt(r, i);
    if (from(data[i]) != double(expected))
      fail(c, "element " + std::to_string(i) + " of " + std::to_string(n) +
                  " is " + std::to_string(from(data[i])) + ", expected " +
                  std::to_string(expected));
  }
  (void)c.barrier();
  auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < repeats; ++k)
    if (Status s = c.allReduce(data.data(), n, type, CommOp::Sum); s.failed())
      fail(c, s.message());
  (void)c.barrier();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
             .count() /
         repeats;
}

} // namespace

int main(int argc, char **argv) {
  std::unique_ptr<Communicator> c;
  if (!launchedByMpi()) {
    std::fprintf(stderr, "qtrain-bench-allreduce: run it under mpirun -np P\n");
    return 2;
  }
  if (Status s = openMpi(&argc, &argv, c); s.failed()) {
    std::fprintf(stderr, "qtrain-bench-allreduce: %s\n", s.message().c_str());
    return 1;
  }
  size_t maxElements = size_t(1) << 24;
  int repeats = 20;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--max-elements=", 0) == 0)
      maxElements = size_t(std::atoll(arg.c_str() + 15));
    else if (arg.rfind("--repeats=", 0) == 0)
      repeats = std::max(1, std::atoi(arg.c_str() + 10));
    else
      fail(*c, "unknown argument '" + arg + "'");
  }
  int ranks = c->getSize();
  if (ranks * 4 > 256)
    fail(*c, "at most 64 ranks (the bf16 check's sums must stay exact)");
  bool leader = c->getRank() == 0;
  if (leader)
    std::printf("%d ranks, %s; sums checked exactly\n%-6s %12s %12s %12s\n",
                ranks, c->getName().c_str(), "type", "elements", "time",
                "bus GB/s");
  for (size_t n = 1024; n <= maxElements; n *= 16) {
    double t[3] = {
        run<float>(
            *c, CommType::F32, n, repeats, [](int v) { return float(v); },
            [](float v) { return double(v); }),
        run<uint16_t>(
            *c, CommType::BF16, n, repeats,
            [](int v) { return toBf16(float(v)); },
            [](uint16_t v) { return double(fromBf16(v)); }),
        run<int16_t>(
            *c, CommType::I16, n, repeats, [](int v) { return int16_t(v); },
            [](int16_t v) { return double(v); })};
    const char *names[3] = {"fp32", "bf16", "int16"};
    size_t sizes[3] = {4, 2, 2};
    for (int k = 0; k < 3 && leader; ++k)
      std::printf("%-6s %12zu %9.3f ms %12.2f\n", names[k], n, 1e3 * t[k],
                  2.0 * (ranks - 1) / ranks * double(n * sizes[k]) / t[k] /
                      1e9);
  }
  return 0;
}
