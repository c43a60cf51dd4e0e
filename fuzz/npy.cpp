//===- npy.cpp - Fuzz the .npy array reader ---------------------*- C++ -*-===//
//
// Part of the qtrain project.
//
// The first byte chooses the dtypes asked for (the samples' |u1 and <f4,
// or the labels' |u1, <i4 and <i8); the rest is the file. readNpy must
// accept it, with one of those dtypes and exactly the bytes its shape
// implies, or refuse it with a message.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Data.h"

#include <algorithm>
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
  std::string path = std::string(dir ? dir : "/tmp") + "/qtrain-fuzz-npy-" +
                     std::to_string(getpid()) + ".npy";
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    std::abort();
  std::fwrite(data + 1, 1, size - 1, f);
  std::fclose(f);
  std::vector<std::string> allowed =
      data[0] & 1 ? std::vector<std::string>{"|u1", "<i4", "<i8"}
                  : std::vector<std::string>{"|u1", "<f4"};
  NpyArray a;
  Status s = readNpy(path, allowed, a);
  if (s.failed()) {
    if (s.message().empty())
      std::abort();
    return 0;
  }
  if (std::find(allowed.begin(), allowed.end(), a.dtype) == allowed.end())
    std::abort();
  size_t item = a.dtype == "|u1" ? 1 : a.dtype == "<i8" ? 8 : 4;
  uint64_t count = 1;
  for (int64_t d : a.shape) {
    if (d <= 0)
      std::abort();
    count *= uint64_t(d);
  }
  if (a.bytes.size() != count * item)
    std::abort();
  return 0;
}
