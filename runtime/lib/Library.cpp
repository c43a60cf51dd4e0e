//===- Library.cpp - Loading a bundle's library --------------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Loading runs the library's code, so a library is checked before and
/// right after dlopen: a complete shared object of this machine, the one
/// the compiler wrote (library_sha256), compiled for this manifest (the
/// ABI digest) (docs/bundle.md, "Trust").
///
//===----------------------------------------------------------------------===//

#include "Library.h"

#include "qtrain/runtime/Abi.h"
#include "qtrain/runtime/File.h"
#include "qtrain/runtime/Sha256.h"

#include <dlfcn.h>
#include <elf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

using namespace qtrain::rt;

namespace {

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

void *qtrain::rt::lookupSymbol(void *handle, const std::string &name) {
  dlerror();
  void *address = dlsym(handle, name.c_str());
  if (dlerror())
    return nullptr;
  return address;
}

Status qtrain::rt::loadLibrary(const std::string &path, const Manifest &m,
                               void *&handle, ErrorKind *kind) {
  // A regular file with every segment inside it (dlopen would hang on a
  // FIFO and map a truncated file past its end: SIGBUS).
  if (Status s = checkLibraryFile(path, kind); s.failed())
    return s;
  // Loading runs the library's code: load only the library the compiler
  // wrote (docs/bundle.md, "Trust").
  if (!m.librarySha256.empty()) {
    std::string actual;
    if (Status s = sha256File(path, actual); s.failed())
      return failWith(kind, ErrorKind::Io, s.message());
    if (actual != m.librarySha256)
      return failWith(kind, ErrorKind::Format,
                      path + ": SHA-256 " + actual +
                          " does not match the manifest's library_sha256 " +
                          m.librarySha256 +
                          " (the library changed after compilation); "
                          "refusing to load it");
  }
  void *loaded = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!loaded) {
    const char *why = dlerror();
    return failWith(
        kind, ErrorKind::Io,
        path + ": cannot load the library: " + (why ? why : "unknown error"));
  }
  // The manifest must describe the library before any of its symbols is
  // looked up or called.
  if (Status s = checkAbi(loaded, m, path, kind); s.failed()) {
    dlclose(loaded);
    return s;
  }
  handle = loaded;
  return Status::success();
}

void qtrain::rt::unloadLibrary(void *handle) { dlclose(handle); }
