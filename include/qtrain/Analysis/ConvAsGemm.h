//===- ConvAsGemm.h - 2-D convolutions as one GEMM --------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The layout qtrain runs a 2-D NCHW/FCHW convolution in as one GEMM, shared
/// by qtrain-integer-kernels (on codes) and qtrain-conv-to-gemm (f32):
/// Y[f, (n, oh, ow)] = sum over (c, kh, kw) of W[f, (c, kh, kw)] times the
/// patches P[(c, kh, kw), (n, oh, ow)] (im2col, K-major: the copy walks x
/// and P contiguously along ow), the output as F x (N*OH*OW) rows, put back
/// to NCHW by a transpose of whole OH*OW planes. A microkernel serves the
/// GEMM (qtrain-microkernels), where the direct convolution's rows are short.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_ANALYSIS_CONVASGEMM_H
#define QTRAIN_ANALYSIS_CONVASGEMM_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::qtrain {

/// Whether qtrain-microkernels runs a convolution with these element types
/// (input, filter, output) as an implicit GEMM: f32, or i8 codes summed in
/// i32.
inline bool hasImplicitGemmKernel(Type x, Type w, Type y) {
  return (x.isF32() && w.isF32() && y.isF32()) ||
         (x.isInteger(8) && w.isInteger(8) && y.isInteger(32));
}

struct ConvGemmShape {
  int64_t n, f, oh, ow, c, kh, kw;
  SmallVector<int64_t, 2> stride, dilation;

  /// The shape of `conv` (static shapes only).
  static FailureOr<ConvGemmShape> of(linalg::Conv2DNchwFchwOp conv);
  int64_t rows() const { return n * oh * ow; }
  int64_t depth() const { return c * kh * kw; }
};

/// x [N, C, H, W] as patches [C*KH*KW, N*OH*OW] (one copy).
Value im2col(OpBuilder &b, Location loc, Value x, const ConvGemmShape &s);

/// w [F, C, KH, KW] as [F, C*KH*KW] (a reshape).
Value filterAsFByDepth(OpBuilder &b, Location loc, Value w,
                       const ConvGemmShape &s);

/// y [N, F, OH, OW] as [F, N*OH*OW], and back (element type kept).
Value nchwAsFByRows(OpBuilder &b, Location loc, Value y,
                    const ConvGemmShape &s);
Value fByRowsAsNchw(OpBuilder &b, Location loc, Value rows,
                    const ConvGemmShape &s);

/// The loops of a contraction out = sum x * y (maps {x, y, out}) as a GEMM:
/// m loops (x and out), n loops (y and out), k loops (x and y). Fails on a
/// loop of another kind (a batch loop, a reduction over one operand) or a
/// dynamic range.
struct GemmLoops {
  SmallVector<unsigned> m, n, k;
  static FailureOr<GemmLoops> of(ArrayRef<AffineMap> maps,
                                 ArrayRef<int64_t> ranges);
};

/// Operand `v` (read through `map`) gathered by one copy into loop order
/// `rows` + `k` and flattened to [prod rows, prod k]: a windowed read
/// becomes im2col patches.
Value gatherRowsByK(OpBuilder &b, Location loc, Value v, AffineMap map,
                    ArrayRef<unsigned> rows, ArrayRef<unsigned> k,
                    ArrayRef<int64_t> ranges);

/// An output (map `out`, a permutation of the m and n loops) as GEMM rows
/// [prod m, prod n], and a GEMM result back in the output's order.
Value outputAsGemm(OpBuilder &b, Location loc, Value y, AffineMap out,
                   const GemmLoops &loops, ArrayRef<int64_t> ranges);
Value gemmAsOutput(OpBuilder &b, Location loc, Value c, AffineMap out,
                   const GemmLoops &loops, ArrayRef<int64_t> ranges);

} // namespace mlir::qtrain

#endif // QTRAIN_ANALYSIS_CONVASGEMM_H
