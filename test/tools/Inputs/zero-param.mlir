// A forward graph with a zero-size parameter (tensor<0x4xf32>): nothing to
// train, and no bundle can hold it (qtrain-run refuses zero dimensions).
func.func @forward(%w: tensor<4x4xf32> {qtrain.param},
                   %empty: tensor<0x4xf32> {qtrain.param},
                   %x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %init = tensor.empty() : tensor<2x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%fill : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
