// LeNet-5 for 28x28 single-channel images (Fashion-MNIST), at training batch
// 128, as a forward graph in linalg on tensors, written the way torch-mlir
// lowers torch.nn: bias broadcast into the init of the conv/matmul by a
// linalg.generic, padding as tensor.pad, ReLU as a generic with arith.maximumf,
// max pooling over a -inf fill, flatten as tensor.collapse_shape, and
// nn.Linear as linalg.transpose of the weight plus linalg.matmul.
//
// Parameters carry {qtrain.param}; the last argument is the input batch.
// conv1 6@5x5 pad 2 -> relu -> maxpool 2 -> conv2 16@5x5 -> relu -> maxpool 2
// -> fc 400x120 -> relu -> fc 120x84 -> relu -> fc 84x10 (logits).

#map_bias4 = affine_map<(n, c, h, w) -> (c)>
#map_id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#map_bias2 = affine_map<(n, f) -> (f)>
#map_id2 = affine_map<(n, f) -> (n, f)>

func.func @forward(
    %conv1_w: tensor<6x1x5x5xf32> {qtrain.param}, %conv1_b: tensor<6xf32> {qtrain.param},
    %conv2_w: tensor<16x6x5x5xf32> {qtrain.param}, %conv2_b: tensor<16xf32> {qtrain.param},
    %fc1_w: tensor<120x400xf32> {qtrain.param}, %fc1_b: tensor<120xf32> {qtrain.param},
    %fc2_w: tensor<84x120xf32> {qtrain.param}, %fc2_b: tensor<84xf32> {qtrain.param},
    %fc3_w: tensor<10x84xf32> {qtrain.param}, %fc3_b: tensor<10xf32> {qtrain.param},
    %x: tensor<128x1x28x28xf32>) -> tensor<128x10xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32

  // conv1 + relu + pool: 128x1x28x28 -> 128x6x14x14
  %x_pad = tensor.pad %x low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x1x28x28xf32> to tensor<128x1x32x32xf32>
  %c1_init = tensor.empty() : tensor<128x6x28x28xf32>
  %c1_bias = linalg.generic {indexing_maps = [#map_bias4, #map_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv1_b : tensor<6xf32>) outs(%c1_init : tensor<128x6x28x28xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x6x28x28xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x_pad, %conv1_w : tensor<128x1x32x32xf32>, tensor<6x1x5x5xf32>) outs(%c1_bias : tensor<128x6x28x28xf32>) -> tensor<128x6x28x28xf32>
  %r1 = linalg.generic {indexing_maps = [#map_id4, #map_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1 : tensor<128x6x28x28xf32>) outs(%c1_init : tensor<128x6x28x28xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<128x6x28x28xf32>
  %p1_init = tensor.empty() : tensor<128x6x14x14xf32>
  %p1_fill = linalg.fill ins(%ninf : f32) outs(%p1_init : tensor<128x6x14x14xf32>) -> tensor<128x6x14x14xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %p1 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%r1, %win : tensor<128x6x28x28xf32>, tensor<2x2xf32>) outs(%p1_fill : tensor<128x6x14x14xf32>) -> tensor<128x6x14x14xf32>

  // conv2 + relu + pool: 128x6x14x14 -> 128x16x5x5
  %c2_init = tensor.empty() : tensor<128x16x10x10xf32>
  %c2_bias = linalg.generic {indexing_maps = [#map_bias4, #map_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv2_b : tensor<16xf32>) outs(%c2_init : tensor<128x16x10x10xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x16x10x10xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%p1, %conv2_w : tensor<128x6x14x14xf32>, tensor<16x6x5x5xf32>) outs(%c2_bias : tensor<128x16x10x10xf32>) -> tensor<128x16x10x10xf32>
  %r2 = linalg.generic {indexing_maps = [#map_id4, #map_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c2 : tensor<128x16x10x10xf32>) outs(%c2_init : tensor<128x16x10x10xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<128x16x10x10xf32>
  %p2_init = tensor.empty() : tensor<128x16x5x5xf32>
  %p2_fill = linalg.fill ins(%ninf : f32) outs(%p2_init : tensor<128x16x5x5xf32>) -> tensor<128x16x5x5xf32>
  %p2 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%r2, %win : tensor<128x16x10x10xf32>, tensor<2x2xf32>) outs(%p2_fill : tensor<128x16x5x5xf32>) -> tensor<128x16x5x5xf32>
  %flat = tensor.collapse_shape %p2 [[0], [1, 2, 3]] : tensor<128x16x5x5xf32> into tensor<128x400xf32>

  // fc1 + relu: 128x400 -> 128x120
  %fc1_wt_init = tensor.empty() : tensor<400x120xf32>
  %fc1_wt = linalg.transpose ins(%fc1_w : tensor<120x400xf32>) outs(%fc1_wt_init : tensor<400x120xf32>) permutation = [1, 0]
  %h1_init = tensor.empty() : tensor<128x120xf32>
  %h1_bias = linalg.generic {indexing_maps = [#map_bias2, #map_id2], iterator_types = ["parallel", "parallel"]}
      ins(%fc1_b : tensor<120xf32>) outs(%h1_init : tensor<128x120xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x120xf32>
  %h1 = linalg.matmul ins(%flat, %fc1_wt : tensor<128x400xf32>, tensor<400x120xf32>) outs(%h1_bias : tensor<128x120xf32>) -> tensor<128x120xf32>
  %a1 = linalg.generic {indexing_maps = [#map_id2, #map_id2], iterator_types = ["parallel", "parallel"]}
      ins(%h1 : tensor<128x120xf32>) outs(%h1_init : tensor<128x120xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<128x120xf32>

  // fc2 + relu: 128x120 -> 128x84
  %fc2_wt_init = tensor.empty() : tensor<120x84xf32>
  %fc2_wt = linalg.transpose ins(%fc2_w : tensor<84x120xf32>) outs(%fc2_wt_init : tensor<120x84xf32>) permutation = [1, 0]
  %h2_init = tensor.empty() : tensor<128x84xf32>
  %h2_bias = linalg.generic {indexing_maps = [#map_bias2, #map_id2], iterator_types = ["parallel", "parallel"]}
      ins(%fc2_b : tensor<84xf32>) outs(%h2_init : tensor<128x84xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x84xf32>
  %h2 = linalg.matmul ins(%a1, %fc2_wt : tensor<128x120xf32>, tensor<120x84xf32>) outs(%h2_bias : tensor<128x84xf32>) -> tensor<128x84xf32>
  %a2 = linalg.generic {indexing_maps = [#map_id2, #map_id2], iterator_types = ["parallel", "parallel"]}
      ins(%h2 : tensor<128x84xf32>) outs(%h2_init : tensor<128x84xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<128x84xf32>

  // fc3: 128x84 -> 128x10 logits
  %fc3_wt_init = tensor.empty() : tensor<84x10xf32>
  %fc3_wt = linalg.transpose ins(%fc3_w : tensor<10x84xf32>) outs(%fc3_wt_init : tensor<84x10xf32>) permutation = [1, 0]
  %h3_init = tensor.empty() : tensor<128x10xf32>
  %h3_bias = linalg.generic {indexing_maps = [#map_bias2, #map_id2], iterator_types = ["parallel", "parallel"]}
      ins(%fc3_b : tensor<10xf32>) outs(%h3_init : tensor<128x10xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x10xf32>
  %logits = linalg.matmul ins(%a2, %fc3_wt : tensor<128x84xf32>, tensor<84x10xf32>) outs(%h3_bias : tensor<128x10xf32>) -> tensor<128x10xf32>
  return %logits : tensor<128x10xf32>
}
