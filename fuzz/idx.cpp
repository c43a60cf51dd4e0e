//===- idx.cpp - Fuzz the IDX dataset reader --------------------*- C++ -*-===//
//
// Part of the qtrain project.
//
// The first byte chooses the rank asked for (1 or 3, as for labels and
// images) and whether the file is read as PATH or through PATH.gz (the
// reader falls back to the .gz file when PATH is missing), so both the IDX
// parser and the gzip path see the input. readIdx must accept it, with
// dims matching the data, or refuse with a message.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Data.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace qtrain::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const char *dir = std::getenv("TMPDIR");
  std::string base = std::string(dir ? dir : "/tmp") + "/qtrain-fuzz-idx-" +
                     std::to_string(getpid());
  bool gz = data[0] & 1;
  int rank = (data[0] & 2) ? 3 : 1;
  std::string file = gz ? base + ".gz" : base;
  std::remove(base.c_str());
  std::remove((base + ".gz").c_str());
  FILE *f = std::fopen(file.c_str(), "wb");
  if (!f)
    std::abort();
  std::fwrite(data + 1, 1, size - 1, f);
  std::fclose(f);
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
  Status s = readIdx(base, rank, dims, bytes);
  if (s.failed()) {
    if (s.message().empty())
      std::abort();
    return 0;
  }
  int64_t count = 1;
  for (int64_t d : dims)
    count *= d;
  if (int64_t(dims.size()) != rank || int64_t(bytes.size()) != count)
    std::abort();
  return 0;
}
