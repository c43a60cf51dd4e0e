// RUN: qtrain-opt %s -split-input-file --qtrain-integer-kernels 2>/dev/null | FileCheck %s

// The accumulator bound at 8 x 8 bits (issue #9: integer kernels proven
// overflow-free up to their accumulation length). Codes are in [-128, 127],
// so a product is at most 2^14 in magnitude and K products fit in i32 while
// K * 2^14 <= 2^31 - 1, i.e. K <= 131071. One more term needs i64.

// CHECK-LABEL: func.func @longest_i32
//       CHECK:   outs(%{{.*}} : tensor<1x1xi32>) attrs = {qtrain.code_bits = array<i32: 8, 8>
func.func @longest_i32(%x: tensor<1x131071xf32>, %w: tensor<131071x1xf32>, %init: tensor<1x1xf32>) -> tensor<1x1xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 0, product = forward, bits = 8, grad_bits = 0>} {
  %b = arith.constant 8 : i32
  %xq = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<1x131071xf32>
  %wq = qtrain.fake_quant %w, %b role weight rounding nearest_even granularity<per_tensor> : tensor<131071x1xf32>
  %y = linalg.matmul {qtrain.layer = 0 : i64, qtrain.product = "forward"} ins(%xq, %wq : tensor<1x131071xf32>, tensor<131071x1xf32>) outs(%init : tensor<1x1xf32>) -> tensor<1x1xf32>
  return %y : tensor<1x1xf32>
}

// -----

// CHECK-LABEL: func.func @one_more_term_i64
//       CHECK:   outs(%{{.*}} : tensor<1x1xi64>) attrs = {qtrain.code_bits = array<i32: 8, 8>
func.func @one_more_term_i64(%x: tensor<1x131072xf32>, %w: tensor<131072x1xf32>, %init: tensor<1x1xf32>) -> tensor<1x1xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 0, product = forward, bits = 8, grad_bits = 0>} {
  %b = arith.constant 8 : i32
  %xq = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<1x131072xf32>
  %wq = qtrain.fake_quant %w, %b role weight rounding nearest_even granularity<per_tensor> : tensor<131072x1xf32>
  %y = linalg.matmul {qtrain.layer = 0 : i64, qtrain.product = "forward"} ins(%xq, %wq : tensor<1x131072xf32>, tensor<131072x1xf32>) outs(%init : tensor<1x1xf32>) -> tensor<1x1xf32>
  return %y : tensor<1x1xf32>
}
