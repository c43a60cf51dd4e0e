// RUN: qtrain-opt %s -split-input-file -canonicalize | FileCheck %s

// Zero bits is full precision: the quantizer is the identity.
// CHECK-LABEL: func.func @fake_quant_zero_bits
//  CHECK-SAME:   %[[X:.*]]: tensor<8x4xf32>
//   CHECK-NOT:   qtrain.fake_quant
//       CHECK:   return %[[X]]
func.func @fake_quant_zero_bits(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : i32
  %0 = qtrain.fake_quant %x, %c0 role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Any other constant, or a dynamic bitwidth, keeps the quantizer.
// CHECK-LABEL: func.func @fake_quant_kept
//       CHECK:   qtrain.fake_quant %{{.*}}, %{{.*}} role activation
//       CHECK:   qtrain.fake_quant %{{.*}}, %{{.*}} role activation
func.func @fake_quant_kept(%x: tensor<8x4xf32>, %b: i32) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %c1 = arith.constant 1 : i32
  %0 = qtrain.fake_quant %x, %c1 role activation rounding nearest_even granularity<per_tensor> : tensor<8x4xf32>
  %1 = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<8x4xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Quantizing twice is not folded: the second quantizer re-derives its scale.
// CHECK-LABEL: func.func @fake_quant_twice
//       CHECK:   %[[Q:.*]] = qtrain.fake_quant
//       CHECK:   qtrain.fake_quant %[[Q]]
func.func @fake_quant_twice(%x: tensor<8x4xf32>, %b: i32) -> tensor<8x4xf32> {
  %0 = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<8x4xf32>
  %1 = qtrain.fake_quant %0, %b role activation rounding nearest_even granularity<per_tensor> : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// Rounding to a format is idempotent, saturating or not.
// CHECK-LABEL: func.func @round_float_idempotent
//       CHECK:   %[[R:.*]] = qtrain.round_float %{{.*}} to <4, 3, 4, saturate>
//  CHECK-NEXT:   %[[G:.*]] = qtrain.round_float %{{.*}} to <5, 2, 0>
//  CHECK-NEXT:   return %[[R]], %[[G]]
func.func @round_float_idempotent(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %0 = qtrain.round_float %x to <4, 3, 4, saturate> : tensor<16xf32>
  %1 = qtrain.round_float %0 to <4, 3, 4, saturate> : tensor<16xf32>
  %2 = qtrain.round_float %x to <5, 2, 0> : tensor<16xf32>
  %3 = qtrain.round_float %2 to <5, 2, 0> : tensor<16xf32>
  return %1, %3 : tensor<16xf32>, tensor<16xf32>
}

// -----

// Different formats, or the same format with and without saturation, do not
// compose to either one.
// CHECK-LABEL: func.func @round_float_different_formats
//       CHECK:   %[[A:.*]] = qtrain.round_float %{{.*}} to <4, 3, 4> :
//       CHECK:   qtrain.round_float %[[A]] to <4, 3, 4, saturate>
//       CHECK:   %[[B:.*]] = qtrain.round_float %{{.*}} to <6, 9, 0>
//       CHECK:   qtrain.round_float %[[B]] to <5, 2, 0>
func.func @round_float_different_formats(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %0 = qtrain.round_float %x to <4, 3, 4> : tensor<16xf32>
  %1 = qtrain.round_float %0 to <4, 3, 4, saturate> : tensor<16xf32>
  %2 = qtrain.round_float %x to <6, 9, 0> : tensor<16xf32>
  %3 = qtrain.round_float %2 to <5, 2, 0> : tensor<16xf32>
  return %1, %3 : tensor<16xf32>, tensor<16xf32>
}

// -----

// FP(8, 23, 0) is f32; with saturation, inf would become the largest float,
// so only the non-saturating form folds away.
// CHECK-LABEL: func.func @round_float_f32
//  CHECK-SAME:   %[[X:.*]]: tensor<16xf32>
//       CHECK:   %[[S:.*]] = qtrain.round_float %[[X]] to <8, 23, 0, saturate>
//       CHECK:   return %[[X]], %[[S]]
func.func @round_float_f32(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %0 = qtrain.round_float %x to <8, 23, 0> : tensor<16xf32>
  %1 = qtrain.round_float %x to <8, 23, 0, saturate> : tensor<16xf32>
  return %0, %1 : tensor<16xf32>, tensor<16xf32>
}
