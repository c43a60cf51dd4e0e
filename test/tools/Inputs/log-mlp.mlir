// The MLP of examples/models/mlp.mlir with log(relu(h)) as its hidden
// activation: where h <= 0 the activations are -inf (log 0), from finite
// inputs and parameters: non-finite activations mid-step (issue #9).

#bias = affine_map<(n, f) -> (f)>
#id = affine_map<(n, f) -> (n, f)>

func.func @forward(
    %fc1_w: tensor<256x784xf32> {qtrain.param}, %fc1_b: tensor<256xf32> {qtrain.param},
    %fc2_w: tensor<10x256xf32> {qtrain.param}, %fc2_b: tensor<10xf32> {qtrain.param},
    %x: tensor<128x1x28x28xf32>) -> tensor<128x10xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %flat = tensor.collapse_shape %x [[0], [1, 2, 3]] : tensor<128x1x28x28xf32> into tensor<128x784xf32>

  %w1t_init = tensor.empty() : tensor<784x256xf32>
  %w1t = linalg.transpose ins(%fc1_w : tensor<256x784xf32>) outs(%w1t_init : tensor<784x256xf32>) permutation = [1, 0]
  %h_init = tensor.empty() : tensor<128x256xf32>
  %h_bias = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%fc1_b : tensor<256xf32>) outs(%h_init : tensor<128x256xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x256xf32>
  %h = linalg.matmul ins(%flat, %w1t : tensor<128x784xf32>, tensor<784x256xf32>) outs(%h_bias : tensor<128x256xf32>) -> tensor<128x256xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<128x256xf32>) outs(%h_init : tensor<128x256xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    %r = math.log %m : f32
    linalg.yield %r : f32
  } -> tensor<128x256xf32>

  %w2t_init = tensor.empty() : tensor<256x10xf32>
  %w2t = linalg.transpose ins(%fc2_w : tensor<10x256xf32>) outs(%w2t_init : tensor<256x10xf32>) permutation = [1, 0]
  %l_init = tensor.empty() : tensor<128x10xf32>
  %l_bias = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%fc2_b : tensor<10xf32>) outs(%l_init : tensor<128x10xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x10xf32>
  %logits = linalg.matmul ins(%a, %w2t : tensor<128x256xf32>, tensor<256x10xf32>) outs(%l_bias : tensor<128x10xf32>) -> tensor<128x10xf32>
  return %logits : tensor<128x10xf32>
}
