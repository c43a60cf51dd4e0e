//===- LibraryConv.h - Convolutions handed to oneDNN where it is faster -*- C++
//-*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The convolutions of microkernels.h that a library runs instead of the
/// implicit-GEMM kernels: oneDNN's forward convolution (OneDnnConv.cpp)
/// when the build found it, nothing otherwise (NoLibraryConv.cpp). The C
/// API asks first and runs its own kernel when the library declines: the
/// library has no kernel for the shape or the CPU, or ours is faster there,
/// or QTRAIN_MICROKERNELS=portable.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_KERNELS_CPU_LIBRARYCONV_H
#define QTRAIN_RUNTIME_KERNELS_CPU_LIBRARYCONV_H

#include <cstdint>

namespace qtrain::mk {

/// Y += conv2d(X, W) as the C API takes it: a verified geometry (no
/// padding) and three strided 4-D views, X [N, C, H, W], W [F, C, KH, KW],
/// Y [N, F, OH, OW]; strides in elements, any sign, any aliasing.
struct LibraryConvCall {
  int64_t N, C, H, W, F, KH, KW, OH, OW;
  int64_t strideH, strideW, dilationH, dilationW;
  const void *x;
  int64_t xs[4];
  const void *w;
  int64_t ws[4];
  void *y;
  int64_t ys[4];
};

/// Which convolutions go to the library: the shapes where it is faster
/// (Auto, the default), every shape it can run (Always) or none (Never).
/// QTRAIN_CONV_LIBRARY=auto|always|never sets it at start; tests set it
/// directly to compare both paths in one process.
enum class ConvLibraryMode { Auto, Always, Never };
void setConvLibraryMode(ConvLibraryMode mode);

/// Whether this build has a library to hand convolutions to.
bool hasConvLibrary();

/// Runs the call in the library on up to `threads` threads and returns
/// true, or returns false having touched nothing. f32 accumulates each
/// output in one thread in a fixed order (the result does not depend on
/// `threads`); s8 codes give the exact int32 sums, wrapped modulo 2^32 like
/// qtrain_mk_conv2d_nchw_s8s8s32.
bool libraryConvF32(const LibraryConvCall &call, int threads);
bool libraryConvS8(const LibraryConvCall &call, int threads);

} // namespace qtrain::mk

#endif // QTRAIN_RUNTIME_KERNELS_CPU_LIBRARYCONV_H
