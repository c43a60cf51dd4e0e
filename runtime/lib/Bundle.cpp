//===- Bundle.cpp - Opening a compiled bundle ----------------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// openBundle(): the manifest (Manifest.cpp), the library (Library.cpp) and
/// the parameter files, all read and checked before a Bundle exists.
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Bundle.h"

#include "Library.h"

#include "qtrain/runtime/File.h"
#include "qtrain/runtime/Sha256.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

using namespace qtrain::rt;

namespace {

/// Largest manifest read; a real one is a few kilobytes.
constexpr long kMaxManifestBytes = 64L << 20;
/// Largest CUDA module read; a bundle's GEMM kernels take a few megabytes.
constexpr long kMaxCudaModuleBytes = 1L << 30;
/// ELF's e_machine of NVIDIA GPU code (EM_CUDA; older elf.h lack it).
constexpr uint16_t kElfMachineCuda = 190;

/// "3/8", "fp32/8", "fp32/fp32".
std::string bitsName(int bits) {
  return bits == 0 ? "fp32" : std::to_string(bits);
}
std::string variantName(int bits, int gradBits) {
  return bitsName(bits) + "/" + bitsName(gradBits);
}

/// Reads a whole file (at most `maxBytes`) into `out`.
Status readFile(const std::string &path, long maxBytes, std::string &out,
                ErrorKind *kind) {
  std::FILE *file;
  bool notRegular;
  if (Status s = openRegularFile(path, file, nullptr, &notRegular); s.failed())
    return failWith(kind, notRegular ? ErrorKind::Format : ErrorKind::Io,
                    s.message());
  out.clear();
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
    if (long(out.size() + n) > maxBytes) {
      std::fclose(file);
      return failWith(kind, ErrorKind::Format,
                      path + ": larger than " + std::to_string(maxBytes) +
                          " bytes");
    }
    out.append(buffer, n);
  }
  bool error = std::ferror(file);
  std::fclose(file);
  if (error)
    return failWith(kind, ErrorKind::Io, path + ": read error");
  return Status::success();
}

/// Reads parameter `p`'s file: exactly numel little-endian f32 values.
Status readFileInit(const std::string &dir, const ParameterSpec &p,
                    std::vector<float> &out, ErrorKind *kind) {
  std::string path = dir + "/" + p.init.path;
  std::FILE *file;
  int64_t size;
  bool notRegular = false;
  if (Status s = openRegularFile(path, file, &size, &notRegular); s.failed())
    return failWith(kind, notRegular ? ErrorKind::Format : ErrorKind::Io,
                    s.message() + " (the initial values of parameter '" +
                        p.name + "')");
  uint64_t want = uint64_t(p.numel) * 4;
  if (uint64_t(size) != want) {
    std::fclose(file);
    return failWith(kind, ErrorKind::Format,
                    path + ": expected " + std::to_string(want) + " bytes (" +
                        std::to_string(p.numel) + " f32 values of parameter '" +
                        p.name + "'), got " + std::to_string(size));
  }
  std::vector<unsigned char> bytes(static_cast<size_t>(want));
  size_t got = std::fread(bytes.data(), 1, bytes.size(), file);
  std::fclose(file);
  if (got != bytes.size())
    return failWith(kind, ErrorKind::Io, path + ": read error");
  out.resize(size_t(p.numel));
  for (size_t i = 0; i < out.size(); ++i) {
    const unsigned char *b = bytes.data() + 4 * i;
    uint32_t word = uint32_t(b[0]) | uint32_t(b[1]) << 8 |
                    uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
    std::memcpy(&out[i], &word, 4);
    // Found here, not by the first step as a diverged training.
    if (!std::isfinite(out[i])) {
      std::string value = std::isnan(out[i]) ? "NaN"
                          : out[i] < 0       ? "-inf"
                                             : "inf";
      out.clear();
      return failWith(kind, ErrorKind::Format,
                      path + ": element " + std::to_string(i) +
                          " of parameter '" + p.name + "' is " + value +
                          ": a bad init file (initial values must be finite)");
    }
  }
  return Status::success();
}

/// Reads the CUDA module of `target` into `image` and checks it: its
/// SHA-256 is the manifest's, and it is what `format` says (a cubin: an
/// ELF64 little-endian file for EM_CUDA; PTX: text with `.version` and
/// `.target <chip>`). Loading it needs the driver; this does not.
Status readCudaModule(const std::string &path, const CudaTargetSpec &target,
                      std::string &image, ErrorKind *kind) {
  if (Status s = readFile(path, kMaxCudaModuleBytes, image, kind); s.failed())
    return Status::error(s.message() + " (the bundle's CUDA module, "
                                       "cuda.module in manifest.json)");
  std::string actual = sha256Hex(image.data(), image.size());
  if (actual != target.moduleSha256)
    return failWith(kind, ErrorKind::Format,
                    path + ": SHA-256 " + actual +
                        " does not match the manifest's cuda.module_sha256 " +
                        target.moduleSha256 +
                        " (the module changed after compilation); refusing "
                        "to load it");
  auto damaged = [&](const std::string &what) {
    return failWith(kind, ErrorKind::Format,
                    path + ": not a " + target.format + " module (" +
                        "cuda.format in manifest.json): " + what +
                        "; refusing to load it");
  };
  if (target.format == "cubin") {
    // e_ident (16 bytes), e_type (2), e_machine (2).
    const auto *bytes = reinterpret_cast<const unsigned char *>(image.data());
    if (image.size() < 64)
      return damaged("the file has " + std::to_string(image.size()) +
                     " bytes, fewer than an ELF header");
    if (std::memcmp(bytes,
                    "\x7f"
                    "ELF",
                    4) != 0)
      return damaged("no ELF magic");
    if (bytes[4] != 2 || bytes[5] != 1)
      return damaged("not a 64-bit little-endian ELF file");
    uint16_t machine = uint16_t(bytes[18] | bytes[19] << 8);
    if (machine != kElfMachineCuda)
      return damaged("ELF machine " + std::to_string(machine) +
                     ", not NVIDIA CUDA (" + std::to_string(kElfMachineCuda) +
                     ")");
    return Status::success();
  }
  // PTX: the assembler's text, which the driver compiles for the device.
  if (image.find('\0') != std::string::npos)
    return damaged("it holds NUL bytes, PTX is text");
  if (image.find(".version") == std::string::npos)
    return damaged("it has no .version directive");
  // ".target sm_90" or ".target sm_90, debug".
  size_t at = image.find(".target");
  if (at == std::string::npos)
    return damaged("it has no .target directive");
  size_t start = image.find_first_not_of(" \t", at + 7);
  size_t end = start == std::string::npos
                   ? std::string::npos
                   : image.find_first_of(" \t,\r\n", start);
  std::string chip =
      start == std::string::npos
          ? ""
          : image.substr(start, end == std::string::npos ? std::string::npos
                                                         : end - start);
  if (chip != target.chip)
    return damaged("its .target is '" + chip +
                   "', the manifest's cuda.chip "
                   "is '" +
                   target.chip + "'");
  return Status::success();
}

} // namespace

Bundle::~Bundle() {
  if (handle)
    unloadLibrary(handle);
}

Status qtrain::rt::openBundle(const std::string &dir,
                              std::unique_ptr<Bundle> &out, ErrorKind *kind) {
  std::string directory = dir;
  while (directory.size() > 1 && directory.back() == '/')
    directory.pop_back();
  if (directory.empty())
    return failWith(kind, ErrorKind::InvalidArgument,
                    "bundle directory: empty path");

  std::unique_ptr<Bundle> bundle(new Bundle());
  bundle->directory = directory;
  std::string prefix = directory == "/" ? "" : directory;
  std::string manifestPath = prefix + "/manifest.json";
  std::string text;
  if (Status s = readFile(manifestPath, kMaxManifestBytes, text, kind);
      s.failed())
    return s;
  if (Status s = parseManifest(text, manifestPath, bundle->manifest, kind);
      s.failed())
    return s;
  const Manifest &m = bundle->manifest;

  // Checked before the library runs any code; read, not loaded (a CPU
  // run needs no driver).
  if (hasCudaTarget(m))
    if (Status s = readCudaModule(bundle->getCudaModulePath(), m.cuda,
                                  bundle->cudaModuleImage, kind);
        s.failed())
      return s;

  std::string libraryPath = prefix + "/" + m.library;
  if (Status s = loadLibrary(libraryPath, m, bundle->handle, kind); s.failed())
    return s;
  struct {
    const std::string &name;
    const char *field;
    StepFunction &function;
  } entries[] = {{m.trainEntry, "entry.train", bundle->trainStep},
                 {m.evalEntry, "entry.eval", bundle->evalStep}};
  for (auto &e : entries) {
    void *address = lookupSymbol(bundle->handle, e.name);
    if (!address)
      return failWith(kind, ErrorKind::Format,
                      libraryPath + ": entry point '" + e.name + "' (" +
                          e.field + " in manifest.json) is missing");
    e.function = reinterpret_cast<StepFunction>(address);
  }
  // Optional: the byte count of the step's allocator (qtrain/microkernels.h);
  // libraries built otherwise (the test fixtures) have none.
  bundle->memoryStats = reinterpret_cast<Bundle::MemoryStatsFunction>(
      lookupSymbol(bundle->handle, "qtrain_step_memory_stats"));
  bundle->memoryResetPeak = reinterpret_cast<void (*)()>(
      lookupSymbol(bundle->handle, "qtrain_step_memory_reset_peak"));
  if (!bundle->memoryStats || !bundle->memoryResetPeak)
    bundle->memoryStats = nullptr, bundle->memoryResetPeak = nullptr;
  bundle->bindStepRecovery();
  // Optional too: the size of the step's thread pool.
  bundle->setNumThreads = reinterpret_cast<void (*)(int32_t)>(
      lookupSymbol(bundle->handle, "qtrain_mk_set_num_threads"));
  for (const SiteSpec &site : m.sites) {
    std::vector<void *> &addresses = bundle->variantAddresses.emplace_back();
    for (const VariantSpec &v : site.variants) {
      void *address = lookupSymbol(bundle->handle, v.symbol);
      if (!address)
        return failWith(kind, ErrorKind::Format,
                        "site '" + site.name + "' variant " +
                            variantName(v.bits, v.gradBits) + ": symbol '" +
                            v.symbol + "' missing from " + libraryPath);
      addresses.push_back(address);
    }
  }

  bundle->fileInits.resize(m.parameters.size());
  for (size_t i = 0; i < m.parameters.size(); ++i) {
    if (m.parameters[i].init.kind != InitKind::File)
      continue;
    if (Status s =
            readFileInit(prefix, m.parameters[i], bundle->fileInits[i], kind);
        s.failed())
      return s;
  }

  out = std::move(bundle);
  if (kind)
    *kind = ErrorKind::None;
  return Status::success();
}
