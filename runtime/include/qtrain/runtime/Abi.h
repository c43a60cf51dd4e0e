//===- Abi.h - The library's ABI digest -------------------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// qtrain-compile embeds abiDescription() of the manifest it writes, and
/// its SHA-256, in the library; openBundle recomputes both from the
/// manifest it read and refuses a library compiled for another
/// (docs/bundle.md, "Trust").
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_ABI_H
#define QTRAIN_RUNTIME_ABI_H

#include "qtrain/runtime/Manifest.h"

#include <string>

namespace qtrain::rt {

/// What the runtime relies on from a manifest to call its library, as
/// text: one line per fact, each starting with the manifest path it comes
/// from ("parameters[1] param1 f32 [256] init bias_uniform fan_in 784").
/// It covers the entry points, batch, classes, input, labels, controls,
/// parameters (order, names, shapes, init), state (order, names, shapes,
/// kinds, element names, init), the default schedules and the sites (name,
/// op, MACs, precision parameter, and each variant's bits, symbol and
/// kernels); not the compiler's flags, the library's path or its SHA-256.
std::string abiDescription(const Manifest &manifest);
/// The SHA-256 of abiDescription(manifest), 64 lowercase hex digits.
std::string abiDigest(const Manifest &manifest);
/// The library's data symbols: NUL-terminated strings.
constexpr const char *kAbiDigestSymbol = "qtrain_abi_digest";
constexpr const char *kAbiDescriptionSymbol = "qtrain_abi_description";

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_ABI_H
