// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=1" --qtrain-insert-quant="policy=none" --qtrain-insert-rounding --qtrain-autodiff 2>/dev/null | FileCheck %s

// Regression (found by fuzz/ir under AddressSanitizer): qtrain-autodiff
// erased the evaluation step's qtrain.range_ema ops while another op still
// read the updated range (here the rounding qtrain-insert-rounding puts on
// every forward output), a use after free. In @eval_step that reader now
// gets the range as it came in: evaluation does not update it.
// CHECK-LABEL: func.func @eval_step
//  CHECK-SAME:   %[[EMA:[^ ]*]]: tensor<2xf32> {qtrain.state = "ema"}
//   CHECK-NOT:   = qtrain.range_ema
//       CHECK:   %[[IN:.*]] = qtrain.round_float %[[EMA]]
//   CHECK-NOT:   = qtrain.range_ema
//       CHECK:   qtrain.round_float %[[IN]]
//   CHECK-NOT:   = qtrain.range_ema
//       CHECK:   return
func.func @forward(%w: tensor<3x5xf32> {qtrain.param}, %x: tensor<4x5xf32>, %bits: i32, %ema: tensor<2xf32> {qtrain.state = "ema"}) -> (tensor<4x3xf32>, tensor<2xf32> {qtrain.state = "ema"}) {
  %zero = arith.constant 0.0 : f32
  %xq = qtrain.fake_quant %x, %bits role activation rounding nearest_even granularity<per_tensor> : tensor<4x5xf32>
  %new = qtrain.range_ema %x, %ema : tensor<4x5xf32>, tensor<2xf32>
  %init = tensor.empty() : tensor<4x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%xq, %w : tensor<4x5xf32>, tensor<3x5xf32>) outs(%fill : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y, %new : tensor<4x3xf32>, tensor<2xf32>
}
