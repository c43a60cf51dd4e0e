//===- Sha256.h - SHA-256 of a byte stream ----------------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// SHA-256 (FIPS 180-4), for the manifest's `library_sha256`: the runtime
/// checks that a bundle's shared object is the one its compiler wrote
/// before loading it (docs/bundle.md, "Trust"). Plain C++, no dependencies.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_SHA256_H
#define QTRAIN_RUNTIME_SHA256_H

#include "qtrain/runtime/Status.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace qtrain::rt {

/// An incremental SHA-256.
class Sha256 {
public:
  Sha256();
  /// Appends `size` bytes.
  void update(const void *data, size_t size);
  /// The digest of everything appended, as 64 lowercase hex digits. The
  /// object must not be updated afterwards.
  std::string hexDigest();

private:
  void block(const uint8_t *data);
  std::array<uint32_t, 8> state;
  std::array<uint8_t, 64> buffer{};
  size_t buffered = 0;
  uint64_t length = 0;
};

/// The SHA-256 of `size` bytes, as 64 lowercase hex digits.
std::string sha256Hex(const void *data, size_t size);

/// The SHA-256 of the file at `path`, as 64 lowercase hex digits; fails
/// (with the path and the reason) when the file cannot be read.
Status sha256File(const std::string &path, std::string &hex);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_SHA256_H
