//===- Manifest.cpp - Reading and writing manifest.json ------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The reader and the writer of Manifest.h, side by side.
///
/// nlohmann::json is used through its non-throwing entry points only:
/// parse(..., allow_exceptions = false), a SAX pass for the position of a
/// syntax error, find() instead of at(), and get<>() only after checking
/// the type. JSON_NOEXCEPTION is deliberately not defined here: it would
/// give this translation unit different definitions of nlohmann's inline
/// functions than any other code in the same program that uses the library
/// with exceptions (an ODR violation), and it is not needed since nothing
/// here can throw. (The same code compiles and behaves the same with
/// -fno-exceptions / JSON_NOEXCEPTION.)
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Manifest.h"

#include "qtrain/runtime/Schedule.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <tuple>
#include <utility>

using namespace qtrain::rt;
using json = nlohmann::json;

namespace {

/// Largest tensor accepted (elements); keeps byte counts far from overflow.
constexpr int64_t kMaxNumel = int64_t(1) << 40;

/// The control scalars of the version-1 step ABI, in ABI order.
const char *const kControls[] = {"bits", "grad_bits", "seed", "step"};

/// "3/8", "fp32/8", "fp32/fp32".
std::string bitsName(int bits) {
  return bits == 0 ? "fp32" : std::to_string(bits);
}
std::string variantName(int bits, int gradBits) {
  return bitsName(bits) + "/" + bitsName(gradBits);
}

/// A short rendering of a JSON value for messages: ASCII, at most ~40
/// characters.
std::string shortDump(const json &value) {
  std::string text = value.dump(-1, ' ', /*ensure_ascii=*/true,
                                json::error_handler_t::replace);
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return text;
}

std::string_view typeName(const json &value) {
  switch (value.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
    return "an integer";
  case json::value_t::number_float:
    return "a number";
  case json::value_t::string:
    return "a string";
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  default:
    return "an unexpected value";
  }
}

/// Records the position and message of the first syntax error; builds
/// nothing.
class SyntaxErrorFinder : public nlohmann::json_sax<json> {
public:
  std::string message;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t &) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &error) override {
    // "[json.exception.parse_error.101] parse error at line 1, column 12:
    // ..." without the bracketed id.
    message = error.what();
    size_t close = message.find("] ");
    if (message.rfind("[json.exception.", 0) == 0 && close != std::string::npos)
      message.erase(0, close + 2);
    return false;
  }
};

/// Validates manifest JSON into a Manifest, with "file: path: what"
/// messages.
class ManifestReader {
public:
  ManifestReader(const std::string &fileName, ErrorKind *kind)
      : fileName(fileName), kind(kind) {}

  Status read(const json &root, Manifest &m) const;

private:
  const std::string &fileName;
  ErrorKind *kind;

  Status fail(const std::string &path, const std::string &what,
              ErrorKind failKind = ErrorKind::Format) const {
    if (path.empty())
      return failWith(kind, failKind, fileName + ": " + what);
    return failWith(kind, failKind, fileName + ": " + path + ": " + what);
  }
  Status expected(const std::string &path, const std::string &what,
                  const json &got) const {
    if (got.is_number() || got.is_boolean() || got.is_string())
      return fail(path, "expected " + what + ", got " + shortDump(got));
    return fail(path,
                "expected " + what + ", got " + std::string(typeName(got)));
  }

  static std::string join(const std::string &path, const char *key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }
  static std::string index(const std::string &path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  /// The member `key` of `object` (an object at `path`), required.
  Status member(const json &object, const std::string &path, const char *key,
                const json *&out) const {
    auto it = object.find(key);
    if (it == object.end())
      return fail(path, std::string("missing required field '") + key + "'");
    out = &*it;
    return Status::success();
  }
  Status object(const json &parent, const std::string &path, const char *key,
                const json *&out) const {
    if (Status s = member(parent, path, key, out); s.failed())
      return s;
    if (!out->is_object())
      return expected(join(path, key), "an object", *out);
    return Status::success();
  }
  Status array(const json &parent, const std::string &path, const char *key,
               const json *&out) const {
    if (Status s = member(parent, path, key, out); s.failed())
      return s;
    if (!out->is_array())
      return expected(join(path, key), "an array", *out);
    return Status::success();
  }
  Status string(const json &parent, const std::string &path, const char *key,
                bool nonEmpty, std::string &out) const {
    const json *value;
    if (Status s = member(parent, path, key, value); s.failed())
      return s;
    if (!value->is_string())
      return expected(join(path, key), "a string", *value);
    out = value->get<std::string>();
    if (nonEmpty && out.empty())
      return fail(join(path, key), "expected a non-empty string");
    if (out.find('\0') != std::string::npos)
      return fail(join(path, key), "string contains a NUL character");
    return Status::success();
  }
  /// An integer in [lo, hi]; `what` describes the expectation.
  Status integer(const json &value, const std::string &path, int64_t lo,
                 int64_t hi, const std::string &what, int64_t &out) const {
    if (value.is_number_unsigned()) {
      uint64_t u = value.get<uint64_t>();
      if (u > uint64_t(hi))
        return expected(path, what, value);
      out = int64_t(u);
    } else if (value.is_number_integer()) {
      out = value.get<int64_t>();
    } else {
      return expected(path, what, value);
    }
    if (out < lo || out > hi)
      return expected(path, what, value);
    return Status::success();
  }
  Status integer(const json &parent, const std::string &path, const char *key,
                 int64_t lo, int64_t hi, const std::string &what,
                 int64_t &out) const {
    const json *value;
    if (Status s = member(parent, path, key, value); s.failed())
      return s;
    return integer(*value, join(path, key), lo, hi, what, out);
  }
  /// A relative path that stays in the bundle directory.
  Status bundlePath(const json &parent, const std::string &path,
                    const char *key, std::string &out) const {
    if (Status s = string(parent, path, key, /*nonEmpty=*/true, out);
        s.failed())
      return s;
    bool escapes = out.front() == '/';
    for (size_t start = 0; !escapes && start <= out.size();) {
      size_t end = out.find('/', start);
      if (end == std::string::npos)
        end = out.size();
      escapes = out.compare(start, end - start, "..") == 0;
      start = end + 1;
    }
    if (escapes)
      return fail(join(path, key), "path '" + out +
                                       "' leaves the bundle directory (paths "
                                       "are relative, without '..')");
    return Status::success();
  }
  Status shape(const json &parent, const std::string &path,
               TensorSpec &out) const {
    const json *dims;
    if (Status s = array(parent, path, "shape", dims); s.failed())
      return s;
    std::string shapePath = join(path, "shape");
    out.shape.clear();
    out.numel = 1;
    for (size_t i = 0; i < dims->size(); ++i) {
      int64_t dim;
      if (Status s = integer((*dims)[i], index(shapePath, i), 1,
                             std::numeric_limits<int64_t>::max(),
                             "a positive integer", dim);
          s.failed())
        return s;
      if (dim > kMaxNumel / out.numel)
        return fail(shapePath, "more than 2^40 elements");
      out.shape.push_back(dim);
      out.numel *= dim;
    }
    return Status::success();
  }
  /// `required` null: either dtype.
  Status dtype(const json &parent, const std::string &path,
               const DType *required, const char *why, TensorSpec &out) const {
    std::string text;
    if (Status s = string(parent, path, "dtype", /*nonEmpty=*/false, text);
        s.failed())
      return s;
    if (text != "f32" && text != "i64")
      return fail(join(path, "dtype"),
                  "unknown dtype '" + text + "' (expected f32 or i64)");
    out.dtype = text == "f32" ? DType::F32 : DType::I64;
    if (required && out.dtype != *required)
      return fail(join(path, "dtype"),
                  "expected \"" + std::string(toString(*required)) + "\" (" +
                      why + "), got \"" + text + "\"");
    return Status::success();
  }
  Status tensor(const json &value, const std::string &path, bool named,
                const DType *required, const char *why, TensorSpec &out) const {
    if (!value.is_object())
      return expected(path, "an object", value);
    if (named) {
      if (Status s = string(value, path, "name", /*nonEmpty=*/true, out.name);
          s.failed())
        return s;
    }
    if (Status s = shape(value, path, out); s.failed())
      return s;
    return dtype(value, path, required, why, out);
  }
  /// Checks that `name` (at `path`) was not seen before in `names`.
  Status unique(std::vector<std::string> &names, const std::string &name,
                const std::string &path, const char *what,
                const char *listPath) const {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name)
        return fail(path, std::string("duplicate ") + what + " name '" + name +
                              "' (also " + listPath + "[" + std::to_string(i) +
                              "])");
    names.push_back(name);
    return Status::success();
  }

  Status readParameters(const json &root, Manifest &m) const;
  Status readState(const json &root, Manifest &m) const;
  Status readSites(const json &root, Manifest &m) const;
  Status readSiteCudaKernels(const json &site, const std::string &path,
                             SiteSpec &out) const;
  Status readCuda(const json &root, Manifest &m) const;
  Status readCudaKernel(const json &value, const std::string &path,
                        CudaKernelSpec &out) const;
  /// A JSON array of exactly three integers in [1, hi].
  Status dims3(const json &parent, const std::string &path, const char *key,
               int64_t hi, std::vector<int64_t> &out) const {
    const json *dims;
    if (Status s = array(parent, path, key, dims); s.failed())
      return s;
    std::string dimsPath = join(path, key);
    if (dims->size() != 3)
      return fail(dimsPath, "expected 3 integers (x, y, z), got " +
                                std::to_string(dims->size()));
    out.clear();
    for (size_t i = 0; i < 3; ++i) {
      int64_t d;
      if (Status s =
              integer((*dims)[i], index(dimsPath, i), 1, hi,
                      "an integer in [1, " + std::to_string(hi) + "]", d);
          s.failed())
        return s;
      out.push_back(d);
    }
    return Status::success();
  }
};

Status ManifestReader::read(const json &root, Manifest &m) const {
  if (!root.is_object())
    return expected("", "a JSON object at the top level", root);

  // Format and version first: a future version may change everything else.
  if (Status s = string(root, "", "format", /*nonEmpty=*/false, m.format);
      s.failed())
    return s;
  if (m.format != kBundleFormat)
    return fail("format", std::string("expected \"") + kBundleFormat +
                              "\", got \"" + m.format + "\"");
  int64_t version;
  if (Status s =
          integer(root, "", "version", std::numeric_limits<int>::min(),
                  std::numeric_limits<int>::max(), "an integer", version);
      s.failed())
    return s;
  if (version != kBundleFormatVersion)
    return fail("",
                "unsupported bundle version " + std::to_string(version) +
                    " (this runtime reads " +
                    std::to_string(kBundleFormatVersion) + ")",
                ErrorKind::Unsupported);
  m.version = int(version);

  const json *compiler;
  if (Status s = object(root, "", "compiler", compiler); s.failed())
    return s;
  if (Status s = string(*compiler, "compiler", "name", false, m.compiler.name);
      s.failed())
    return s;
  if (Status s =
          string(*compiler, "compiler", "version", false, m.compiler.version);
      s.failed())
    return s;
  if (Status s =
          string(*compiler, "compiler", "flags", false, m.compiler.flags);
      s.failed())
    return s;

  if (Status s = bundlePath(root, "", "library", m.library); s.failed())
    return s;
  // Optional: the library's SHA-256, checked before it is loaded.
  if (root.contains("library_sha256")) {
    if (Status s = string(root, "", "library_sha256", true, m.librarySha256);
        s.failed())
      return s;
    if (m.librarySha256.size() != 64 ||
        m.librarySha256.find_first_not_of("0123456789abcdef") !=
            std::string::npos)
      return fail("library_sha256", "expected 64 lowercase hex digits, got '" +
                                        m.librarySha256.substr(0, 80) + "'");
  }
  const json *entry;
  if (Status s = object(root, "", "entry", entry); s.failed())
    return s;
  if (Status s = string(*entry, "entry", "train", true, m.trainEntry);
      s.failed())
    return s;
  if (Status s = string(*entry, "entry", "eval", true, m.evalEntry); s.failed())
    return s;

  if (Status s = integer(root, "", "batch", 1, kMaxNumel, "a positive integer",
                         m.batch);
      s.failed())
    return s;
  if (Status s = integer(root, "", "classes", 1, kMaxNumel,
                         "a positive integer", m.classes);
      s.failed())
    return s;

  const json *input, *labels;
  if (Status s = member(root, "", "input", input); s.failed())
    return s;
  // f32 features or i64 token ids: the ABI passes either.
  if (Status s = tensor(*input, "input", /*named=*/true, /*required=*/nullptr,
                        "", m.input);
      s.failed())
    return s;
  if (auto it = input->find("max_value"); it != input->end()) {
    if (m.input.dtype != DType::I64)
      return fail("input.max_value",
                  "only an i64 (token id) input has a max_value");
    if (Status s = integer(*it, "input.max_value", 0,
                           std::numeric_limits<int64_t>::max(),
                           "a non-negative integer", m.inputMaxValue);
        s.failed())
      return s;
  }
  if (m.input.shape.empty() || m.input.shape[0] != m.batch)
    return fail("input.shape", "expected the batch size " +
                                   std::to_string(m.batch) +
                                   " as the first dimension");
  if (Status s = member(root, "", "labels", labels); s.failed())
    return s;
  m.labels.name = "labels";
  DType i64 = DType::I64;
  if (Status s = tensor(*labels, "labels", /*named=*/false, &i64,
                        "labels are class indices", m.labels);
      s.failed())
    return s;
  if (m.labels.shape.empty() || m.labels.shape[0] != m.batch)
    return fail("labels.shape", "expected the batch size " +
                                    std::to_string(m.batch) +
                                    " as the first dimension");
  if (m.batch > kMaxNumel / m.classes)
    return fail("classes", "batch x classes logits exceed 2^40 elements");

  if (Status s = readParameters(root, m); s.failed())
    return s;
  if (Status s = readState(root, m); s.failed())
    return s;

  const json *controls;
  if (Status s = array(root, "", "controls", controls); s.failed())
    return s;
  bool abiControls = controls->size() == std::size(kControls);
  for (size_t i = 0; abiControls && i < controls->size(); ++i)
    abiControls = (*controls)[i].is_string() &&
                  (*controls)[i].get<std::string>() == kControls[i];
  if (!abiControls)
    return fail("controls", "expected [\"bits\", \"grad_bits\", \"seed\", "
                            "\"step\"] (the version-1 step ABI)");
  m.controls.assign(std::begin(kControls), std::end(kControls));

  std::pair<const char *, std::string *> schedules[] = {
      {"schedule", &m.schedule}, {"grad_schedule", &m.gradSchedule}};
  for (auto [key, text] : schedules) {
    if (Status s = string(root, "", key, /*nonEmpty=*/false, *text); s.failed())
      return s;
    Schedule parsed;
    if (Status s = parseSchedule(*text, parsed); s.failed())
      return fail(key, s.message());
  }

  if (root.contains("grad_format")) {
    if (Status s = string(root, "", "grad_format", true, m.gradFormat);
        s.failed())
      return s;
    if (m.gradFormat != "int" && m.gradFormat != "e5m2")
      return fail("grad_format",
                  "expected \"int\" or \"e5m2\", got '" + m.gradFormat + "'");
    if (m.gradFormat == "e5m2" && m.gradSchedule != "static:8")
      return fail("grad_format", "e5m2 errors are the 8-bit backward: "
                                 "grad_schedule must be static:8, got '" +
                                     m.gradSchedule + "'");
  }

  if (Status s = readSites(root, m); s.failed())
    return s;
  return readCuda(root, m);
}

Status ManifestReader::readParameters(const json &root, Manifest &m) const {
  const json *params;
  if (Status s = array(root, "", "parameters", params); s.failed())
    return s;
  if (params->empty())
    return fail("parameters", "expected at least one parameter");
  std::vector<std::string> names;
  for (size_t i = 0; i < params->size(); ++i) {
    std::string path = index("parameters", i);
    ParameterSpec p;
    DType f32 = DType::F32;
    if (Status s = tensor((*params)[i], path, /*named=*/true, &f32,
                          "parameters are f32 buffers", p);
        s.failed())
      return s;
    if (Status s = unique(names, p.name, join(path, "name"), "parameter",
                          "parameters");
        s.failed())
      return s;
    const json *init;
    if (Status s = object((*params)[i], path, "init", init); s.failed())
      return s;
    std::string initPath = join(path, "init"), kindText;
    if (Status s = string(*init, initPath, "kind", false, kindText); s.failed())
      return s;
    if (kindText == "kaiming_uniform" || kindText == "bias_uniform") {
      p.init.kind =
          kindText[0] == 'k' ? InitKind::KaimingUniform : InitKind::BiasUniform;
      if (Status s = integer(*init, initPath, "fan_in", 1, kMaxNumel,
                             "a positive integer", p.init.fanIn);
          s.failed())
        return s;
    } else if (kindText == "zeros") {
      p.init.kind = InitKind::Zeros;
    } else if (kindText == "ones") {
      p.init.kind = InitKind::Ones;
    } else if (kindText == "normal") {
      p.init.kind = InitKind::Normal;
    } else if (kindText == "file") {
      p.init.kind = InitKind::File;
      if (Status s = bundlePath(*init, initPath, "path", p.init.path);
          s.failed())
        return s;
    } else {
      return fail(join(initPath, "kind"),
                  "unknown init kind '" + kindText +
                      "' (expected kaiming_uniform, bias_uniform, zeros, ones, "
                      "normal or file)");
    }
    m.parameters.push_back(std::move(p));
  }
  return Status::success();
}

Status ManifestReader::readState(const json &root, Manifest &m) const {
  const json *state;
  if (Status s = array(root, "", "state", state); s.failed())
    return s;
  std::vector<std::string> names;
  for (size_t i = 0; i < state->size(); ++i) {
    std::string path = index("state", i);
    StateSpec t;
    DType f32 = DType::F32;
    if (Status s = tensor((*state)[i], path, /*named=*/true, &f32,
                          "state tensors are f32 buffers", t);
        s.failed())
      return s;
    if (Status s = unique(names, t.name, join(path, "name"), "state", "state");
        s.failed())
      return s;
    if (Status s = string((*state)[i], path, "kind", false, t.kind); s.failed())
      return s;
    // Optional: a name per element (promotion flags, overflow ratios).
    if (auto it = (*state)[i].find("tensors"); it != (*state)[i].end()) {
      std::string tensorsPath = join(path, "tensors");
      if (!it->is_array())
        return expected(tensorsPath, "an array", *it);
      if (int64_t(it->size()) != t.numel)
        return fail(tensorsPath, "expected " + std::to_string(t.numel) +
                                     " names, one per element, got " +
                                     std::to_string(it->size()));
      for (size_t k = 0; k < it->size(); ++k) {
        if (!(*it)[k].is_string())
          return expected(index(tensorsPath, k), "a string", (*it)[k]);
        t.tensors.push_back((*it)[k].get<std::string>());
      }
    }
    // Optional: initial values (LDP's lambda).
    if (auto it = (*state)[i].find("init"); it != (*state)[i].end()) {
      std::string initPath = join(path, "init");
      if (!it->is_array() || int64_t(it->size()) != t.numel)
        return expected(initPath,
                        "an array of " + std::to_string(t.numel) + " numbers",
                        *it);
      for (size_t k = 0; k < it->size(); ++k) {
        const json &v = (*it)[k];
        if (!v.is_number() || !std::isfinite(v.get<double>()) ||
            !std::isfinite(float(v.get<double>())))
          return expected(index(initPath, k), "a finite f32 number", v);
        t.init.push_back(float(v.get<double>()));
      }
    }
    m.state.push_back(std::move(t));
  }
  return Status::success();
}

Status ManifestReader::readSites(const json &root, Manifest &m) const {
  const json *sites;
  if (Status s = array(root, "", "sites", sites); s.failed())
    return s;
  std::vector<std::string> names;
  for (size_t i = 0; i < sites->size(); ++i) {
    std::string path = index("sites", i);
    const json &site = (*sites)[i];
    if (!site.is_object())
      return expected(path, "an object", site);
    SiteSpec out;
    if (Status s = string(site, path, "name", true, out.name); s.failed())
      return s;
    if (Status s = unique(names, out.name, join(path, "name"), "site", "sites");
        s.failed())
      return s;
    if (Status s = string(site, path, "op", false, out.op); s.failed())
      return s;
    if (Status s =
            integer(site, path, "macs", 0, std::numeric_limits<int64_t>::max(),
                    "a non-negative integer", out.macs);
        s.failed())
      return s;
    // Optional: the LDP precision parameter, a scalar parameter.
    if (site.contains("precision")) {
      std::string ppath = join(path, "precision");
      if (Status s = string(site, path, "precision", true, out.precision);
          s.failed())
        return s;
      for (size_t k = 0; k < m.parameters.size(); ++k)
        if (m.parameters[k].name == out.precision)
          out.precisionParameter = int64_t(k);
      if (out.precisionParameter < 0)
        return fail(ppath, "no parameter is named '" + out.precision + "'");
      if (m.parameters[size_t(out.precisionParameter)].numel != 1)
        return fail(ppath, "parameter '" + out.precision +
                               "' is not a scalar (a precision has one "
                               "element)");
      for (const SiteSpec &earlier : m.sites)
        if (earlier.precisionParameter == out.precisionParameter)
          return fail(ppath, "parameter '" + out.precision +
                                 "' is already the precision of site '" +
                                 earlier.name + "'");
    }
    const json *variants;
    if (Status s = array(site, path, "variants", variants); s.failed())
      return s;
    std::string variantsPath = join(path, "variants");
    if (variants->empty())
      return fail(variantsPath, "expected at least one variant");
    for (size_t j = 0; j < variants->size(); ++j) {
      std::string vpath = index(variantsPath, j);
      const json &variant = (*variants)[j];
      if (!variant.is_object())
        return expected(vpath, "an object", variant);
      int64_t bits, gradBits;
      std::string range =
          "an integer in [0, " + std::to_string(kMaxScheduleBits) + "]";
      if (Status s =
              integer(variant, vpath, "bits", 0, kMaxScheduleBits, range, bits);
          s.failed())
        return s;
      if (Status s = integer(variant, vpath, "grad_bits", 0, kMaxScheduleBits,
                             range, gradBits);
          s.failed())
        return s;
      VariantSpec v;
      v.bits = int(bits);
      v.gradBits = int(gradBits);
      if (Status s = string(variant, vpath, "symbol", true, v.symbol);
          s.failed())
        return s;
      if (auto kernels = variant.find("kernels"); kernels != variant.end()) {
        std::string kpath = join(vpath, "kernels");
        if (!kernels->is_object())
          return expected(kpath, "an object", *kernels);
        for (auto it = kernels->begin(); it != kernels->end(); ++it) {
          const json &kind = it.value();
          if (!kind.is_string() ||
              (kind != "i8" && kind != "i16" && kind != "f32" &&
               kind != "bf16" && kind != "f64"))
            return expected(join(kpath, it.key().c_str()),
                            "a kernel kind (i8, i16, f32, bf16 or f64)", kind);
          v.kernels[it.key()] = kind.get<std::string>();
        }
      }
      for (size_t k = 0; k < out.variants.size(); ++k)
        if (out.variants[k].bits == v.bits &&
            out.variants[k].gradBits == v.gradBits)
          return fail(vpath, "duplicate variant " +
                                 variantName(v.bits, v.gradBits) +
                                 " in site '" + out.name + "' (also " +
                                 index(variantsPath, k) + ")");
      out.variants.push_back(std::move(v));
    }
    if (Status s = readSiteCudaKernels(site, path, out); s.failed())
      return s;
    m.sites.push_back(std::move(out));
  }
  return Status::success();
}

bool isCudaKernelKind(std::string_view kind) {
  return std::find(std::begin(kCudaKernelKinds), std::end(kCudaKernelKinds),
                   kind) != std::end(kCudaKernelKinds);
}

/// The products a site's "cuda" may name.
bool isProduct(std::string_view product) {
  return product == "forward" || product == "input_grad" ||
         product == "weight_grad";
}

Status ManifestReader::readSiteCudaKernels(const json &site,
                                           const std::string &path,
                                           SiteSpec &out) const {
  auto cuda = site.find("cuda");
  if (cuda == site.end())
    return Status::success();
  std::string cpath = join(path, "cuda");
  if (!cuda->is_object())
    return expected(cpath, "an object", *cuda);
  for (auto product = cuda->begin(); product != cuda->end(); ++product) {
    std::string ppath = join(cpath, product.key().c_str());
    if (!isProduct(product.key()))
      return fail(ppath, "unknown product '" + product.key() +
                             "' (expected forward, input_grad or "
                             "weight_grad)");
    if (!product->is_object())
      return expected(ppath, "an object", *product);
    for (auto kind = product->begin(); kind != product->end(); ++kind) {
      std::string kpath = join(ppath, kind.key().c_str());
      if (!isCudaKernelKind(kind.key()))
        return fail(kpath, "unknown GPU kernel kind '" + kind.key() +
                               "' (expected f32, tf32, bf16, fp8 or i8)");
      if (!kind->is_string() || kind->get<std::string>().empty())
        return expected(kpath, "a kernel name", *kind);
      out.cudaKernels[product.key()][kind.key()] = kind->get<std::string>();
    }
  }
  return Status::success();
}

Status ManifestReader::readCudaKernel(const json &value,
                                      const std::string &path,
                                      CudaKernelSpec &out) const {
  if (!value.is_object())
    return expected(path, "an object", value);
  if (Status s = string(value, path, "name", true, out.name); s.failed())
    return s;
  if (Status s = string(value, path, "kind", true, out.kind); s.failed())
    return s;
  if (!isCudaKernelKind(out.kind))
    return fail(join(path, "kind"),
                "unknown GPU kernel kind '" + out.kind +
                    "' (expected f32, tf32, bf16, fp8 or i8)");
  for (auto [key, field] :
       {std::pair{"a", &out.a}, std::pair{"b", &out.b}, std::pair{"c", &out.c}})
    if (Status s = string(value, path, key, true, *field); s.failed())
      return s;
  // The encodings each kind reads and writes.
  auto operandOk = [&](const std::string &e) {
    if (out.kind == "f32" || out.kind == "tf32")
      return e == "f32";
    if (out.kind == "bf16")
      return e == "bf16";
    if (out.kind == "fp8")
      return e == "e4m3" || e == "e5m2";
    return e == "s8";
  };
  for (auto [key, field] : {std::pair{"a", &out.a}, std::pair{"b", &out.b}})
    if (!operandOk(*field))
      return fail(join(path, key), "encoding '" + *field +
                                       "' is not an operand of a '" + out.kind +
                                       "' kernel");
  if (out.c != (out.kind == "i8" ? "s32" : "f32"))
    return fail(join(path, "c"), "a '" + out.kind + "' kernel writes " +
                                     (out.kind == "i8" ? "s32" : "f32") +
                                     ", not '" + out.c + "'");
  for (auto [key, field] :
       {std::pair{"batch", &out.batch}, std::pair{"m", &out.m},
        std::pair{"n", &out.n}, std::pair{"k", &out.k}})
    if (Status s = integer(value, path, key, 1, kMaxNumel, "a positive integer",
                           *field);
        s.failed())
      return s;
  if (out.m > kMaxNumel / out.k || out.n > kMaxNumel / out.k ||
      out.m > kMaxNumel / out.n ||
      out.batch >
          kMaxNumel / std::max({out.m * out.k, out.n * out.k, out.m * out.n}))
    return fail(path, "operands exceed 2^40 elements");
  if (Status s = dims3(value, path, "grid", (int64_t(1) << 31) - 1, out.grid);
      s.failed())
    return s;
  if (Status s = dims3(value, path, "block", 1024, out.block); s.failed())
    return s;
  if (out.block[0] * out.block[1] * out.block[2] > 1024)
    return fail(join(path, "block"), "more than 1024 threads in a block");
  return Status::success();
}

Status ManifestReader::readCuda(const json &root, Manifest &m) const {
  auto cuda = root.find("cuda");
  if (cuda == root.end()) {
    for (size_t i = 0; i < m.sites.size(); ++i)
      if (!m.sites[i].cudaKernels.empty())
        return fail(join(index("sites", i), "cuda"),
                    "names GPU kernels, but the manifest has no 'cuda' "
                    "target");
    return Status::success();
  }
  if (!cuda->is_object())
    return expected("cuda", "an object", *cuda);
  CudaTargetSpec &t = m.cuda;
  if (Status s = string(*cuda, "cuda", "chip", true, t.chip); s.failed())
    return s;
  // "sm_" digits, with an optional "a" (sm_90a: the arch-specific set).
  std::string digits = t.chip.rfind("sm_", 0) == 0 ? t.chip.substr(3) : "";
  if (!digits.empty() && digits.back() == 'a')
    digits.pop_back();
  if (digits.empty() || digits.size() > 4 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return fail("cuda.chip", "expected an NVIDIA architecture such as "
                             "\"sm_90\", got '" +
                                 t.chip + "'");
  if (Status s = bundlePath(*cuda, "cuda", "module", t.module); s.failed())
    return s;
  if (Status s = string(*cuda, "cuda", "format", true, t.format); s.failed())
    return s;
  if (t.format != "cubin" && t.format != "ptx")
    return fail("cuda.format",
                "expected \"cubin\" or \"ptx\", got '" + t.format + "'");
  if (Status s = string(*cuda, "cuda", "module_sha256", true, t.moduleSha256);
      s.failed())
    return s;
  if (t.moduleSha256.size() != 64 ||
      t.moduleSha256.find_first_not_of("0123456789abcdef") != std::string::npos)
    return fail("cuda.module_sha256",
                "expected 64 lowercase hex digits, got '" +
                    t.moduleSha256.substr(0, 80) + "'");
  const json *kernels;
  if (Status s = array(*cuda, "cuda", "kernels", kernels); s.failed())
    return s;
  std::vector<std::string> names;
  std::map<std::string, const CudaKernelSpec *> byName;
  t.kernels.resize(kernels->size());
  for (size_t i = 0; i < kernels->size(); ++i) {
    std::string path = index("cuda.kernels", i);
    if (Status s = readCudaKernel((*kernels)[i], path, t.kernels[i]);
        s.failed())
      return s;
    if (Status s = unique(names, t.kernels[i].name, join(path, "name"),
                          "kernel", "cuda.kernels");
        s.failed())
      return s;
  }
  if (cuda->contains("step_library")) {
    if (Status s = bundlePath(*cuda, "cuda", "step_library", t.stepLibrary);
        s.failed())
      return s;
    if (Status s = string(*cuda, "cuda", "step_library_sha256", true,
                          t.stepLibrarySha256);
        s.failed())
      return s;
    if (t.stepLibrarySha256.size() != 64 ||
        t.stepLibrarySha256.find_first_not_of("0123456789abcdef") !=
            std::string::npos)
      return fail("cuda.step_library_sha256",
                  "expected 64 lowercase hex digits, got '" +
                      t.stepLibrarySha256.substr(0, 80) + "'");
    for (auto [key, out] : {std::pair<const char *, std::vector<int64_t> *>{
                                "train_host_visible", &t.trainHostVisible},
                            {"eval_host_visible", &t.evalHostVisible}}) {
      const json *list;
      if (Status s = array(*cuda, "cuda", key, list); s.failed())
        return s;
      std::string path = join("cuda", key);
      for (size_t i = 0; i < list->size(); ++i) {
        const json &v = (*list)[i];
        if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
            (!out->empty() && v.get<int64_t>() <= out->back()))
          return expected(index(path.c_str(), i),
                          "an ascending non-negative argument index", v);
        out->push_back(v.get<int64_t>());
      }
    }
  }
  for (const CudaKernelSpec &k : t.kernels)
    byName[k.name] = &k;
  for (size_t i = 0; i < m.sites.size(); ++i) {
    for (const auto &[product, kinds] : m.sites[i].cudaKernels) {
      for (const auto &[kind, name] : kinds) {
        std::string path =
            join(join(join(index("sites", i), "cuda"), product.c_str()),
                 kind.c_str());
        auto it = byName.find(name);
        if (it == byName.end())
          return fail(path,
                      "no kernel in cuda.kernels is named '" + name + "'");
        if (it->second->kind != kind)
          return fail(path, "kernel '" + name + "' is a '" + it->second->kind +
                                "' kernel, not '" + kind + "'");
      }
    }
  }
  return Status::success();
}

} // namespace

std::string qtrain::rt::cudaKindFor(std::string_view cpuKind,
                                    std::string_view f32Kind) {
  if (cpuKind == "i8" || cpuKind == "bf16")
    return std::string(cpuKind);
  if (cpuKind == "f32")
    return std::string(f32Kind);
  return "";
}

std::string_view qtrain::rt::toString(DType dtype) {
  return dtype == DType::F32 ? "f32" : "i64";
}

std::string_view qtrain::rt::toString(InitKind kind) {
  switch (kind) {
  case InitKind::KaimingUniform:
    return "kaiming_uniform";
  case InitKind::BiasUniform:
    return "bias_uniform";
  case InitKind::Zeros:
    return "zeros";
  case InitKind::Ones:
    return "ones";
  case InitKind::Normal:
    return "normal";
  case InitKind::File:
    return "file";
  }
  return "unknown";
}

Status qtrain::rt::parseManifest(std::string_view text,
                                 const std::string &fileName, Manifest &out,
                                 ErrorKind *kind) {
  json root = json::parse(text.begin(), text.end(), nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    SyntaxErrorFinder finder;
    json::sax_parse(text.begin(), text.end(), &finder);
    std::string what = finder.message.empty() ? "syntax error" : finder.message;
    return failWith(kind, ErrorKind::Format,
                    fileName + ": invalid JSON: " + what);
  }
  Manifest m;
  ManifestReader reader(fileName, kind);
  if (Status s = reader.read(root, m); s.failed())
    return s;
  out = std::move(m);
  if (kind)
    *kind = ErrorKind::None;
  return Status::success();
}

namespace {

json tensorJson(const TensorSpec &t, bool named) {
  json out = json::object();
  if (named)
    out["name"] = t.name;
  out["shape"] = t.shape;
  out["dtype"] = std::string(toString(t.dtype));
  return out;
}

json initJson(const InitSpec &init) {
  json out = {{"kind", std::string(toString(init.kind))}};
  if (init.kind == InitKind::KaimingUniform ||
      init.kind == InitKind::BiasUniform)
    out["fan_in"] = init.fanIn;
  if (init.kind == InitKind::File)
    out["path"] = init.path;
  return out;
}

json siteJson(const SiteSpec &site) {
  json variants = json::array();
  for (const VariantSpec &v : site.variants)
    variants.push_back({{"bits", v.bits},
                        {"grad_bits", v.gradBits},
                        {"symbol", v.symbol},
                        {"kernels", v.kernels}});
  json out = {{"name", site.name},
              {"op", site.op},
              {"macs", site.macs},
              {"variants", std::move(variants)}};
  if (!site.precision.empty())
    out["precision"] = site.precision;
  if (!site.cudaKernels.empty())
    out["cuda"] = site.cudaKernels;
  return out;
}

json cudaJson(const CudaTargetSpec &t) {
  json kernels = json::array();
  for (const CudaKernelSpec &k : t.kernels)
    kernels.push_back({{"name", k.name},
                       {"kind", k.kind},
                       {"a", k.a},
                       {"b", k.b},
                       {"c", k.c},
                       {"batch", k.batch},
                       {"m", k.m},
                       {"n", k.n},
                       {"k", k.k},
                       {"grid", k.grid},
                       {"block", k.block}});
  json out = {{"chip", t.chip},
              {"module", t.module},
              {"format", t.format},
              {"module_sha256", t.moduleSha256},
              {"kernels", std::move(kernels)}};
  if (!t.stepLibrary.empty()) {
    out["step_library"] = t.stepLibrary;
    out["step_library_sha256"] = t.stepLibrarySha256;
    out["train_host_visible"] = t.trainHostVisible;
    out["eval_host_visible"] = t.evalHostVisible;
  }
  return out;
}

} // namespace

std::string qtrain::rt::printManifest(const Manifest &m) {
  json parameters = json::array();
  for (const ParameterSpec &p : m.parameters) {
    json entry = tensorJson(p, /*named=*/true);
    entry["init"] = initJson(p.init);
    parameters.push_back(std::move(entry));
  }
  json state = json::array();
  for (const StateSpec &t : m.state) {
    json entry = tensorJson(t, /*named=*/true);
    entry["kind"] = t.kind;
    if (!t.tensors.empty())
      entry["tensors"] = t.tensors;
    if (!t.init.empty()) {
      // As doubles: the float's value exactly, which reads back to it.
      json values = json::array();
      for (float v : t.init)
        values.push_back(double(v));
      entry["init"] = std::move(values);
    }
    state.push_back(std::move(entry));
  }
  json sites = json::array();
  for (const SiteSpec &site : m.sites)
    sites.push_back(siteJson(site));
  // nlohmann's default object keeps its keys sorted.
  json root = {
      {"format", m.format},
      {"version", m.version},
      {"compiler",
       {{"name", m.compiler.name},
        {"version", m.compiler.version},
        {"flags", m.compiler.flags}}},
      {"library", m.library},
      {"entry", {{"train", m.trainEntry}, {"eval", m.evalEntry}}},
      {"batch", m.batch},
      {"classes", m.classes},
      {"input", tensorJson(m.input, /*named=*/true)},
      {"labels", tensorJson(m.labels, /*named=*/false)},
      {"parameters", std::move(parameters)},
      {"state", std::move(state)},
      {"controls", m.controls},
      {"schedule", m.schedule},
      {"grad_schedule", m.gradSchedule},
      {"sites", std::move(sites)},
  };
  if (!m.librarySha256.empty())
    root["library_sha256"] = m.librarySha256;
  if (m.gradFormat != "int")
    root["grad_format"] = m.gradFormat;
  if (m.inputMaxValue >= 0)
    root["input"]["max_value"] = m.inputMaxValue;
  if (hasCudaTarget(m))
    root["cuda"] = cudaJson(m.cuda);
  // Invalid UTF-8 (a command line in `flags`) becomes U+FFFD instead of
  // an exception.
  return root.dump(2, ' ', /*ensure_ascii=*/false,
                   json::error_handler_t::replace);
}

// std::tie of the fields, in declaration order.
#define QTRAIN_FIELDS_EQUAL(Type, ...)                                         \
  bool qtrain::rt::operator==(const Type &a, const Type &b) {                  \
    auto fields = [](const Type &x) { return std::tie(__VA_ARGS__); };         \
    return fields(a) == fields(b);                                             \
  }
QTRAIN_FIELDS_EQUAL(TensorSpec, x.name, x.shape, x.dtype, x.numel)
QTRAIN_FIELDS_EQUAL(InitSpec, x.kind, x.fanIn, x.path)
QTRAIN_FIELDS_EQUAL(ParameterSpec, static_cast<const TensorSpec &>(x), x.init)
QTRAIN_FIELDS_EQUAL(StateSpec, static_cast<const TensorSpec &>(x), x.kind,
                    x.tensors, x.init)
QTRAIN_FIELDS_EQUAL(VariantSpec, x.bits, x.gradBits, x.symbol, x.kernels)
QTRAIN_FIELDS_EQUAL(SiteSpec, x.name, x.op, x.macs, x.variants, x.precision,
                    x.precisionParameter, x.cudaKernels)
QTRAIN_FIELDS_EQUAL(CudaKernelSpec, x.name, x.kind, x.a, x.b, x.c, x.batch, x.m,
                    x.n, x.k, x.grid, x.block)
QTRAIN_FIELDS_EQUAL(CudaTargetSpec, x.chip, x.module, x.format, x.moduleSha256,
                    x.kernels, x.stepLibrary, x.stepLibrarySha256,
                    x.trainHostVisible, x.evalHostVisible)
QTRAIN_FIELDS_EQUAL(CompilerInfo, x.name, x.version, x.flags)
QTRAIN_FIELDS_EQUAL(Manifest, x.format, x.version, x.compiler, x.library,
                    x.librarySha256, x.trainEntry, x.evalEntry, x.batch,
                    x.classes, x.input, x.inputMaxValue, x.labels, x.parameters,
                    x.state, x.controls, x.schedule, x.gradSchedule,
                    x.gradFormat, x.sites, x.cuda)
#undef QTRAIN_FIELDS_EQUAL

bool qtrain::rt::learnsPrecisions(const Manifest &manifest) {
  return std::any_of(
      manifest.sites.begin(), manifest.sites.end(),
      [](const SiteSpec &site) { return site.precisionParameter >= 0; });
}
