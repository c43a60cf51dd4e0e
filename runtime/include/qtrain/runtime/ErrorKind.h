//===- ErrorKind.h - What kind of failure a Status reports ------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Status carries only a message; the bundle reader, the trainer and the C
/// API also say what kind of failure it was, so that the C API can map it
/// to a code (qtrain.h).
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_ERRORKIND_H
#define QTRAIN_RUNTIME_ERRORKIND_H

#include "qtrain/runtime/Status.h"

#include <string>
#include <utility>

namespace qtrain::rt {

/// What went wrong, for callers (the C API) that map failures to codes.
/// Status itself carries only the message.
enum class ErrorKind {
  None,
  /// A null pointer, an out-of-range value or an invalid option.
  InvalidArgument,
  /// A file could not be read, the library could not be loaded, or a
  /// collective between the ranks of a data-parallel job failed.
  Io,
  /// The bundle is malformed: bad JSON, a missing or ill-typed field, a
  /// missing symbol, a parameter file of the wrong size.
  Format,
  /// Well-formed but not supported by this runtime (another format
  /// version, a learned schedule).
  Unsupported,
  /// The schedule asks for a (bits, grad_bits) some site has no variant for.
  MissingVariant,
  /// A buffer could not be allocated.
  OutOfMemory,
  /// A training step produced non-finite parameters or momentum that no
  /// loss scale can absorb: training diverged (Trainer::step()).
  Diverged,
};

/// A failed Status with `message`; sets `*kind` (when given) to `what`.
inline Status failWith(ErrorKind *kind, ErrorKind what, std::string message) {
  if (kind)
    *kind = what;
  return Status::error(std::move(message));
}

/// Success; sets `*kind` (when given) to None.
inline Status succeed(ErrorKind *kind) {
  if (kind)
    *kind = ErrorKind::None;
  return Status::success();
}

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_ERRORKIND_H
