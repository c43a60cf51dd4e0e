// RUN: qtrain-opt %s -split-input-file --qtrain-insert-quant="policy=ldp" -verify-diagnostics --remarks-filter="qtrain-.*"

// Tied weights: one parameter feeds two layers, each with its own learned
// precision; the second would read the first one's quantizer.
func.func @forward(%w: tensor<4x4xf32> {qtrain.param}, %x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %wt = linalg.transpose ins(%w : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  %i = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%i : tensor<2x4xf32>) -> tensor<2x4xf32>
  // expected-remark @+1 {{layer 0 quantized at its learned precision}}
  %h = linalg.matmul ins(%x, %wt : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
  // expected-error @+1 {{qtrain-insert-quant: policy=ldp: layer 1 shares its weight with an earlier layer (tied weights), which has its own learned precision; not supported}}
  %y = linalg.matmul ins(%h, %wt : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
