//===- Passes.td - qtrain conversions ----------------------*- tablegen -*-===//
//
// Conversions out of the qtrain dialect.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_CONVERSION_PASSES_TD
#define QTRAIN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertQTrainToLinalgPass : Pass<"convert-qtrain-to-linalg",
                                     "::mlir::ModuleOp"> {
  let summary = "Lower qtrain quantizers to linalg, arith and math on tensors";
  let description = [{
    Rewrites every `qtrain.fake_quant` into linalg on tensors that computes
    exactly the reference quantizer of `runtime/include/qtrain/runtime/
    Quantize.h`, bit for bit:

    - the range: min and max over the finite elements (one reduction with
      two results, per tensor or per channel), 0 and 0 when none is finite,
      or the explicit `range` operands;
    - the grid: L = 2^bits - 1, s = (mx - mn) / L (mx / L - mn / L when
      the difference overflows, FLT_MAX if that still does), at least 1e-8;
    - per element, in this order and without contraction: NaN stays NaN,
      v = (x - mn) / s, plus Philox4x32-10 noise for stochastic rounding
      (key = seed, counter = {i / 4 low, i / 4 high, stream, step}, word
      i mod 4, noise = float(word >> 8) * 2^-24 - 0.5), clamp to [0, L],
      round half to even, y = q * s, y = y + mn.

    `bits` = 0 returns the input (the statistics are still computed: a
    variant specialized to a constant bitwidth folds them away). The other
    qtrain ops of a step (`quantize`, `range_ema`, `learned_bits`,
    `round_float`, `encode_float`, `decode_float`, `count_overflow`) are
    lowered bit-exactly too (docs/passes/convert-qtrain-to-linalg.md).

    A dialect conversion: the whole qtrain dialect is illegal, so no qtrain
    op survives. What the patterns cannot lower is reported with its reason
    first (a `qtrain.grad_quant` or `qtrain.grad_round_float` left in the
    input, which qtrain-autodiff removes; dynamic shapes; formats beyond
    fp32's range); any other qtrain op fails to legalize. The patterns are
    public (`populateQTrainToLinalgConversionPatterns`).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // QTRAIN_CONVERSION_PASSES_TD
