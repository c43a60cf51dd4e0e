//===- Npy.cpp - NumPy .npy arrays and npy datasets -----------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A strict reader of the .npy format (numpy.lib.format, versions 1.0 and
/// 2.0): the magic, the header length, then a Python dict literal with
/// exactly 'descr', 'fortran_order' and 'shape', then the raw elements.
/// The dict is parsed here, not evaluated: anything but the literal forms
/// numpy writes is an error naming the file and the offset, so a file
/// that is not what it claims is refused before its data is used.
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Data.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <sys/stat.h>

using namespace qtrain::rt;

namespace {

/// Labels are class indices; a bundle with 2^24 classes would not fit in
/// memory, so a larger label is a wrong file, not a big model.
constexpr int64_t kMaxLabel = int64_t(1) << 24;

/// The dtypes the readers take, with their element size.
size_t itemSize(const std::string &dtype) {
  if (dtype == "|u1")
    return 1;
  if (dtype == "<f4" || dtype == "<i4")
    return 4;
  if (dtype == "<i8")
    return 8;
  return 0;
}

/// Element `i` of an integer array (|u1, <i4 or <i8), widened.
int64_t integerAt(const NpyArray &a, size_t i) {
  size_t item = itemSize(a.dtype);
  if (item == 1)
    return a.bytes[i];
  if (item == 4) {
    int32_t v;
    std::memcpy(&v, &a.bytes[i * 4], 4);
    return v;
  }
  int64_t v;
  std::memcpy(&v, &a.bytes[i * 8], 8);
  return v;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

/// A cursor over the header dict; `fail` records the first error with its
/// offset in the header.
class HeaderParser {
public:
  HeaderParser(const std::string &text) : text(text) {}

  bool parse(std::string &descr, bool &fortranOrder,
             std::vector<int64_t> &shape) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    if (!consume('{'))
      return fail("expected '{'");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      size_t keyAt = pos;
      std::string key;
      if (!parseString(key))
        return false;
      skipSpace();
      if (!consume(':'))
        return fail("expected ':' after '" + key + "'");
      skipSpace();
      bool *seen = key == "descr"           ? &haveDescr
                   : key == "fortran_order" ? &haveOrder
                   : key == "shape"         ? &haveShape
                                            : nullptr;
      if (!seen) {
        pos = keyAt;
        return fail("unexpected key '" + key +
                    "' (expected 'descr', 'fortran_order', 'shape')");
      }
      if (*seen) {
        pos = keyAt;
        return fail("key '" + key + "' given twice");
      }
      *seen = true;
      if (key == "descr" && !parseString(descr))
        return false;
      if (key == "fortran_order" && !parseBool(fortranOrder))
        return false;
      if (key == "shape" && !parseShape(shape))
        return false;
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume('}'))
        break;
      return fail("expected ',' or '}'");
    }
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after the dict");
    if (!haveDescr || !haveOrder || !haveShape)
      return fail(std::string("missing key '") +
                  (!haveDescr   ? "descr"
                   : !haveOrder ? "fortran_order"
                                : "shape") +
                  "'");
    return true;
  }

  std::string error;

private:
  const std::string &text;
  size_t pos = 0;

  bool fail(const std::string &why) {
    error =
        "malformed .npy header at offset " + std::to_string(pos) + ": " + why;
    return false;
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' ||
                                 text[pos] == '\t' || text[pos] == '\r'))
      ++pos;
  }
  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool parseString(std::string &out) {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return fail("expected a quoted string");
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string::npos)
      return fail("unterminated string");
    out = text.substr(pos, end - pos);
    if (out.find('\\') != std::string::npos)
      return fail("escapes in strings are not supported");
    pos = end + 1;
    return true;
  }
  bool parseBool(bool &out) {
    if (text.compare(pos, 4, "True") == 0) {
      pos += 4;
      out = true;
      return true;
    }
    if (text.compare(pos, 5, "False") == 0) {
      pos += 5;
      out = false;
      return true;
    }
    return fail("expected True or False");
  }
  bool parseShape(std::vector<int64_t> &shape) {
    if (!consume('('))
      return fail("expected a shape tuple");
    shape.clear();
    while (true) {
      skipSpace();
      if (consume(')'))
        return true;
      if (pos >= text.size() || !std::isdigit((unsigned char)text[pos]))
        return fail("expected a dimension (a non-negative integer)");
      int64_t value = 0;
      while (pos < text.size() && std::isdigit((unsigned char)text[pos])) {
        if (value > (std::numeric_limits<int64_t>::max() - 9) / 10)
          return fail("dimension too large");
        value = value * 10 + (text[pos++] - '0');
      }
      shape.push_back(value);
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume(')'))
        return true;
      return fail("expected ',' or ')' in the shape");
    }
  }
};

uint32_t littleEndian(const uint8_t *p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

std::string missing(const std::string &path) {
  return path + ": no such file (an npy dataset directory holds train_x.npy, "
                "train_y.npy, test_x.npy and test_y.npy)";
}

} // namespace

Status qtrain::rt::readNpy(const std::string &path,
                           const std::vector<std::string> &allowed,
                           NpyArray &out) {
  std::vector<uint8_t> bytes;
  if (Status s = detail::readAll(path, bytes); s.failed())
    return s;
  static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    return Status::error(path + ": not a .npy file (no \\x93NUMPY magic)");
  int major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2) || minor != 0)
    return Status::error(path + ": .npy format version " +
                         std::to_string(major) + "." + std::to_string(minor) +
                         " is not supported (1.0 or 2.0)");
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + lengthBytes)
    return Status::error(path + ": truncated .npy header");
  size_t headerLength = littleEndian(&bytes[8], int(lengthBytes));
  size_t dataStart = 8 + lengthBytes + headerLength;
  if (bytes.size() < dataStart)
    return Status::error(path + ": truncated .npy header (" +
                         std::to_string(headerLength) + " bytes announced, " +
                         std::to_string(bytes.size() - 8 - lengthBytes) +
                         " present)");
  std::string header(bytes.begin() + long(8 + lengthBytes),
                     bytes.begin() + long(dataStart));
  NpyArray a;
  bool fortranOrder = false;
  HeaderParser parser(header);
  if (!parser.parse(a.dtype, fortranOrder, a.shape))
    return Status::error(path + ": " + parser.error);
  if (fortranOrder)
    return Status::error(path + ": fortran_order is True; save the array in "
                                "C order (numpy.ascontiguousarray)");
  if (std::find(allowed.begin(), allowed.end(), a.dtype) == allowed.end()) {
    std::string list;
    for (const std::string &d : allowed)
      list += (list.empty() ? "" : ", ") + d;
    return Status::error(path + ": dtype '" + a.dtype +
                         "' is not supported here (expected " + list + ")");
  }
  size_t item = itemSize(a.dtype);
  uint64_t elements = 1;
  for (int64_t d : a.shape) {
    if (d == 0)
      return Status::error(path + ": shape " + shapeText(a.shape) +
                           " has a zero dimension");
    if (uint64_t(d) > (uint64_t(1) << 32) ||
        elements * uint64_t(d) > (uint64_t(1) << 32))
      return Status::error(path + ": shape " + shapeText(a.shape) +
                           " has more than 2^32 elements");
    elements *= uint64_t(d);
  }
  uint64_t expected = elements * item;
  if (bytes.size() - dataStart != expected)
    return Status::error(path + ": shape " + shapeText(a.shape) + " of " +
                         a.dtype + " needs " + std::to_string(expected) +
                         " data bytes, the file has " +
                         std::to_string(bytes.size() - dataStart));
  a.bytes.assign(bytes.begin() + long(dataStart), bytes.end());
  out = std::move(a);
  return Status::success();
}

Status qtrain::rt::loadNpy(const std::string &dir, const std::string &split,
                           Dataset &out, bool tokenIds) {
  if (split != "train" && split != "test")
    return Status::error("unknown split '" + split +
                         "' (expected train or test)");
  if (Status s = detail::checkDirectory(
          dir, "train_x.npy, train_y.npy, test_x.npy, test_y.npy");
      s.failed())
    return s;
  std::string xPath = dir + "/" + split + "_x.npy",
              yPath = dir + "/" + split + "_y.npy";
  struct stat st;
  for (const std::string &path : {xPath, yPath})
    if (::stat(path.c_str(), &st) != 0)
      return Status::error(missing(path));
  NpyArray x, y;
  if (tokenIds) {
    if (Status s = readNpy(xPath, {"|u1", "<i4", "<i8"}, x); s.failed())
      return Status::error(s.message() + " (the bundle's input is token ids)");
    if (x.shape.size() != 2)
      return Status::error(xPath + ": shape " + shapeText(x.shape) +
                           ": expected N x S token ids (the bundle's input "
                           "is token ids)");
  } else {
    if (Status s = readNpy(xPath, {"|u1", "<f4"}, x); s.failed())
      return s;
    if (x.shape.size() != 3 && x.shape.size() != 4)
      return Status::error(xPath + ": shape " + shapeText(x.shape) +
                           ": expected N x C x H x W or N x H x W");
  }
  if (Status s = readNpy(yPath, {"|u1", "<i4", "<i8"}, y); s.failed())
    return s;
  if (y.shape.size() != 1)
    return Status::error(yPath + ": shape " + shapeText(y.shape) +
                         ": expected a 1-d array of labels");
  if (x.shape[0] != y.shape[0])
    return Status::error(xPath + " has " + std::to_string(x.shape[0]) +
                         " samples but " + yPath + " has " +
                         std::to_string(y.shape[0]) + " labels");
  Dataset d;
  d.count = x.shape[0];
  bool chw = x.shape.size() == 4;
  d.channels = chw ? x.shape[1] : 1;
  d.rows = tokenIds ? 1 : x.shape[chw ? 2 : 1];
  d.cols = x.shape[tokenIds ? 1 : chw ? 3 : 2];
  d.isFloat = x.dtype == "<f4";
  d.isIds = tokenIds;
  size_t elements = size_t(d.count * d.sampleSize());
  if (d.isIds) {
    d.ids.resize(elements);
    for (size_t i = 0; i < elements; ++i) {
      d.ids[i] = integerAt(x, i);
      if (d.ids[i] < 0)
        return Status::error(
            xPath + ": token id " + std::to_string(d.ids[i]) + " at sample " +
            std::to_string(i / size_t(d.cols)) + ", position " +
            std::to_string(i % size_t(d.cols)) +
            " is negative (ids are table rows from 0)");
    }
  } else if (d.isFloat) {
    d.values.resize(elements);
    std::memcpy(d.values.data(), x.bytes.data(), elements * sizeof(float));
    for (size_t i = 0; i < elements; ++i)
      if (!std::isfinite(d.values[i]))
        return Status::error(
            xPath + ": element " + std::to_string(i) + " (sample " +
            std::to_string(i / size_t(d.sampleSize())) + ") is " +
            (std::isnan(d.values[i]) ? "NaN" : "infinite"));
  } else {
    d.pixels = std::move(x.bytes);
  }
  d.labels.resize(size_t(d.count));
  for (size_t i = 0; i < size_t(d.count); ++i) {
    int64_t label = integerAt(y, i);
    if (label < 0)
      return Status::error(yPath + ": label " + std::to_string(label) +
                           " at index " + std::to_string(i) +
                           " is negative (labels are class indices from 0)");
    if (label >= kMaxLabel)
      return Status::error(yPath + ": label " + std::to_string(label) +
                           " at index " + std::to_string(i) +
                           " is too large (at most " +
                           std::to_string(kMaxLabel - 1) + ")");
    d.labels[i] = int32_t(label);
  }
  detail::countClasses(d);
  out = std::move(d);
  return Status::success();
}
