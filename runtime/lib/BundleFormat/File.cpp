//===- File.cpp - Opening the files the runtime reads ---------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/File.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace qtrain::rt;

namespace {

const char *kindOf(mode_t mode) {
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a plain file";
}

} // namespace

Status qtrain::rt::openRegularFile(const std::string &path, int &fd,
                                   int64_t *size, bool *notRegular) {
  if (notRegular)
    *notRegular = false;
  // O_NONBLOCK: opening a FIFO without a writer returns at once instead of
  // waiting for one; the descriptor is checked before anything is read.
  int opened;
  do
    opened = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  while (opened < 0 && errno == EINTR);
  if (opened < 0)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (::fstat(opened, &st) != 0) {
    Status s = Status::error(path + ": cannot stat: " + std::strerror(errno));
    ::close(opened);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(opened);
    if (notRegular)
      *notRegular = true;
    return Status::error(path + ": not a regular file (" + kindOf(st.st_mode) +
                         "); refusing to read it");
  }
  int flags = ::fcntl(opened, F_GETFL);
  if (flags < 0 || ::fcntl(opened, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    Status s = Status::error(
        path + ": cannot set up reading: " + std::strerror(errno));
    ::close(opened);
    return s;
  }
  fd = opened;
  if (size)
    *size = int64_t(st.st_size);
  return Status::success();
}

Status qtrain::rt::openRegularFile(const std::string &path, std::FILE *&file,
                                   int64_t *size, bool *notRegular) {
  int fd;
  if (Status s = openRegularFile(path, fd, size, notRegular); s.failed())
    return s;
  file = ::fdopen(fd, "rb");
  if (!file) {
    Status s = Status::error(path + ": cannot open: " + std::strerror(errno));
    ::close(fd);
    return s;
  }
  return Status::success();
}
