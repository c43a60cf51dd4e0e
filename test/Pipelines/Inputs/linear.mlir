// A linear layer for test/Pipelines/variants.test (not a test itself).
func.func @forward(%w: tensor<4x16xf32> {qtrain.param}, %x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %wt_init = tensor.empty() : tensor<16x4xf32>
  %wt = linalg.transpose ins(%w : tensor<4x16xf32>) outs(%wt_init : tensor<16x4xf32>) permutation = [1, 0]
  %init = tensor.empty() : tensor<8x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<8x16xf32>, tensor<16x4xf32>) outs(%fill : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
