//===- Data.cpp - Image classification datasets, and IDX files -----------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Data.h"

#include "qtrain/runtime/File.h"
#include "qtrain/runtime/Philox.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

using namespace qtrain::rt;

namespace {

bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

uint32_t bigEndian(const uint8_t *p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) |
         (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

} // namespace

/// Reads the whole file, inflating it when it is gzip (zlib detects it).
/// Like every file the runtime reads, it must be a regular file (File.h):
/// a FIFO in its place would block the read forever.
Status qtrain::rt::detail::readAll(const std::string &path,
                                   std::vector<uint8_t> &out) {
  int fd;
  if (Status s = openRegularFile(path, fd); s.failed())
    return s;
  gzFile file = gzdopen(fd, "rb");
  if (!file) {
    ::close(fd);
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  }
  out.clear();
  uint8_t chunk[1 << 16];
  while (true) {
    int n = gzread(file, chunk, sizeof(chunk));
    if (n < 0) {
      int code = 0;
      std::string why = gzerror(file, &code);
      gzclose(file);
      return Status::error(path + ": corrupt or unreadable (" + why + ")");
    }
    if (n == 0)
      break;
    out.insert(out.end(), chunk, chunk + n);
    // Guard against absurd inputs: CIFAR-10's largest file is ~30 MB.
    if (out.size() > (size_t(1) << 32)) {
      gzclose(file);
      return Status::error(path + ": larger than 4 GiB, not a dataset file");
    }
  }
  int status = gzclose(file);
  if (status != Z_OK)
    return Status::error(path + ": corrupt or truncated gzip data");
  return Status::success();
}

Status qtrain::rt::detail::checkDirectory(const std::string &dir,
                                          const std::string &what) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    return Status::error(dir +
                         ": not a directory (give --data-dir the folder "
                         "of " +
                         what + ")");
  if (::stat(dir.c_str(), &st) != 0)
    return Status::error(
        dir + ": no such directory" +
        (dir == kFashionMnistDir
             ? std::string(" (install the Debian package "
                           "dataset-fashion-mnist, or pass --data-dir)")
             : std::string()));
  return Status::success();
}

void qtrain::rt::detail::countClasses(Dataset &d) {
  int32_t maxLabel = 0;
  for (int32_t label : d.labels)
    maxLabel = std::max(maxLabel, label);
  d.classes = int(maxLabel) + 1;
}

void Dataset::truncate(int64_t n) {
  count = n;
  size_t elements = size_t(n * sampleSize());
  if (isIds)
    ids.resize(elements);
  else if (isFloat)
    values.resize(elements);
  else
    pixels.resize(elements);
  labels.resize(size_t(n));
}

Status qtrain::rt::loadSplit(const DataSource &source, const std::string &split,
                             Dataset &out) {
  if (split != "train" && split != "test")
    return Status::error("unknown split '" + split +
                         "' (expected train or test)");
  if (source.tokenIds && source.format != DataFormat::Npy)
    return Status::error("token ids are read from npy data only");
  switch (source.format) {
  case DataFormat::Idx:
    return loadDataset(source.dir, split, out);
  case DataFormat::Cifar10:
    return loadCifar(source.dir, split, false, false, out);
  case DataFormat::Cifar100:
    return loadCifar(source.dir, split, true, source.coarseLabels, out);
  case DataFormat::Npy:
    return loadNpy(source.dir, split, out, source.tokenIds);
  }
  return Status::error("unknown data format");
}

Status qtrain::rt::readIdx(const std::string &path, int rank,
                           std::vector<int64_t> &dims,
                           std::vector<uint8_t> &data) {
  std::string file = path;
  if (!exists(file) && exists(path + ".gz"))
    file = path + ".gz";
  if (!exists(file))
    return Status::error(path + "[.gz]: no such file");
  std::vector<uint8_t> bytes;
  if (Status s = detail::readAll(file, bytes); s.failed())
    return s;
  size_t header = 4 + 4 * size_t(rank);
  if (bytes.size() < header)
    return Status::error(file + ": truncated IDX header (" +
                         std::to_string(bytes.size()) + " bytes)");
  // Magic: 0, 0, type 0x08 (unsigned byte), number of dimensions.
  if (bytes[0] != 0 || bytes[1] != 0 || bytes[2] != 0x08 ||
      bytes[3] != uint8_t(rank))
    return Status::error(
        file + ": not an IDX file of unsigned bytes with " +
        std::to_string(rank) + " dimensions (magic " +
        std::to_string(bytes[0]) + " " + std::to_string(bytes[1]) + " " +
        std::to_string(bytes[2]) + " " + std::to_string(bytes[3]) + ")");
  dims.clear();
  uint64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    uint32_t size = bigEndian(&bytes[4 + 4 * size_t(d)]);
    if (size == 0)
      return Status::error(file + ": dimension " + std::to_string(d) + " is 0");
    dims.push_back(size);
    count *= size;
    if (count > (uint64_t(1) << 32))
      return Status::error(file + ": more than 2^32 elements");
  }
  if (bytes.size() - header != count)
    return Status::error(file + ": expected " + std::to_string(count) +
                         " data bytes after the header, found " +
                         std::to_string(bytes.size() - header));
  data.assign(bytes.begin() + header, bytes.end());
  return Status::success();
}

Status qtrain::rt::loadDataset(const std::string &dir, const std::string &split,
                               Dataset &out) {
  if (split != "train" && split != "test")
    return Status::error("unknown split '" + split +
                         "' (expected train or test)");
  if (Status s = detail::checkDirectory(dir, "the IDX files"); s.failed())
    return s;
  std::string prefix = dir + "/" + (split == "train" ? "train" : "t10k");
  std::vector<int64_t> imageDims, labelDims;
  Dataset d;
  std::vector<uint8_t> labels;
  if (Status s = readIdx(prefix + "-images-idx3-ubyte", 3, imageDims, d.pixels);
      s.failed())
    return s;
  if (Status s = readIdx(prefix + "-labels-idx1-ubyte", 1, labelDims, labels);
      s.failed())
    return s;
  if (imageDims[0] != labelDims[0])
    return Status::error(prefix + "-*: " + std::to_string(imageDims[0]) +
                         " images but " + std::to_string(labelDims[0]) +
                         " labels");
  d.count = imageDims[0];
  d.rows = imageDims[1];
  d.cols = imageDims[2];
  d.labels.assign(labels.begin(), labels.end());
  detail::countClasses(d);
  out = std::move(d);
  return Status::success();
}

std::vector<int64_t> qtrain::rt::shuffleOrder(uint64_t seed, int64_t epoch,
                                              int64_t count) {
  std::vector<int64_t> order(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    order[size_t(i)] = i;
  PhiloxStream stream(seed, 0x5348u, static_cast<uint32_t>(epoch));
  // Fisher-Yates from the back; j uniform in [0, i] from a 64-bit draw
  // (two words) by multiply-shift, whose bias is below 2^-32.
  for (int64_t i = count - 1; i > 0; --i) {
    uint64_t word = (uint64_t(stream.word(2 * uint64_t(i))) << 32) |
                    stream.word(2 * uint64_t(i) + 1);
    uint64_t bound = uint64_t(i) + 1;
    auto j = static_cast<int64_t>(
        static_cast<unsigned __int128>(word) * bound >> 64);
    std::swap(order[size_t(i)], order[size_t(j)]);
  }
  return order;
}
