//===- checkpoint.cpp - Fuzz the checkpoint loader --------------*- C++ -*-===//
//
// Part of the qtrain project.
//
// The first byte chooses the mode. Odd: the rest is a checkpoint file as
// is. Even: the rest is a checkpoint without its CRC-32, which the harness
// appends, so that mutations reach the fields behind the checksum.
// loadCheckpoint must accept or refuse with a message; it reads a file, so
// the input goes to a private temporary file.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Checkpoint.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <zlib.h>

using namespace qtrain::rt;

namespace {
std::string path() {
  static const std::string p = [] {
    const char *dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/qtrain-fuzz-checkpoint-" +
           std::to_string(getpid()) + ".qck";
  }();
  return p;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  bool raw = data[0] & 1;
  FILE *f = std::fopen(path().c_str(), "wb");
  if (!f)
    std::abort();
  std::fwrite(data + 1, 1, size - 1, f);
  if (!raw) {
    uint32_t crc = uint32_t(crc32(0L, data + 1, uInt(size - 1)));
    uint8_t le[4] = {uint8_t(crc), uint8_t(crc >> 8), uint8_t(crc >> 16),
                     uint8_t(crc >> 24)};
    std::fwrite(le, 1, 4, f);
  }
  std::fclose(f);
  Checkpoint c;
  Status s = loadCheckpoint(path(), c);
  if (s.failed() && s.message().empty())
    std::abort();
  if (s.isOk() && (c.step < 0 || c.totalBitOps < 0))
    std::abort();
  return 0;
}
