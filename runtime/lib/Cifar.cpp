//===- Cifar.cpp - CIFAR-10 and CIFAR-100 binary datasets -----------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The "binary version" of CIFAR-10 and CIFAR-100 as their authors
/// distribute it: fixed-size records with no header, so a file's length
/// must be a whole number of records, and every label byte is checked
/// against the dataset's classes (a file of another dataset or a cut
/// download is refused, not read as noise).
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Data.h"

#include <sys/stat.h>

using namespace qtrain::rt;

namespace {

/// 3 x 32 x 32 pixels, channel-major (all red, then green, then blue).
constexpr int64_t kCifarPixels = 3 * 32 * 32;

/// Appends the records of `path` to `d`. `labelBytes` is 1 (CIFAR-10) or 2
/// (CIFAR-100: coarse, then fine); `which` picks the label byte kept and
/// `classes` bounds it.
Status readRecords(const std::string &path, int labelBytes, int which,
                   int classes, const char *dataset, Dataset &d) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return Status::error(path + ": no such file (the " + std::string(dataset) +
                         " binary version has " +
                         (labelBytes == 1 ? "data_batch_1.bin .. "
                                            "data_batch_5.bin and "
                                            "test_batch.bin"
                                          : "train.bin and test.bin") +
                         ")");
  std::vector<uint8_t> bytes;
  if (Status s = detail::readAll(path, bytes); s.failed())
    return s;
  size_t record = size_t(labelBytes + kCifarPixels);
  if (bytes.empty())
    return Status::error(path + ": empty (no " + dataset + " records)");
  if (bytes.size() % record != 0)
    return Status::error(
        path + ": truncated or not a " + dataset +
        " file: " + std::to_string(bytes.size()) +
        " bytes is not a whole number of " + std::to_string(record) +
        "-byte records (" + std::to_string(bytes.size() / record) +
        " records and " + std::to_string(bytes.size() % record) + " bytes)");
  size_t records = bytes.size() / record;
  d.pixels.reserve(d.pixels.size() + records * size_t(kCifarPixels));
  for (size_t r = 0; r < records; ++r) {
    const uint8_t *p = &bytes[r * record];
    int label = p[which];
    if (label >= classes)
      return Status::error(path + ": record " + std::to_string(r) +
                           " has label " + std::to_string(label) +
                           ", not one of the " + std::to_string(classes) +
                           " classes of " + dataset);
    // CIFAR-100's other label byte is checked too: a CIFAR-10 file read as
    // CIFAR-100 would otherwise pass whenever its pixels look like labels.
    if (labelBytes == 2 && p[1 - which] >= (which == 1 ? 20 : 100))
      return Status::error(path + ": record " + std::to_string(r) + " has " +
                           (which == 1 ? "coarse" : "fine") + " label " +
                           std::to_string(p[1 - which]) +
                           ", out of range for " + dataset);
    d.labels.push_back(label);
    d.pixels.insert(d.pixels.end(), p + labelBytes, p + record);
  }
  d.count += int64_t(records);
  return Status::success();
}

} // namespace

Status qtrain::rt::loadCifar(const std::string &dir, const std::string &split,
                             bool hundred, bool coarseLabels, Dataset &out) {
  if (split != "train" && split != "test")
    return Status::error("unknown split '" + split +
                         "' (expected train or test)");
  const char *dataset = hundred ? "CIFAR-100" : "CIFAR-10";
  if (Status s = detail::checkDirectory(dir, std::string("the ") + dataset +
                                                 " binary files (*.bin)");
      s.failed())
    return s;
  std::vector<std::string> files;
  if (hundred)
    files.push_back(dir + "/" + split + ".bin");
  else if (split == "test")
    files.push_back(dir + "/test_batch.bin");
  else
    for (int i = 1; i <= 5; ++i)
      files.push_back(dir + "/data_batch_" + std::to_string(i) + ".bin");
  Dataset d;
  d.channels = 3;
  d.rows = d.cols = 32;
  int labelBytes = hundred ? 2 : 1;
  int which = hundred && !coarseLabels ? 1 : 0;
  int classes = !hundred ? 10 : coarseLabels ? 20 : 100;
  for (const std::string &file : files)
    if (Status s = readRecords(file, labelBytes, which, classes, dataset, d);
        s.failed())
      return s;
  detail::countClasses(d);
  out = std::move(d);
  return Status::success();
}
