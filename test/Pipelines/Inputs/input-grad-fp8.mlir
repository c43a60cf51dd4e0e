// Input-gradient variants of a linear layer (E: 8x4, W: 4x16 per output
// channel) with an fp8 error (--grad-format=e5m2: the error rounded to
// e5m2, scaled per tensor, inside the variant as qtrain-form-kernels
// input-grad-roundings leaves it) for test/Pipelines/input-grad.test (not a
// test itself). The seed and step are not read: the same ABI as
// input-grad.mlir's variants.
func.func @input_grad_b4(%e: tensor<8x4xf32>, %w: tensor<4x16xf32>, %init: tensor<8x16xf32>, %seed: i64, %step: i32) -> tensor<8x16xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 0, product = input_grad, bits = 4, grad_bits = 8>} {
  %b = arith.constant 4 : i32
  %er = qtrain.round_float %e to <5, 2, 0> scaled(57344.0) role error : tensor<8x4xf32>
  %wq = qtrain.fake_quant %w, %b role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<4x16xf32>
  %y = linalg.matmul {qtrain.layer = 0 : i64, qtrain.product = "input_grad"} ins(%er, %wq : tensor<8x4xf32>, tensor<4x16xf32>) outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

func.func @input_grad_b8(%e: tensor<8x4xf32>, %w: tensor<4x16xf32>, %init: tensor<8x16xf32>, %seed: i64, %step: i32) -> tensor<8x16xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 0, product = input_grad, bits = 8, grad_bits = 8>} {
  %b = arith.constant 8 : i32
  %er = qtrain.round_float %e to <5, 2, 0> scaled(57344.0) role error : tensor<8x4xf32>
  %wq = qtrain.fake_quant %w, %b role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<4x16xf32>
  %y = linalg.matmul {qtrain.layer = 0 : i64, qtrain.product = "input_grad"} ins(%er, %wq : tensor<8x4xf32>, tensor<4x16xf32>) outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
