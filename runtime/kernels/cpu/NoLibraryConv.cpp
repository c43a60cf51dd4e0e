//===- NoLibraryConv.cpp - LibraryConv.h in a build without oneDNN --------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The portable build (no libdnnl-dev): no library to hand convolutions
/// to, so the C API always runs its own kernels.
///
//===----------------------------------------------------------------------===//

#include "LibraryConv.h"

namespace qtrain::mk {

void setConvLibraryMode(ConvLibraryMode) {}

bool hasConvLibrary() { return false; }

bool libraryConvF32(const LibraryConvCall &, int) { return false; }

bool libraryConvS8(const LibraryConvCall &, int) { return false; }

} // namespace qtrain::mk
