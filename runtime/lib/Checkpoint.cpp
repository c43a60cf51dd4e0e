//===- Checkpoint.cpp - Training checkpoints ------------------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Checkpoint.h"

#include "qtrain/runtime/File.h"
#include "qtrain/runtime/Trainer.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace qtrain::rt;

namespace {

constexpr char kMagic[8] = {'Q', 'T', 'R', 'A', 'I', 'N', 'C', 'K'};
constexpr uint32_t kVersion = 2;

template <typename T>
void put(std::string &out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

/// Reads fields from a byte range, failing with the field's name when the
/// file ends first.
class Reader {
public:
  Reader(const std::string &path, const std::string &bytes)
      : path(path), bytes(bytes) {}

  template <typename T>
  Status get(const char *what, T &value) {
    if (bytes.size() - pos < sizeof(T))
      return truncated(what);
    std::memcpy(&value, bytes.data() + pos, sizeof(T));
    pos += sizeof(T);
    return Status::success();
  }
  Status getBytes(const char *what, size_t count, const char *&data) {
    if (bytes.size() - pos < count)
      return truncated(what);
    data = bytes.data() + pos;
    pos += count;
    return Status::success();
  }
  size_t remaining() const { return bytes.size() - pos; }

private:
  Status truncated(const char *what) const {
    return Status::error(path + ": truncated checkpoint (ends inside " + what +
                         ")");
  }
  const std::string &path;
  const std::string &bytes;
  size_t pos = 0;
};

uint32_t crc(const char *data, size_t size) {
  uLong value = crc32(0L, Z_NULL, 0);
  while (size > 0) {
    uInt chunk = size > (1u << 30) ? (1u << 30) : uInt(size);
    value = crc32(value, reinterpret_cast<const Bytef *>(data), chunk);
    data += chunk;
    size -= chunk;
  }
  return uint32_t(value);
}

Status ioError(const std::string &path, const char *what) {
  return Status::error(path + ": " + what + ": " + std::strerror(errno));
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

} // namespace

Checkpoint qtrain::rt::captureCheckpoint(const Trainer &trainer,
                                         std::string config,
                                         double epochLossSum,
                                         int64_t epochLossCount) {
  Checkpoint c;
  c.config = std::move(config);
  c.step = trainer.getStep();
  c.totalBitOps = trainer.getTotalBitOps();
  c.epochLossSum = epochLossSum;
  c.epochLossCount = epochLossCount;
  for (size_t i = 0; i < trainer.getNumBuffers(); ++i) {
    const float *data = trainer.getBuffer(i);
    c.buffers.emplace_back(data, data + trainer.getBufferSize(i));
  }
  return c;
}

Status qtrain::rt::saveCheckpoint(const std::string &path,
                                  const Checkpoint &c) {
  std::string bytes(kMagic, sizeof(kMagic));
  put<uint32_t>(bytes, kVersion);
  put<uint32_t>(bytes, uint32_t(c.config.size()));
  bytes += c.config;
  put<int64_t>(bytes, c.step);
  put<double>(bytes, c.totalBitOps);
  put<double>(bytes, c.epochLossSum);
  put<int64_t>(bytes, c.epochLossCount);
  put<uint32_t>(bytes, uint32_t(c.buffers.size()));
  for (const std::vector<float> &b : c.buffers) {
    put<uint64_t>(bytes, b.size());
    bytes.append(reinterpret_cast<const char *>(b.data()),
                 b.size() * sizeof(float));
  }
  put<uint32_t>(bytes, crc(bytes.data(), bytes.size()));

  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return ioError(tmp, "cannot create");
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      Status s = ioError(tmp, "cannot write");
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    written += size_t(n);
  }
  if (::fsync(fd) != 0) {
    Status s = ioError(tmp, "cannot fsync");
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return ioError(tmp, "cannot close");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = ioError(path, "cannot rename the new checkpoint into place");
    ::unlink(tmp.c_str());
    return s;
  }
  // The rename is durable once the directory is.
  int dir = ::open(directoryOf(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return Status::success();
}

Status qtrain::rt::loadCheckpoint(const std::string &path, Checkpoint &out) {
  // A regular file only: a FIFO would block, /dev/zero never end.
  std::FILE *file;
  if (Status s = openRegularFile(path, file); s.failed())
    return s;
  std::string bytes;
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), file)) > 0)
    bytes.append(chunk, n);
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed)
    return ioError(path, "cannot read checkpoint");

  if (bytes.size() < sizeof(kMagic) ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return Status::error(path + ": not a qtrain checkpoint (bad magic)");
  if (bytes.size() < sizeof(kMagic) + 4 + 4 + 4)
    return Status::error(path + ": truncated checkpoint");
  uint32_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 4, 4);
  if (crc(bytes.data(), bytes.size() - 4) != stored)
    return Status::error(path + ": corrupt checkpoint (CRC mismatch)");
  std::string body = bytes.substr(0, bytes.size() - 4);
  Reader r(path, body);
  char magic[8];
  uint32_t version, configSize, numBuffers;
  Checkpoint c;
  const char *text;
  if (Status s = r.get("the magic", magic); s.failed())
    return s;
  if (Status s = r.get("the version", version); s.failed())
    return s;
  if (version == 1)
    return Status::error(
        path +
        ": checkpoint version 1 (this runtime reads 2): it does not record "
        "the running training loss of its epoch, so a resumed run could not "
        "log that epoch's mean exactly; restart the run, or finish it with "
        "the qtrain-run that wrote the checkpoint");
  if (version != kVersion)
    return Status::error(path + ": checkpoint version " +
                         std::to_string(version) + " (this runtime reads " +
                         std::to_string(kVersion) + ")");
  if (Status s = r.get("the configuration size", configSize); s.failed())
    return s;
  if (Status s = r.getBytes("the configuration", configSize, text); s.failed())
    return s;
  c.config.assign(text, configSize);
  nlohmann::json config = nlohmann::json::parse(c.config, nullptr, false);
  if (config.is_discarded() || !config.is_object())
    return Status::error(path +
                         ": the checkpoint's configuration is not a JSON "
                         "object");
  if (Status s = r.get("the step", c.step); s.failed())
    return s;
  if (Status s = r.get("the BitOps", c.totalBitOps); s.failed())
    return s;
  // A step the ABI cannot take, or a BitOps count no run can reach, is
  // damage the CRC did not catch (found by fuzz/checkpoint.cpp).
  if (c.step < 0 || c.step > int64_t(INT32_MAX))
    return Status::error(path + ": the checkpoint's step " +
                         std::to_string(c.step) + " is outside [0, 2^31 - 1]");
  if (!(c.totalBitOps >= 0.0) || !std::isfinite(c.totalBitOps))
    return Status::error(path + ": the checkpoint's BitOps count " +
                         std::to_string(c.totalBitOps) +
                         " is not a finite non-negative number");
  if (Status s = r.get("the epoch loss sum", c.epochLossSum); s.failed())
    return s;
  if (Status s = r.get("the epoch loss count", c.epochLossCount); s.failed())
    return s;
  if (c.epochLossCount < 0 || c.epochLossCount > c.step)
    return Status::error(path + ": the checkpoint's epoch loss count " +
                         std::to_string(c.epochLossCount) +
                         " is outside [0, its step " + std::to_string(c.step) +
                         "]");
  if (!std::isfinite(c.epochLossSum) ||
      (c.epochLossCount == 0 && c.epochLossSum != 0))
    return Status::error(path + ": the checkpoint's epoch loss sum " +
                         std::to_string(c.epochLossSum) + " over " +
                         std::to_string(c.epochLossCount) +
                         " steps is not a finite sum of losses");
  if (Status s = r.get("the buffer count", numBuffers); s.failed())
    return s;
  for (uint32_t i = 0; i < numBuffers; ++i) {
    uint64_t count;
    if (Status s = r.get("a buffer size", count); s.failed())
      return s;
    if (count > r.remaining() / sizeof(float))
      return Status::error(path + ": truncated checkpoint (buffer " +
                           std::to_string(i) + " claims " +
                           std::to_string(count) + " floats)");
    const char *data;
    if (Status s = r.getBytes("a buffer", count * sizeof(float), data);
        s.failed())
      return s;
    std::vector<float> buffer(count);
    // An empty buffer has no storage: memcpy from or to null is undefined
    // even for zero bytes (found by fuzz/checkpoint.cpp).
    if (count > 0)
      std::memcpy(buffer.data(), data, count * sizeof(float));
    c.buffers.push_back(std::move(buffer));
  }
  if (r.remaining() != 0)
    return Status::error(path + ": " + std::to_string(r.remaining()) +
                         " stray bytes after the last buffer");
  out = std::move(c);
  return Status::success();
}

Status qtrain::rt::restoreCheckpoint(Trainer &trainer, const Checkpoint &c) {
  if (c.buffers.size() != trainer.getNumBuffers())
    return Status::error("the checkpoint has " +
                         std::to_string(c.buffers.size()) +
                         " buffers, the bundle's run " +
                         std::to_string(trainer.getNumBuffers()));
  std::vector<const float *> data;
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    if (c.buffers[i].size() != trainer.getBufferSize(i))
      return Status::error("checkpoint buffer " + std::to_string(i) + " has " +
                           std::to_string(c.buffers[i].size()) +
                           " floats, the bundle's " +
                           std::to_string(trainer.getBufferSize(i)));
    data.push_back(c.buffers[i].data());
  }
  // No step ever leaves inf or NaN in the parameters or momentum (step()
  // fails or skips such an update), so a checkpoint's must be finite too:
  // a damaged one would otherwise train on and evaluate to NaN. State
  // tensors may hold infinities (the range of an infinite input).
  const std::vector<ParameterSpec> &params =
      trainer.getBundle().getManifest().parameters;
  size_t numParameters = params.size();
  for (size_t i = 0; i < 2 * numParameters && i < data.size(); ++i)
    for (size_t e = 0; e < c.buffers[i].size(); ++e)
      if (!std::isfinite(data[i][e])) {
        const std::string &name = params[i % numParameters].name;
        return Status::error(
            "restore: " +
            (i < numParameters ? "parameter '" + name + "'"
                               : "the momentum of parameter '" + name + "'") +
            " has " + (std::isnan(data[i][e]) ? "NaN" : "an infinity") +
            " at element " + std::to_string(e) +
            " (a run never saves non-finite parameters or momentum; the "
            "checkpoint is damaged)");
      }
  return trainer.restore(data, c.step, c.totalBitOps);
}
