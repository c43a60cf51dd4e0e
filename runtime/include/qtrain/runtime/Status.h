//===- Status.h - Success or an error message -------------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The runtime uses no exceptions: every call that can fail returns a Status,
/// which is either success or carries a human-readable error message.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_STATUS_H
#define QTRAIN_RUNTIME_STATUS_H

#include <string>
#include <utility>

namespace qtrain::rt {

/// Success, or failure with a message. Deliberately has no conversion to
/// bool, so that "true means error" and "true means success" cannot be
/// confused; ask with isOk() / failed().
class [[nodiscard]] Status {
public:
  /// A successful status.
  static Status success() { return Status(); }
  /// A failed status carrying `message`.
  static Status error(std::string message) {
    Status s;
    s.hasError = true;
    s.errorMessage = std::move(message);
    return s;
  }

  bool isOk() const { return !hasError; }
  bool failed() const { return hasError; }
  /// The error message; empty on success.
  const std::string &message() const { return errorMessage; }

private:
  Status() = default;
  bool hasError = false;
  std::string errorMessage;
};

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_STATUS_H
