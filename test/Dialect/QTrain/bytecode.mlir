// Every op and attribute survives a round trip through MLIR bytecode.
// RUN: qtrain-opt %s -emit-bytecode | qtrain-opt | FileCheck %s

// CHECK: module attributes {qtrain.schedule = #qtrain.cyclic<shape = rex, mode = triangular, flip = horizontal, min = 3, max = 8, cycles = 8, period = floor_plus_one>}
module attributes {qtrain.schedule = #qtrain.cyclic<shape = rex, mode = triangular, flip = horizontal, min = 3, max = 8, cycles = 8, period = floor_plus_one>} {
  // CHECK-LABEL: func.func @step
  //  CHECK-SAME:   {qtrain.param}
  //  CHECK-SAME:   attributes {fp32 = #qtrain.static<fp32>, grid = #qtrain.int<5>, ldp = #qtrain.learned<min = 2, max = 6>}
  //       CHECK:   qtrain.fake_quant %{{.*}}, %{{.*}} role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<6x4xf32>
  //       CHECK:   qtrain.fake_quant %{{.*}}, %{{.*}} role error rounding stochastic granularity<per_tensor> range(%{{.*}}, %{{.*}} : f32, f32) seed(%{{.*}}, %{{.*}}) {stream = 7 : i64} : tensor<6x4xf32>
  //       CHECK:   qtrain.round_float %{{.*}} to <4, 3, 4, saturate> role activation : tensor<6x4xf32>
  //       CHECK:   qtrain.grad_round_float %{{.*}} to <5, 2, 0> role error : tensor<6x4xf32>
  //       CHECK:   qtrain.grad_quant %{{.*}}, %{{.*}} rounding stochastic seed(%{{.*}}, %{{.*}}) {stream = 1 : i64} : tensor<6x4xf32>
  func.func @step(%w: tensor<6x4xf32> {qtrain.param}, %bits: i32, %key: i64, %lo: f32, %hi: f32, %step: i32) -> tensor<6x4xf32>
      attributes {fp32 = #qtrain.static<fp32>, grid = #qtrain.int<5>, ldp = #qtrain.learned<min = 2, max = 6>} {
    %0 = qtrain.fake_quant %w, %bits role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<6x4xf32>
    %1 = qtrain.fake_quant %0, %bits role error rounding stochastic granularity<per_tensor> range(%lo, %hi : f32, f32) seed(%key, %step) {stream = 7 : i64} : tensor<6x4xf32>
    %2 = qtrain.round_float %1 to <4, 3, 4, saturate> role activation : tensor<6x4xf32>
    %g = qtrain.grad_round_float %2 to <5, 2, 0> role error : tensor<6x4xf32>
    %3 = qtrain.grad_quant %g, %bits rounding stochastic seed(%key, %step) {stream = 1 : i64} : tensor<6x4xf32>
    return %3 : tensor<6x4xf32>
  }
}
