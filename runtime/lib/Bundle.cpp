//===- Bundle.cpp - Reading a compiled bundle (manifest + library) -------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
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

#include "qtrain/runtime/Bundle.h"

#include "qtrain/runtime/File.h"
#include "qtrain/runtime/Schedule.h"
#include "qtrain/runtime/Sha256.h"
#include "qtrain/ukernels.h"

#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <utility>

using namespace qtrain::rt;
using json = nlohmann::json;

namespace {

/// Where a failed allocation inside the running step returns to
/// (Bundle::runStep), and what failed.
struct StepRecovery {
  std::jmp_buf target;
  int64_t requested = 0, held = 0, limit = 0;
};
thread_local StepRecovery *stepRecovery = nullptr;

/// The libraries' failure handler: back out of the step to runStep. Only
/// generated code (no C++ frames with destructors) lies between runStep's
/// setjmp and this call, which comes from the allocator.
extern "C" void onStepAllocationFailure(int64_t requested, int64_t held,
                                        int64_t limit) {
  StepRecovery *recovery = stepRecovery;
  if (!recovery)
    return; // not inside runStep: the library reports it and exits
  recovery->requested = requested;
  recovery->held = held;
  recovery->limit = limit;
  std::longjmp(recovery->target, 1);
}

/// Calls `step`; true when it returned, false when the failure handler
/// jumped out of it. Kept apart so that nothing lives across the setjmp.
bool callRecoverably(StepFunction step, void **args, StepRecovery &recovery) {
  if (setjmp(recovery.target) != 0)
    return false;
  step(args);
  return true;
}

/// Largest manifest read; a real one is a few kilobytes.
constexpr long kMaxManifestBytes = 64L << 20;
/// Largest tensor accepted (elements); keeps byte counts far from overflow.
constexpr int64_t kMaxNumel = int64_t(1) << 40;

/// The control scalars of the version-1 step ABI, in ABI order.
const char *const kControls[] = {"bits", "grad_bits", "seed", "step"};

Status failWith(ErrorKind *kind, ErrorKind what, std::string message) {
  if (kind)
    *kind = what;
  return Status::error(std::move(message));
}

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
  Status dtype(const json &parent, const std::string &path, DType required,
               const char *why, TensorSpec &out) const {
    std::string text;
    if (Status s = string(parent, path, "dtype", /*nonEmpty=*/false, text);
        s.failed())
      return s;
    if (text != "f32" && text != "i64")
      return fail(join(path, "dtype"),
                  "unknown dtype '" + text + "' (expected f32 or i64)");
    out.dtype = text == "f32" ? DType::F32 : DType::I64;
    if (out.dtype != required)
      return fail(join(path, "dtype"),
                  "expected \"" + std::string(toString(required)) + "\" (" +
                      why + "), got \"" + text + "\"");
    return Status::success();
  }
  Status tensor(const json &value, const std::string &path, bool named,
                DType required, const char *why, TensorSpec &out) const {
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
};

Status ManifestReader::read(const json &root, Manifest &m) const {
  if (!root.is_object())
    return expected("", "a JSON object at the top level", root);

  // Format and version first: a future version may change everything else.
  if (Status s = string(root, "", "format", /*nonEmpty=*/false, m.format);
      s.failed())
    return s;
  if (m.format != "qtrain-bundle")
    return fail("format",
                "expected \"qtrain-bundle\", got \"" + m.format + "\"");
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
  if (Status s = tensor(*input, "input", /*named=*/true, DType::F32,
                        "the input batch is f32", m.input);
      s.failed())
    return s;
  if (m.input.shape.empty() || m.input.shape[0] != m.batch)
    return fail("input.shape", "expected the batch size " +
                                   std::to_string(m.batch) +
                                   " as the first dimension");
  if (Status s = member(root, "", "labels", labels); s.failed())
    return s;
  m.labels.name = "labels";
  if (Status s = tensor(*labels, "labels", /*named=*/false, DType::I64,
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

  return readSites(root, m);
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
    if (Status s = tensor((*params)[i], path, /*named=*/true, DType::F32,
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
    } else if (kindText == "file") {
      p.init.kind = InitKind::File;
      if (Status s = bundlePath(*init, initPath, "path", p.init.path);
          s.failed())
        return s;
    } else {
      return fail(join(initPath, "kind"),
                  "unknown init kind '" + kindText +
                      "' (expected kaiming_uniform, bias_uniform, zeros, ones "
                      "or file)");
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
    if (Status s = tensor((*state)[i], path, /*named=*/true, DType::F32,
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
              (kind != "i8" && kind != "i16" && kind != "f32" && kind != "f64"))
            return expected(join(kpath, it.key().c_str()),
                            "a kernel kind (i8, i16, f32 or f64)", kind);
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
    m.sites.push_back(std::move(out));
  }
  return Status::success();
}

/// Reads a whole file (at most `maxBytes`) into `out`.
Status readFile(const std::string &path, long maxBytes, std::string &out,
                ErrorKind *kind) {
  std::FILE *file;
  bool notRegular;
  if (Status s = openRegularFile(path, file, nullptr, &notRegular); s.failed())
    return failWith(kind, notRegular ? ErrorKind::Format : ErrorKind::Io,
                    s.message());
  out.clear();
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
    if (long(out.size() + n) > maxBytes) {
      std::fclose(file);
      return failWith(kind, ErrorKind::Format,
                      path + ": larger than " + std::to_string(maxBytes) +
                          " bytes");
    }
    out.append(buffer, n);
  }
  bool error = std::ferror(file);
  std::fclose(file);
  if (error)
    return failWith(kind, ErrorKind::Io, path + ": read error");
  return Status::success();
}

/// Reads parameter `p`'s file: exactly numel little-endian f32 values.
Status readFileInit(const std::string &dir, const ParameterSpec &p,
                    std::vector<float> &out, ErrorKind *kind) {
  std::string path = dir + "/" + p.init.path;
  std::FILE *file;
  int64_t size;
  bool notRegular = false;
  if (Status s = openRegularFile(path, file, &size, &notRegular); s.failed())
    return failWith(kind, notRegular ? ErrorKind::Format : ErrorKind::Io,
                    s.message() + " (the initial values of parameter '" +
                        p.name + "')");
  uint64_t want = uint64_t(p.numel) * 4;
  if (uint64_t(size) != want) {
    std::fclose(file);
    return failWith(kind, ErrorKind::Format,
                    path + ": expected " + std::to_string(want) + " bytes (" +
                        std::to_string(p.numel) + " f32 values of parameter '" +
                        p.name + "'), got " + std::to_string(size));
  }
  std::vector<unsigned char> bytes(static_cast<size_t>(want));
  size_t got = std::fread(bytes.data(), 1, bytes.size(), file);
  std::fclose(file);
  if (got != bytes.size())
    return failWith(kind, ErrorKind::Io, path + ": read error");
  out.resize(size_t(p.numel));
  for (size_t i = 0; i < out.size(); ++i) {
    const unsigned char *b = bytes.data() + 4 * i;
    uint32_t word = uint32_t(b[0]) | uint32_t(b[1]) << 8 |
                    uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
    std::memcpy(&out[i], &word, 4);
    // Found here, not by the first step as a diverged training.
    if (!std::isfinite(out[i])) {
      std::string value = std::isnan(out[i]) ? "NaN"
                          : out[i] < 0       ? "-inf"
                                             : "inf";
      out.clear();
      return failWith(kind, ErrorKind::Format,
                      path + ": element " + std::to_string(i) +
                          " of parameter '" + p.name + "' is " + value +
                          ": a bad init file (initial values must be finite)");
    }
  }
  return Status::success();
}

/// dlsym that tells a missing symbol apart from one whose value is null.
void *lookupSymbol(void *handle, const std::string &name) {
  dlerror();
  void *address = dlsym(handle, name.c_str());
  if (dlerror())
    return nullptr;
  return address;
}

/// The ELF machine this process runs on (0: unknown, not checked).
constexpr uint16_t hostMachine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#else
  return 0;
#endif
}

/// Checks, without loading it, that `path` is a regular file holding a
/// 64-bit little-endian shared object of this machine whose headers and
/// loadable segments lie inside the file. dlopen maps the segments: one
/// that a truncation cut off would be mapped past the end of the file, and
/// the first access to it would kill the process with SIGBUS.
Status checkLibraryFile(const std::string &path, ErrorKind *kind) {
  int fd;
  int64_t size;
  bool notRegular;
  if (Status s = openRegularFile(path, fd, &size, &notRegular); s.failed())
    return failWith(kind, notRegular ? ErrorKind::Format : ErrorKind::Io,
                    s.message());
  auto readAt = [&](uint64_t offset, void *out, size_t count) {
    size_t done = 0;
    while (done < count) {
      ssize_t n = ::pread(fd, static_cast<char *>(out) + done, count - done,
                          off_t(offset + done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      done += size_t(n);
    }
    return true;
  };
  auto damaged = [&](const std::string &what) {
    ::close(fd);
    return failWith(kind, ErrorKind::Format,
                    path + ": not a loadable shared library: " + what +
                        "; refusing to load it");
  };
  uint64_t fileSize = uint64_t(size);
  Elf64_Ehdr header;
  if (fileSize < sizeof(header) || !readAt(0, &header, sizeof(header)))
    return damaged("the file has " + std::to_string(fileSize) +
                   " bytes, fewer than an ELF header");
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return damaged("no ELF magic");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB)
    return damaged("not a 64-bit little-endian ELF file");
  if (header.e_type != ET_DYN)
    return damaged("not a shared object (ELF type " +
                   std::to_string(header.e_type) + ")");
  if (hostMachine() != 0 && header.e_machine != hostMachine())
    return damaged("built for ELF machine " + std::to_string(header.e_machine) +
                   ", this one is " + std::to_string(hostMachine()));
  // A table of `count` entries of `entrySize` bytes at `offset` must lie
  // inside the file (no overflow: every factor is below 2^32).
  auto inside = [&](uint64_t offset, uint64_t count, uint64_t entrySize) {
    return offset <= fileSize && count * entrySize <= fileSize - offset;
  };
  if (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0 ||
      !inside(header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr)))
    return damaged("its program headers are missing or lie past the end of "
                   "the file (" +
                   std::to_string(fileSize) + " bytes; truncated?)");
  if (header.e_shoff != 0 &&
      !inside(header.e_shoff, header.e_shnum, header.e_shentsize))
    return damaged("its section headers lie past the end of the file (" +
                   std::to_string(fileSize) + " bytes; truncated?)");
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    if (!readAt(header.e_phoff + uint64_t(i) * sizeof(segment), &segment,
                sizeof(segment)))
      return damaged("cannot read program header " + std::to_string(i));
    if (segment.p_type != PT_LOAD && segment.p_type != PT_DYNAMIC)
      continue;
    if (segment.p_offset > fileSize ||
        segment.p_filesz > fileSize - segment.p_offset)
      return damaged("segment " + std::to_string(i) +
                     " ends past the end of "
                     "the file (" +
                     std::to_string(fileSize) + " bytes; truncated?)");
  }
  ::close(fd);
  return Status::success();
}

/// Escapes what would make a description line ambiguous (spaces, control
/// characters, the backslash) as \xHH.
std::string abiWord(const std::string &text) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    if (c <= ' ' || c == '\\' || c == 0x7f) {
      out += "\\x";
      out += digits[c >> 4];
      out += digits[c & 15];
    } else {
      out += char(c);
    }
  }
  return out.empty() ? "\\x" : out;
}

std::string abiShape(const TensorSpec &t) {
  std::string out = std::string(toString(t.dtype)) + " [";
  for (size_t i = 0; i < t.shape.size(); ++i)
    out += (i ? "," : "") + std::to_string(t.shape[i]);
  return out + "]";
}

/// A float as the shortest decimal that reads back to it (9 digits do).
std::string abiFloat(float value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", double(value));
  return text;
}

/// The key of a description line: its first word.
std::string abiKey(const std::string &line) {
  return line.substr(0, line.find(' '));
}

std::vector<std::string> abiLines(const std::string &text) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

/// The first fact on which the manifest's description and the library's
/// differ, for the error message.
std::string firstAbiDifference(const std::string &manifestText,
                               const std::string &libraryText) {
  std::vector<std::string> ours = abiLines(manifestText),
                           theirs = abiLines(libraryText);
  std::map<std::string, std::string> byKey;
  for (const std::string &line : theirs)
    byKey[abiKey(line)] = line;
  auto rest = [](const std::string &line) {
    size_t space = line.find(' ');
    return space == std::string::npos ? std::string() : line.substr(space + 1);
  };
  for (const std::string &line : ours) {
    auto it = byKey.find(abiKey(line));
    if (it == byKey.end())
      return abiKey(line) + ": the manifest has '" + rest(line) +
             "', the library has no such entry";
    if (it->second != line)
      return abiKey(line) + ": the manifest has '" + rest(line) +
             "', the library was compiled for '" + rest(it->second) + "'";
    byKey.erase(it);
  }
  for (const std::string &line : theirs)
    if (byKey.count(abiKey(line)))
      return abiKey(line) +
             ": the manifest has no such entry, the library "
             "was compiled for '" +
             rest(line) + "'";
  return "";
}

/// Refuses a library compiled for another manifest than `m`: its
/// qtrain_abi_digest must be abiDigest(m). A library without one (made by
/// hand, as the test fixtures, or by a qtrain-compile older than the
/// digest) is not checked.
Status checkAbi(void *handle, const Manifest &m, const std::string &path,
                ErrorKind *kind) {
  const char *digest =
      static_cast<const char *>(lookupSymbol(handle, kAbiDigestSymbol));
  if (!digest)
    return Status::success();
  std::string description = abiDescription(m);
  std::string expected = sha256Hex(description.data(), description.size());
  // At most 64 hex digits and the NUL are read.
  std::string actual(digest, strnlen(digest, 65));
  if (actual == expected)
    return Status::success();
  std::string why;
  if (const char *text = static_cast<const char *>(
          lookupSymbol(handle, kAbiDescriptionSymbol)))
    why = firstAbiDifference(description, text);
  if (why.empty())
    why = "its ABI digest " + actual.substr(0, 64) + " is not the manifest's " +
          expected;
  return failWith(kind, ErrorKind::Format,
                  path +
                      ": the library was not compiled for this "
                      "manifest.json (" +
                      why + "); refusing to run it");
}

} // namespace

std::string qtrain::rt::abiDescription(const Manifest &m) {
  std::string out = "qtrain-abi " + std::to_string(m.version) + "\n";
  auto line = [&](const std::string &key, const std::string &value) {
    out += key + " " + value + "\n";
  };
  line("entry.train", abiWord(m.trainEntry));
  line("entry.eval", abiWord(m.evalEntry));
  line("batch", std::to_string(m.batch));
  line("classes", std::to_string(m.classes));
  line("input", abiWord(m.input.name) + " " + abiShape(m.input));
  line("labels", abiShape(m.labels));
  std::string controls;
  for (const std::string &c : m.controls)
    controls += (controls.empty() ? "" : " ") + abiWord(c);
  line("controls", controls);
  for (size_t i = 0; i < m.parameters.size(); ++i) {
    const ParameterSpec &p = m.parameters[i];
    std::string init = std::string(toString(p.init.kind));
    if (p.init.kind == InitKind::KaimingUniform ||
        p.init.kind == InitKind::BiasUniform)
      init += " fan_in " + std::to_string(p.init.fanIn);
    if (p.init.kind == InitKind::File)
      init += " path " + abiWord(p.init.path);
    line("parameters[" + std::to_string(i) + "]",
         abiWord(p.name) + " " + abiShape(p) + " init " + init);
  }
  for (size_t i = 0; i < m.state.size(); ++i) {
    const StateSpec &t = m.state[i];
    std::string value =
        abiWord(t.name) + " " + abiShape(t) + " kind " + abiWord(t.kind);
    if (!t.tensors.empty()) {
      value += " tensors";
      for (const std::string &name : t.tensors)
        value += " " + abiWord(name);
    }
    if (!t.init.empty()) {
      value += " init";
      for (float v : t.init)
        value += " " + abiFloat(v);
    }
    line("state[" + std::to_string(i) + "]", value);
  }
  line("schedule", abiWord(m.schedule));
  line("grad_schedule", abiWord(m.gradSchedule));
  for (size_t i = 0; i < m.sites.size(); ++i) {
    const SiteSpec &site = m.sites[i];
    std::string key = "sites[" + std::to_string(i) + "]";
    std::string value = abiWord(site.name) + " op " + abiWord(site.op) +
                        " macs " + std::to_string(site.macs);
    if (!site.precision.empty())
      value += " precision " + abiWord(site.precision);
    value += " variants " + std::to_string(site.variants.size());
    line(key, value);
    for (size_t j = 0; j < site.variants.size(); ++j) {
      const VariantSpec &v = site.variants[j];
      std::string text = "bits " + std::to_string(v.bits) + " grad_bits " +
                         std::to_string(v.gradBits) + " symbol " +
                         abiWord(v.symbol);
      if (!v.kernels.empty()) {
        text += " kernels";
        for (const auto &[product, kernel] : v.kernels)
          text += " " + abiWord(product) + "=" + abiWord(kernel);
      }
      line(key + ".variants[" + std::to_string(j) + "]", text);
    }
  }
  line("sites", std::to_string(m.sites.size()));
  return out;
}

std::string qtrain::rt::abiDigest(const Manifest &m) {
  std::string description = abiDescription(m);
  return sha256Hex(description.data(), description.size());
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

Bundle::~Bundle() {
  if (handle)
    dlclose(handle);
}

bool qtrain::rt::learnsPrecisions(const Manifest &manifest) {
  return std::any_of(
      manifest.sites.begin(), manifest.sites.end(),
      [](const SiteSpec &site) { return site.precisionParameter >= 0; });
}

Status qtrain::rt::openBundle(const std::string &dir,
                              std::unique_ptr<Bundle> &out, ErrorKind *kind) {
  std::string directory = dir;
  while (directory.size() > 1 && directory.back() == '/')
    directory.pop_back();
  if (directory.empty())
    return failWith(kind, ErrorKind::InvalidArgument,
                    "bundle directory: empty path");

  std::unique_ptr<Bundle> bundle(new Bundle());
  bundle->directory = directory;
  std::string prefix = directory == "/" ? "" : directory;
  std::string manifestPath = prefix + "/manifest.json";
  std::string text;
  if (Status s = readFile(manifestPath, kMaxManifestBytes, text, kind);
      s.failed())
    return s;
  if (Status s = parseManifest(text, manifestPath, bundle->manifest, kind);
      s.failed())
    return s;
  const Manifest &m = bundle->manifest;

  std::string libraryPath = prefix + "/" + m.library;
  // A regular file with every segment inside it (dlopen would hang on a
  // FIFO and map a truncated file past its end: SIGBUS).
  if (Status s = checkLibraryFile(libraryPath, kind); s.failed())
    return s;
  // Loading runs the library's code: load only the library the compiler
  // wrote (docs/bundle.md, "Trust").
  if (!m.librarySha256.empty()) {
    std::string actual;
    if (Status s = sha256File(libraryPath, actual); s.failed())
      return failWith(kind, ErrorKind::Io, s.message());
    if (actual != m.librarySha256)
      return failWith(kind, ErrorKind::Format,
                      libraryPath + ": SHA-256 " + actual +
                          " does not match the manifest's library_sha256 " +
                          m.librarySha256 +
                          " (the library changed after compilation); "
                          "refusing to load it");
  }
  bundle->handle = dlopen(libraryPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!bundle->handle) {
    const char *why = dlerror();
    return failWith(kind, ErrorKind::Io,
                    libraryPath + ": cannot load the library: " +
                        (why ? why : "unknown error"));
  }
  // The manifest must describe the library before any of its symbols is
  // looked up or called.
  if (Status s = checkAbi(bundle->handle, m, libraryPath, kind); s.failed())
    return s;
  struct {
    const std::string &name;
    const char *field;
    StepFunction &function;
  } entries[] = {{m.trainEntry, "entry.train", bundle->trainStep},
                 {m.evalEntry, "entry.eval", bundle->evalStep}};
  for (auto &e : entries) {
    void *address = lookupSymbol(bundle->handle, e.name);
    if (!address)
      return failWith(kind, ErrorKind::Format,
                      libraryPath + ": entry point '" + e.name + "' (" +
                          e.field + " in manifest.json) is missing");
    e.function = reinterpret_cast<StepFunction>(address);
  }
  // Optional: the byte count of the step's allocator (qtrain/ukernels.h);
  // libraries built otherwise (the test fixtures) have none.
  bundle->memoryStats = reinterpret_cast<Bundle::MemoryStatsFunction>(
      lookupSymbol(bundle->handle, "qtrain_step_memory_stats"));
  bundle->memoryResetPeak = reinterpret_cast<void (*)()>(
      lookupSymbol(bundle->handle, "qtrain_step_memory_reset_peak"));
  if (!bundle->memoryStats || !bundle->memoryResetPeak)
    bundle->memoryStats = nullptr, bundle->memoryResetPeak = nullptr;
  // Optional too: the limit and the recovery from failed allocations.
  auto setHandler =
      reinterpret_cast<void (*)(qtrain_step_memory_failure_handler)>(
          lookupSymbol(bundle->handle,
                       "qtrain_step_memory_set_failure_handler"));
  bundle->memorySetLimit = reinterpret_cast<void (*)(int64_t)>(
      lookupSymbol(bundle->handle, "qtrain_step_memory_set_limit"));
  bundle->memoryBegin = reinterpret_cast<int64_t (*)()>(
      lookupSymbol(bundle->handle, "qtrain_step_memory_begin"));
  bundle->memoryEnd = reinterpret_cast<void (*)(int64_t, int32_t)>(
      lookupSymbol(bundle->handle, "qtrain_step_memory_end"));
  if (setHandler && bundle->memorySetLimit && bundle->memoryBegin &&
      bundle->memoryEnd) {
    setHandler(&onStepAllocationFailure);
  } else {
    bundle->memorySetLimit = nullptr;
    bundle->memoryBegin = nullptr;
    bundle->memoryEnd = nullptr;
  }
  for (const SiteSpec &site : m.sites) {
    std::vector<void *> &addresses = bundle->variantAddresses.emplace_back();
    for (const VariantSpec &v : site.variants) {
      void *address = lookupSymbol(bundle->handle, v.symbol);
      if (!address)
        return failWith(kind, ErrorKind::Format,
                        "site '" + site.name + "' variant " +
                            variantName(v.bits, v.gradBits) + ": symbol '" +
                            v.symbol + "' missing from " + libraryPath);
      addresses.push_back(address);
    }
  }

  bundle->fileInits.resize(m.parameters.size());
  for (size_t i = 0; i < m.parameters.size(); ++i) {
    if (m.parameters[i].init.kind != InitKind::File)
      continue;
    if (Status s =
            readFileInit(prefix, m.parameters[i], bundle->fileInits[i], kind);
        s.failed())
      return s;
  }

  out = std::move(bundle);
  if (kind)
    *kind = ErrorKind::None;
  return Status::success();
}

Status Bundle::setStepMemoryLimit(int64_t bytes, ErrorKind *kind) const {
  if (kind)
    *kind = ErrorKind::None;
  if (!memorySetLimit)
    return failWith(kind, ErrorKind::InvalidArgument,
                    directory + ": the library has no step memory limit");
  if (bytes < 0)
    return failWith(kind, ErrorKind::InvalidArgument,
                    "step memory limit must not be negative");
  memorySetLimit(bytes);
  return Status::success();
}

Status Bundle::runStep(StepFunction step, void **args, ErrorKind *kind) const {
  if (kind)
    *kind = ErrorKind::None;
  if (!memoryBegin) {
    step(args);
    return Status::success();
  }
  StepRecovery recovery;
  StepRecovery *outer = stepRecovery;
  stepRecovery = &recovery;
  int64_t token = memoryBegin();
  bool returned = callRecoverably(step, args, recovery);
  stepRecovery = outer;
  // An abandoned step's buffers are freed; other threads' steps keep theirs.
  memoryEnd(token, returned ? 0 : 1);
  if (returned)
    return Status::success();
  std::string message = "the compiled step could not allocate " +
                        std::to_string(recovery.requested) + " bytes with " +
                        std::to_string(recovery.held) +
                        " bytes of its buffers held";
  if (recovery.limit > 0 && recovery.held + recovery.requested > recovery.limit)
    message += ": that passes the step memory limit of " +
               std::to_string(recovery.limit) + " bytes";
  else
    message += ": out of memory";
  return failWith(kind, ErrorKind::OutOfMemory, message);
}
