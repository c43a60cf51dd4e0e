// RUN: qtrain-opt %s --convert-qtrain-to-linalg | FileCheck %s

// The structure of qtrain.quantize's lowering (its codes are pinned bit for
// bit against the reference integer computation by
// test/Pipelines/variants.test and lenet-variants.test): the range
// reduction, a NaN flag over the whole tensor, the grid per channel (scale,
// and low poisoned by NaN), then the codes q - 2^(b-1) truncated to i8.
// CHECK-LABEL: func.func @per_channel
//       CHECK:   %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
//       CHECK:   %[[RANGE:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
//       CHECK:   %[[FIXED:.*]]:2 = linalg.generic
//       CHECK:   %[[ANY:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
//       CHECK:     arith.cmpf uno
//       CHECK:     arith.ori
//       CHECK:   %[[GRID:.*]]:2 = linalg.generic {{.*}} ins(%[[FIXED]]#0, %[[FIXED]]#1, %[[ANY]] : tensor<6xf32>, tensor<6xf32>, tensor<i1>)
//       CHECK:     arith.select %{{.*}}, %[[NAN]], %{{.*}} : f32
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
