//===- File.h - Opening the files the runtime reads -------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Every file the runtime reads from a bundle or a run (manifest.json,
/// model.so, parameter files, checkpoints, IDX data) must be a regular file: a
/// FIFO in its place would block the open or the read forever, and a device
/// such as /dev/zero would never end. openRegularFile opens without
/// blocking (O_NONBLOCK) and refuses anything but a regular file before a
/// byte is read.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_FILE_H
#define QTRAIN_RUNTIME_FILE_H

#include "qtrain/runtime/Status.h"

#include <cstdint>
#include <cstdio>
#include <string>

namespace qtrain::rt {

/// Opens `path` for reading if it is a regular file (after symbolic links);
/// on success `fd` is a blocking, close-on-exec descriptor of it and `size`
/// (if given) its size in bytes. Errors name the path: "cannot open: ..."
/// or "not a regular file (a FIFO)"; `*notRegular` (if given) tells the
/// second kind apart.
Status openRegularFile(const std::string &path, int &fd,
                       int64_t *size = nullptr, bool *notRegular = nullptr);

/// openRegularFile as a stdio stream ("rb").
Status openRegularFile(const std::string &path, std::FILE *&file,
                       int64_t *size = nullptr, bool *notRegular = nullptr);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_FILE_H
