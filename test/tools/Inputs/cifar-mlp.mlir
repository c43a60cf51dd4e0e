// A tiny two-layer perceptron for 3x32x32 images (CIFAR-sized) at batch 16,
// in the form of examples/models/mlp.mlir: the model of the qtrain-run
// dataset tests (test/tools/data-*.test), small so that it compiles fast.
// flatten 3072 -> fc 3072x32 -> relu -> fc 32x10 (logits).

#bias = affine_map<(n, f) -> (f)>
#id = affine_map<(n, f) -> (n, f)>

func.func @forward(
    %fc1_w: tensor<32x3072xf32> {qtrain.param}, %fc1_b: tensor<32xf32> {qtrain.param},
    %fc2_w: tensor<10x32xf32> {qtrain.param}, %fc2_b: tensor<10xf32> {qtrain.param},
    %x: tensor<16x3x32x32xf32>) -> tensor<16x10xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %flat = tensor.collapse_shape %x [[0], [1, 2, 3]] : tensor<16x3x32x32xf32> into tensor<16x3072xf32>

  %w1t_init = tensor.empty() : tensor<3072x32xf32>
  %w1t = linalg.transpose ins(%fc1_w : tensor<32x3072xf32>) outs(%w1t_init : tensor<3072x32xf32>) permutation = [1, 0]
  %h_init = tensor.empty() : tensor<16x32xf32>
  %h_bias = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%fc1_b : tensor<32xf32>) outs(%h_init : tensor<16x32xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<16x32xf32>
  %h = linalg.matmul ins(%flat, %w1t : tensor<16x3072xf32>, tensor<3072x32xf32>) outs(%h_bias : tensor<16x32xf32>) -> tensor<16x32xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<16x32xf32>) outs(%h_init : tensor<16x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<16x32xf32>

  %w2t_init = tensor.empty() : tensor<32x10xf32>
  %w2t = linalg.transpose ins(%fc2_w : tensor<10x32xf32>) outs(%w2t_init : tensor<32x10xf32>) permutation = [1, 0]
  %l_init = tensor.empty() : tensor<16x10xf32>
  %l_bias = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%fc2_b : tensor<10xf32>) outs(%l_init : tensor<16x10xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<16x10xf32>
  %logits = linalg.matmul ins(%a, %w2t : tensor<16x32xf32>, tensor<32x10xf32>) outs(%l_bias : tensor<16x10xf32>) -> tensor<16x10xf32>
  return %logits : tensor<16x10xf32>
}
