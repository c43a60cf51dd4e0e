// RUN: qtrain-opt %s --convert-qtrain-to-linalg | FileCheck %s

// The structure of the lowering (its numerics are pinned bit for bit by
// bit-exact.mlir): one reduction for the finite min/max (and a NaN flag,
// which fake_quant does not use: canonicalization drops it), the
// no-finite-element fix-up, then one elementwise generic with the grid, the
// clamp, round-half-even and the dequantization.
// CHECK-LABEL: func.func @per_channel
//       CHECK:   %[[RANGE:.*]]:3 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
//       CHECK:     arith.cmpf one
//       CHECK:   %[[FIXED:.*]]:2 = linalg.generic
//       CHECK:   arith.shli
//       CHECK:   arith.uitofp
//       CHECK:   linalg.generic {{.*}}ins(%{{.*}}, %[[FIXED]]#0, %[[FIXED]]#1 :
//       CHECK:     arith.divf
//       CHECK:     math.roundeven
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
//   CHECK-NOT:   qtrain.fake_quant
func.func @per_channel(%w: tensor<6x5xf32>, %b: i32) -> tensor<6x5xf32> {
  %0 = qtrain.fake_quant %w, %b role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<6x5xf32>
  return %0 : tensor<6x5xf32>
}

// Stochastic rounding draws Philox4x32-10 noise: ten rounds of two 32x32->64
// multiplies, of which the first round's multiply of the (constant) stream
// word folds away.
// CHECK-LABEL: func.func @stochastic
// CHECK-COUNT-19: arith.mului_extended
//   CHECK-NOT:   arith.mului_extended
//       CHECK:   return
func.func @stochastic(%e: tensor<4x3xf32>, %b: i32, %s: i64, %t: i32) -> tensor<4x3xf32> {
  %0 = qtrain.fake_quant %e, %b role error rounding stochastic granularity<per_tensor> seed(%s, %t) : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// Per tensor, the elementwise loop runs over all elements (not a short last
// dimension); stochastic rounding as [N / 4, 4], the Philox block (loop 0)
// shared by the four words of loop 1, which qtrain-unroll-short-loops
// unrolls so that one block serves four elements. The element order is the
// input's row-major order, so the noise is unchanged.
// CHECK-LABEL: func.func @flat_view
//       CHECK:   %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1, 2]] : tensor<2x3x10xf32> into tensor<60xf32>
//       CHECK:   %[[VIEW:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [15, 4] : tensor<60xf32> into tensor<15x4xf32>
//       CHECK:   %[[Q:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[VIEW]], {{.*}}) outs({{.*}} : tensor<15x4xf32>)
//       CHECK:     linalg.index 0 : index
//       CHECK:     linalg.index 1 : index
//       CHECK:   %[[BACK:.*]] = tensor.collapse_shape %[[Q]] {{\[}}[0, 1]] : tensor<15x4xf32> into tensor<60xf32>
//       CHECK:   %[[OUT:.*]] = tensor.expand_shape %[[BACK]] {{\[}}[0, 1, 2]] output_shape [2, 3, 10] : tensor<60xf32> into tensor<2x3x10xf32>
//       CHECK:   return %[[OUT]]
func.func @flat_view(%e: tensor<2x3x10xf32>, %b: i32, %s: i64, %t: i32) -> tensor<2x3x10xf32> {
  %0 = qtrain.fake_quant %e, %b role error rounding stochastic granularity<per_tensor> seed(%s, %t) : tensor<2x3x10xf32>
  return %0 : tensor<2x3x10xf32>
}

// A per-tensor quantizer with nearest rounding keeps the flat [N] view.
// CHECK-LABEL: func.func @flat_nearest
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel"]} ins({{.*}} : tensor<60xf32>, {{.*}}) outs({{.*}} : tensor<60xf32>)
func.func @flat_nearest(%e: tensor<2x3x10xf32>, %b: i32) -> tensor<2x3x10xf32> {
  %0 = qtrain.fake_quant %e, %b role activation rounding nearest_even granularity<per_tensor> : tensor<2x3x10xf32>
  return %0 : tensor<2x3x10xf32>
}
