//===- manifest.cpp - Fuzz the bundle manifest reader and writer ---------===//
//
// Part of the qtrain project.
//
// The input is manifest.json text. parseManifest must either accept it or
// fail with a message, never crash, hang or leak; an accepted manifest must
// satisfy what the reader promises the Trainer (docs/bundle.md), and the
// writer must give it back: printManifest's text reads to the same Manifest.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Manifest.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace qtrain::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Manifest m;
  ErrorKind kind = ErrorKind::None;
  Status s = parseManifest(text, "manifest.json", m, &kind);
  if (s.failed()) {
    if (kind == ErrorKind::None || s.message().empty())
      std::abort(); // a failure must say what and why
    return 0;
  }
  // What the Trainer relies on.
  if (m.parameters.empty() || m.batch <= 0 || m.classes <= 0 ||
      m.input.numel <= 0 || m.labels.numel != m.batch)
    std::abort();
  for (const SiteSpec &site : m.sites) {
    if (site.variants.empty())
      std::abort();
    if (site.precisionParameter >= int64_t(m.parameters.size()))
      std::abort();
  }
  for (const StateSpec &state : m.state)
    if (!state.init.empty() && int64_t(state.init.size()) != state.numel)
      std::abort();
  Manifest again;
  if (parseManifest(printManifest(m), "manifest.json", again).failed() ||
      !(again == m))
    std::abort();
  return 0;
}
