// RUN: qtrain-opt %s --convert-qtrain-to-linalg | FileCheck %s

// The structure of qtrain.quantize's lowering (its codes are pinned bit for
// bit against the reference integer computation by
// test/Pipelines/variants.test and lenet-variants.test): one pass over the
// input for the range (integer keys that order like the floats: signed
// min/max) and the NaN flags (i8) per channel, the flags of all channels
// or-ed, the grid per channel (scale, and low poisoned by NaN), then the
// codes q - 2^(b-1) truncated to i8.
// CHECK-LABEL: func.func @per_channel
//       CHECK:   %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
//       CHECK:   %[[RANGE:.*]]:3 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]{{.*}} outs({{.*}} : tensor<6xi32>, tensor<6xi32>, tensor<6xi8>)
//       CHECK:     arith.bitcast %{{.*}} : f32 to i32
//       CHECK:     arith.cmpf uno
//       CHECK:     arith.extui %{{.*}} : i1 to i8
//       CHECK:     arith.minsi
//       CHECK:     arith.maxsi
//       CHECK:     arith.ori
//       CHECK:   %[[ANY:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[RANGE]]#2 : tensor<6xi8>) outs(%{{.*}} : tensor<i8>)
//       CHECK:   %[[FIXED:.*]]:2 = linalg.generic {{.*}} ins(%[[RANGE]]#0, %[[RANGE]]#1
//       CHECK:   %[[GRID:.*]]:2 = linalg.generic {{.*}} ins(%[[FIXED]]#0, %[[FIXED]]#1, %[[ANY]] : tensor<6xf32>, tensor<6xf32>, tensor<i8>)
//       CHECK:     %[[ISNAN:.*]] = arith.cmpi ne
//       CHECK:     arith.select %[[ISNAN]], %[[NAN]], %{{.*}} : f32
//       CHECK:   %[[CODES:.*]] = linalg.generic {{.*}} ins(%arg0, %[[FIXED]]#0, %[[GRID]]#0 : tensor<6x25xf32>, tensor<6xf32>, tensor<6xf32>) outs(%{{.*}} : tensor<6x25xi8>)
//       CHECK:     math.roundeven
//       CHECK:     arith.fptosi %{{.*}} : f32 to i32
//       CHECK:     arith.subi %{{.*}}, %c8_i32 : i32
//       CHECK:     arith.trunci %{{.*}} : i32 to i8
//       CHECK:   return %[[CODES]], %[[GRID]]#0, %[[GRID]]#1
func.func @per_channel(%w: tensor<6x25xf32>) -> (tensor<6x25xi8>, tensor<6xf32>, tensor<6xf32>) {
  %c, %s, %l = qtrain.quantize %w, 4 role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<6x25xf32> -> tensor<6x25xi8>, tensor<6xf32>
  return %c, %s, %l : tensor<6x25xi8>, tensor<6xf32>, tensor<6xf32>
}

// 12 bits: codes q - 2048 as i16.
// CHECK-LABEL: func.func @wide
//       CHECK:     arith.subi %{{.*}}, %c2048_i32 : i32
//       CHECK:     arith.trunci %{{.*}} : i32 to i16
func.func @wide(%x: tensor<8xf32>) -> tensor<8xi16> {
  %c, %s, %l = qtrain.quantize %x, 12 role activation rounding nearest_even granularity<per_tensor> : tensor<8xf32> -> tensor<8xi16>, tensor<f32>
  return %c : tensor<8xi16>
}

// A tensor whose elements divide into rows of 256: the reductions run as
// [rows, 256] -> [256] (an elementwise inner loop, which vectorizes) and one
// small [256] -> [] reduction of the three statistics (one loop; one
// launch on a GPU).
// CHECK-LABEL: func.func @split_reductions
//       CHECK:   tensor.collapse_shape %arg0 {{.*}} into tensor<8192xf32>
//       CHECK:   tensor.expand_shape {{.*}} into tensor<32x256xf32>
//       CHECK:   linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]{{.*}} outs({{.*}} : tensor<256xi32>, tensor<256xi32>, tensor<256xi8>)
//       CHECK:   linalg.generic {{.*}} iterator_types = ["reduction"]{{.*}} ins({{.*}} : tensor<256xi32>, tensor<256xi32>, tensor<256xi8>) outs({{.*}} : tensor<i32>, tensor<i32>, tensor<i8>)
//       CHECK:     arith.minsi
//       CHECK:     arith.maxsi
//   CHECK-NOT:   linalg.generic {{.*}} iterator_types = ["reduction"]{{.*}} ins({{.*}} : tensor<256xi32>) outs({{.*}} : tensor<i32>)
func.func @split_reductions(%x: tensor<128x64xf32>) -> tensor<128x64xi8> {
  %c, %s, %l = qtrain.quantize %x, 8 role activation rounding nearest_even granularity<per_tensor> : tensor<128x64xf32> -> tensor<128x64xi8>, tensor<f32>
  return %c : tensor<128x64xi8>
}

// Per channel along axis 0 with long channels: the range is reduced in
// rows of 64 (small partial accumulators, combined per channel), and the
// codes are computed on a [channels, elements] view, so the innermost
// loop is a whole channel.
// CHECK-LABEL: func.func @per_channel_view
//       CHECK:   tensor.collapse_shape %arg0 {{.*}} into tensor<32x256xf32>
//       CHECK:   tensor.expand_shape {{.*}} into tensor<32x4x64xf32>
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]{{.*}} outs({{.*}} : tensor<32x64xi32>, tensor<32x64xi32>, tensor<32x64xi8>)
//       CHECK:   %[[VIEW:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1, 2]] : tensor<32x2x128xf32> into tensor<32x256xf32>
//       CHECK:   %[[CODES:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[VIEW]], {{.*}} : tensor<32x256xf32>, tensor<32xf32>, tensor<32xf32>) outs({{.*}} : tensor<32x256xi8>)
//       CHECK:   %[[OUT:.*]] = tensor.expand_shape %[[CODES]] {{\[}}[0], [1, 2]] output_shape [32, 2, 128] : tensor<32x256xi8> into tensor<32x2x128xi8>
//       CHECK:   return %[[OUT]]
func.func @per_channel_view(%x: tensor<32x2x128xf32>) -> tensor<32x2x128xi8> {
  %c, %s, %l = qtrain.quantize %x, 8 role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<32x2x128xf32> -> tensor<32x2x128xi8>, tensor<32xf32>
  return %c : tensor<32x2x128xi8>
}

// Per channel along an inner axis: [before, channel, after].
// CHECK-LABEL: func.func @inner_axis_view
//       CHECK:   %[[VIEW:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<2x3x4x5xf32> into tensor<2x3x20xf32>
//       CHECK:   linalg.generic {{.*}} ins(%[[VIEW]], {{.*}} : tensor<2x3x20xf32>, tensor<3xf32>, tensor<3xf32>) outs({{.*}} : tensor<2x3x20xi8>)
//       CHECK:   tensor.expand_shape {{.*}} into tensor<2x3x4x5xi8>
func.func @inner_axis_view(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xi8> {
  %c, %s, %l = qtrain.quantize %x, 8 role weight rounding nearest_even granularity<per_channel, axis = 1> : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xi8>, tensor<3xf32>
  return %c : tensor<2x3x4x5xi8>
}
