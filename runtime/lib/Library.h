//===- Library.h - Loading a bundle's library -------------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The dlopen side of openBundle() (Bundle.cpp), private to the runtime.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_LIB_LIBRARY_H
#define QTRAIN_RUNTIME_LIB_LIBRARY_H

#include "qtrain/runtime/ErrorKind.h"
#include "qtrain/runtime/Manifest.h"

#include <string>

namespace qtrain::rt {

/// Loads the library at `path` for manifest `m` into `handle`: checks that
/// it is a complete 64-bit shared object of this machine, that its SHA-256
/// is m.librarySha256 (when the manifest has one), opens it (RTLD_NOW |
/// RTLD_LOCAL) and checks that its ABI digest (when it has one) is m's. On
/// failure nothing stays loaded and `handle` is unchanged.
Status loadLibrary(const std::string &path, const Manifest &m, void *&handle,
                   ErrorKind *kind);

/// Closes a handle from loadLibrary().
void unloadLibrary(void *handle);

/// dlsym that tells a missing symbol apart from one whose value is null:
/// null for a missing one.
void *lookupSymbol(void *handle, const std::string &name);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_LIB_LIBRARY_H
