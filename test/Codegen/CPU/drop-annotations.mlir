// RUN: qtrain-opt %s --qtrain-drop-annotations -verify-diagnostics | FileCheck %s

// Every qtrain.* discardable attribute goes; other attributes stay.
// CHECK: module attributes {other.keep = 1 : i32} {
// CHECK-LABEL: func.func @step
//  CHECK-SAME:   (%{{.*}}: tensor<4xf32>, %{{.*}}: i32 {other.attr}) -> tensor<4xf32>
//   CHECK-NOT:   qtrain.
//       CHECK:   linalg.fill {keep = 2 : i32}
//   CHECK-NOT:   qtrain.
module attributes {other.keep = 1 : i32, qtrain.schedule = #qtrain.static<8>} {
  func.func @step(%w: tensor<4xf32> {qtrain.param, qtrain.init = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>},
                  %b: i32 {qtrain.control = "bits", other.attr}) -> (tensor<4xf32> {qtrain.state = "ema"})
      attributes {qtrain.variant = #qtrain.variant<site = 0, product = forward, bits = 8, grad_bits = 0>} {
    %zero = arith.constant 0.0 : f32
    %0 = linalg.fill {keep = 2 : i32, qtrain.layer = 0 : i64, qtrain.role = #qtrain<role activation>} ins(%zero : f32) outs(%w : tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
