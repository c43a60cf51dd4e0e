// The "convnet" of PyTorch's MNIST example for 28x28 images (Fashion-MNIST) at
// training batch 128, in linalg on tensors as torch-mlir lowers torch.nn:
// conv 1->32 k3 -> relu -> conv 32->64 k3 -> relu -> maxpool 2 -> flatten 9216
// -> fc 9216x128 -> relu -> fc 128x10 (logits).

#bias4 = affine_map<(n, c, h, w) -> (c)>
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#bias2 = affine_map<(n, f) -> (f)>
#id2 = affine_map<(n, f) -> (n, f)>

func.func @forward(
    %conv1_w: tensor<32x1x3x3xf32> {qtrain.param}, %conv1_b: tensor<32xf32> {qtrain.param},
    %conv2_w: tensor<64x32x3x3xf32> {qtrain.param}, %conv2_b: tensor<64xf32> {qtrain.param},
    %fc1_w: tensor<128x9216xf32> {qtrain.param}, %fc1_b: tensor<128xf32> {qtrain.param},
    %fc2_w: tensor<10x128xf32> {qtrain.param}, %fc2_b: tensor<10xf32> {qtrain.param},
    %x: tensor<128x1x28x28xf32>) -> tensor<128x10xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32

  // conv1 + relu: 128x1x28x28 -> 128x32x26x26
  %c1_init = tensor.empty() : tensor<128x32x26x26xf32>
  %c1_bias = linalg.generic {indexing_maps = [#bias4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv1_b : tensor<32xf32>) outs(%c1_init : tensor<128x32x26x26xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x32x26x26xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %conv1_w : tensor<128x1x28x28xf32>, tensor<32x1x3x3xf32>) outs(%c1_bias : tensor<128x32x26x26xf32>) -> tensor<128x32x26x26xf32>
  %r1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1 : tensor<128x32x26x26xf32>) outs(%c1_init : tensor<128x32x26x26xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<128x32x26x26xf32>

  // conv2 + relu + pool: -> 128x64x24x24 -> 128x64x12x12
  %c2_init = tensor.empty() : tensor<128x64x24x24xf32>
  %c2_bias = linalg.generic {indexing_maps = [#bias4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv2_b : tensor<64xf32>) outs(%c2_init : tensor<128x64x24x24xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x64x24x24xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%r1, %conv2_w : tensor<128x32x26x26xf32>, tensor<64x32x3x3xf32>) outs(%c2_bias : tensor<128x64x24x24xf32>) -> tensor<128x64x24x24xf32>
  %r2 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c2 : tensor<128x64x24x24xf32>) outs(%c2_init : tensor<128x64x24x24xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<128x64x24x24xf32>
  %p_init = tensor.empty() : tensor<128x64x12x12xf32>
  %p_fill = linalg.fill ins(%ninf : f32) outs(%p_init : tensor<128x64x12x12xf32>) -> tensor<128x64x12x12xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%r2, %win : tensor<128x64x24x24xf32>, tensor<2x2xf32>) outs(%p_fill : tensor<128x64x12x12xf32>) -> tensor<128x64x12x12xf32>
  %flat = tensor.collapse_shape %p [[0], [1, 2, 3]] : tensor<128x64x12x12xf32> into tensor<128x9216xf32>

  // fc1 + relu: 128x9216 -> 128x128
  %fc1_wt_init = tensor.empty() : tensor<9216x128xf32>
  %fc1_wt = linalg.transpose ins(%fc1_w : tensor<128x9216xf32>) outs(%fc1_wt_init : tensor<9216x128xf32>) permutation = [1, 0]
  %h1_init = tensor.empty() : tensor<128x128xf32>
  %h1_bias = linalg.generic {indexing_maps = [#bias2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%fc1_b : tensor<128xf32>) outs(%h1_init : tensor<128x128xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x128xf32>
  %h1 = linalg.matmul ins(%flat, %fc1_wt : tensor<128x9216xf32>, tensor<9216x128xf32>) outs(%h1_bias : tensor<128x128xf32>) -> tensor<128x128xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h1 : tensor<128x128xf32>) outs(%h1_init : tensor<128x128xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<128x128xf32>

  // fc2: 128x128 -> 128x10 logits
  %fc2_wt_init = tensor.empty() : tensor<128x10xf32>
  %fc2_wt = linalg.transpose ins(%fc2_w : tensor<10x128xf32>) outs(%fc2_wt_init : tensor<128x10xf32>) permutation = [1, 0]
  %logits_init = tensor.empty() : tensor<128x10xf32>
  %logits_bias = linalg.generic {indexing_maps = [#bias2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%fc2_b : tensor<10xf32>) outs(%logits_init : tensor<128x10xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x10xf32>
  %logits = linalg.matmul ins(%a1, %fc2_wt : tensor<128x128xf32>, tensor<128x10xf32>) outs(%logits_bias : tensor<128x10xf32>) -> tensor<128x10xf32>
  return %logits : tensor<128x10xf32>
}
