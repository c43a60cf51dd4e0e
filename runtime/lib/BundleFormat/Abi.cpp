//===- Abi.cpp - What a bundle's library relies on from its manifest -----===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Abi.h"

#include "qtrain/runtime/Sha256.h"

#include <cstdio>

using namespace qtrain::rt;

namespace {

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
  // The bound only where there is one, so f32 bundles keep their digest.
  line("input", abiWord(m.input.name) + " " + abiShape(m.input) +
                    (m.inputMaxValue >= 0
                         ? " max_value " + std::to_string(m.inputMaxValue)
                         : ""));
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
  // Bundles with integer errors keep the digest they had before the field.
  if (m.gradFormat != "int")
    line("grad_format", abiWord(m.gradFormat));
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
    // Only with a CUDA target, so CPU bundles keep their digest.
    for (const auto &[product, kinds] : site.cudaKernels) {
      std::string text;
      for (const auto &[kind, name] : kinds)
        text += (text.empty() ? "" : " ") + abiWord(kind) + "=" + abiWord(name);
      line(key + ".cuda." + abiWord(product), text);
    }
  }
  line("sites", std::to_string(m.sites.size()));
  if (hasCudaTarget(m)) {
    // The module's SHA-256 ties the module file to this library too; the
    // kernels' shapes and launch dimensions are what the runtime trusts.
    line("cuda", abiWord(m.cuda.chip) + " " + abiWord(m.cuda.format) + " " +
                     abiWord(m.cuda.module) + " sha256 " +
                     abiWord(m.cuda.moduleSha256));
    for (size_t i = 0; i < m.cuda.kernels.size(); ++i) {
      const CudaKernelSpec &k = m.cuda.kernels[i];
      auto dims = [](const std::vector<int64_t> &d) {
        std::string text;
        for (int64_t v : d)
          text += (text.empty() ? "" : "x") + std::to_string(v);
        return text;
      };
      line("cuda.kernels[" + std::to_string(i) + "]",
           abiWord(k.name) + " " + abiWord(k.kind) + " " + abiWord(k.a) + "*" +
               abiWord(k.b) + "->" + abiWord(k.c) + " batch " +
               std::to_string(k.batch) + " m " + std::to_string(k.m) + " n " +
               std::to_string(k.n) + " k " + std::to_string(k.k) + " grid " +
               dims(k.grid) + " block " + dims(k.block));
    }
  }
  return out;
}

std::string qtrain::rt::abiDigest(const Manifest &m) {
  std::string description = abiDescription(m);
  return sha256Hex(description.data(), description.size());
}
