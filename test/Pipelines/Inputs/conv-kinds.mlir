// One site of every convolution kind qtrain quantizes, for
// test/Pipelines/conv-kinds.test: conv_2d_nchw_fchw, depthwise NCHW,
// torch-mlir's grouped form (conv_2d_ngchw_gfchw between expand_shape and
// collapse_shape), conv_2d_ngchw_fgchw, depthwise NHWC, conv_2d_nhwgc_gfhwc,
// TOSA's conv_2d_nhwc_fhwc, and a matmul, on 28x28 single-channel images.
// The classifier reads every layer's global average pool, so that the
// loss falls quickly in a short run although the chain is deep and narrow.
#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
#id5 = affine_map<(a, b, c, d, e) -> (a, b, c, d, e)>
#id2 = affine_map<(a, b) -> (a, b)>
#bias = affine_map<(a, b) -> (b)>
func.func @forward(%w0: tensor<8x1x3x3xf32> {qtrain.param}, %w1: tensor<8x3x3xf32> {qtrain.param},
                   %w2: tensor<8x4x3x3xf32> {qtrain.param}, %w3: tensor<4x2x4x1x1xf32> {qtrain.param},
                   %w4: tensor<3x3x8xf32> {qtrain.param}, %w5: tensor<2x4x1x1x4xf32> {qtrain.param},
                   %w6: tensor<16x3x3x8xf32> {qtrain.param}, %fc: tensor<64x10xf32> {qtrain.param},
                   %fcb: tensor<10xf32> {qtrain.param},
                   %x: tensor<32x1x28x28xf32>) -> tensor<32x10xf32> {
  %zero = arith.constant 0.0 : f32
  %c0_e = tensor.empty() : tensor<32x8x13x13xf32>
  %c0_f = linalg.fill ins(%zero : f32) outs(%c0_e : tensor<32x8x13x13xf32>) -> tensor<32x8x13x13xf32>
  %c0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %w0 : tensor<32x1x28x28xf32>, tensor<8x1x3x3xf32>) outs(%c0_f : tensor<32x8x13x13xf32>) -> tensor<32x8x13x13xf32>
  %r0 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c0 : tensor<32x8x13x13xf32>) outs(%c0 : tensor<32x8x13x13xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<32x8x13x13xf32>
  %c1_e = tensor.empty() : tensor<32x8x11x11xf32>
  %c1_f = linalg.fill ins(%zero : f32) outs(%c1_e : tensor<32x8x11x11xf32>) -> tensor<32x8x11x11xf32>
  %c1 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%r0, %w1 : tensor<32x8x13x13xf32>, tensor<8x3x3xf32>) outs(%c1_f : tensor<32x8x11x11xf32>) -> tensor<32x8x11x11xf32>
  %r1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1 : tensor<32x8x11x11xf32>) outs(%c1 : tensor<32x8x11x11xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<32x8x11x11xf32>
  %g2 = tensor.expand_shape %r1 [[0], [1, 2], [3], [4]] output_shape [32, 2, 4, 11, 11] : tensor<32x8x11x11xf32> into tensor<32x2x4x11x11xf32>
  %w2g = tensor.expand_shape %w2 [[0, 1], [2], [3], [4]] output_shape [2, 4, 4, 3, 3] : tensor<8x4x3x3xf32> into tensor<2x4x4x3x3xf32>
  %c2_e = tensor.empty() : tensor<32x2x4x5x5xf32>
  %c2_f = linalg.fill ins(%zero : f32) outs(%c2_e : tensor<32x2x4x5x5xf32>) -> tensor<32x2x4x5x5xf32>
  %c2 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%g2, %w2g : tensor<32x2x4x11x11xf32>, tensor<2x4x4x3x3xf32>) outs(%c2_f : tensor<32x2x4x5x5xf32>) -> tensor<32x2x4x5x5xf32>
  %r2 = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%c2 : tensor<32x2x4x5x5xf32>) outs(%c2 : tensor<32x2x4x5x5xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<32x2x4x5x5xf32>
  %c3_e = tensor.empty() : tensor<32x2x4x5x5xf32>
  %c3_f = linalg.fill ins(%zero : f32) outs(%c3_e : tensor<32x2x4x5x5xf32>) -> tensor<32x2x4x5x5xf32>
  %c3 = linalg.conv_2d_ngchw_fgchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%r2, %w3 : tensor<32x2x4x5x5xf32>, tensor<4x2x4x1x1xf32>) outs(%c3_f : tensor<32x2x4x5x5xf32>) -> tensor<32x2x4x5x5xf32>
  %f3 = tensor.collapse_shape %c3 [[0], [1, 2], [3], [4]] : tensor<32x2x4x5x5xf32> into tensor<32x8x5x5xf32>
  %t_e = tensor.empty() : tensor<32x5x5x8xf32>
  %t = linalg.transpose ins(%f3 : tensor<32x8x5x5xf32>) outs(%t_e : tensor<32x5x5x8xf32>) permutation = [0, 2, 3, 1]
  %c4_e = tensor.empty() : tensor<32x3x3x8xf32>
  %c4_f = linalg.fill ins(%zero : f32) outs(%c4_e : tensor<32x3x3x8xf32>) -> tensor<32x3x3x8xf32>
  %c4 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%t, %w4 : tensor<32x5x5x8xf32>, tensor<3x3x8xf32>) outs(%c4_f : tensor<32x3x3x8xf32>) -> tensor<32x3x3x8xf32>
  %r4 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c4 : tensor<32x3x3x8xf32>) outs(%c4 : tensor<32x3x3x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<32x3x3x8xf32>
  %g5 = tensor.expand_shape %r4 [[0], [1], [2], [3, 4]] output_shape [32, 3, 3, 2, 4] : tensor<32x3x3x8xf32> into tensor<32x3x3x2x4xf32>
  %c5_e = tensor.empty() : tensor<32x3x3x2x4xf32>
  %c5_f = linalg.fill ins(%zero : f32) outs(%c5_e : tensor<32x3x3x2x4xf32>) -> tensor<32x3x3x2x4xf32>
  %c5 = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%g5, %w5 : tensor<32x3x3x2x4xf32>, tensor<2x4x1x1x4xf32>) outs(%c5_f : tensor<32x3x3x2x4xf32>) -> tensor<32x3x3x2x4xf32>
  %f5 = tensor.collapse_shape %c5 [[0], [1], [2], [3, 4]] : tensor<32x3x3x2x4xf32> into tensor<32x3x3x8xf32>
  %c6_e = tensor.empty() : tensor<32x1x1x16xf32>
  %c6_f = linalg.fill ins(%zero : f32) outs(%c6_e : tensor<32x1x1x16xf32>) -> tensor<32x1x1x16xf32>
  %c6 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%f5, %w6 : tensor<32x3x3x8xf32>, tensor<16x3x3x8xf32>) outs(%c6_f : tensor<32x1x1x16xf32>) -> tensor<32x1x1x16xf32>
  %r6 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c6 : tensor<32x1x1x16xf32>) outs(%c6 : tensor<32x1x1x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<32x1x1x16xf32>
  %p0_e = tensor.empty() : tensor<32x8xf32>
  %p0_f = linalg.fill ins(%zero : f32) outs(%p0_e : tensor<32x8xf32>) -> tensor<32x8xf32>
  %p0_s = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%r0 : tensor<32x8x13x13xf32>) outs(%p0_f : tensor<32x8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %n = arith.constant 169.0 : f32
    %q = arith.divf %v, %n : f32
    %a = arith.addf %acc, %q : f32
    linalg.yield %a : f32
  } -> tensor<32x8xf32>
  %p0 = tensor.collapse_shape %p0_s [[0], [1]] : tensor<32x8xf32> into tensor<32x8xf32>
  %p1_e = tensor.empty() : tensor<32x8xf32>
  %p1_f = linalg.fill ins(%zero : f32) outs(%p1_e : tensor<32x8xf32>) -> tensor<32x8xf32>
  %p1_s = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%r1 : tensor<32x8x11x11xf32>) outs(%p1_f : tensor<32x8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %n = arith.constant 121.0 : f32
    %q = arith.divf %v, %n : f32
    %a = arith.addf %acc, %q : f32
    linalg.yield %a : f32
  } -> tensor<32x8xf32>
  %p1 = tensor.collapse_shape %p1_s [[0], [1]] : tensor<32x8xf32> into tensor<32x8xf32>
  %p2_e = tensor.empty() : tensor<32x2x4xf32>
  %p2_f = linalg.fill ins(%zero : f32) outs(%p2_e : tensor<32x2x4xf32>) -> tensor<32x2x4xf32>
  %p2_s = linalg.generic {indexing_maps = [affine_map<(a, b, c, d, e) -> (a, b, c, d, e)>, affine_map<(a, b, c, d, e) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%r2 : tensor<32x2x4x5x5xf32>) outs(%p2_f : tensor<32x2x4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %n = arith.constant 25.0 : f32
    %q = arith.divf %v, %n : f32
    %a = arith.addf %acc, %q : f32
    linalg.yield %a : f32
  } -> tensor<32x2x4xf32>
  %p2 = tensor.collapse_shape %p2_s [[0], [1, 2]] : tensor<32x2x4xf32> into tensor<32x8xf32>
  %p3_e = tensor.empty() : tensor<32x2x4xf32>
  %p3_f = linalg.fill ins(%zero : f32) outs(%p3_e : tensor<32x2x4xf32>) -> tensor<32x2x4xf32>
  %p3_s = linalg.generic {indexing_maps = [affine_map<(a, b, c, d, e) -> (a, b, c, d, e)>, affine_map<(a, b, c, d, e) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%c3 : tensor<32x2x4x5x5xf32>) outs(%p3_f : tensor<32x2x4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %n = arith.constant 25.0 : f32
    %q = arith.divf %v, %n : f32
    %a = arith.addf %acc, %q : f32
    linalg.yield %a : f32
  } -> tensor<32x2x4xf32>
  %p3 = tensor.collapse_shape %p3_s [[0], [1, 2]] : tensor<32x2x4xf32> into tensor<32x8xf32>
  %p4_e = tensor.empty() : tensor<32x8xf32>
  %p4_f = linalg.fill ins(%zero : f32) outs(%p4_e : tensor<32x8xf32>) -> tensor<32x8xf32>
  %p4_s = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, d)>], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%r4 : tensor<32x3x3x8xf32>) outs(%p4_f : tensor<32x8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %n = arith.constant 9.0 : f32
    %q = arith.divf %v, %n : f32
    %a = arith.addf %acc, %q : f32
    linalg.yield %a : f32
  } -> tensor<32x8xf32>
  %p4 = tensor.collapse_shape %p4_s [[0], [1]] : tensor<32x8xf32> into tensor<32x8xf32>
  %p5_e = tensor.empty() : tensor<32x2x4xf32>
  %p5_f = linalg.fill ins(%zero : f32) outs(%p5_e : tensor<32x2x4xf32>) -> tensor<32x2x4xf32>
  %p5_s = linalg.generic {indexing_maps = [affine_map<(a, b, c, d, e) -> (a, b, c, d, e)>, affine_map<(a, b, c, d, e) -> (a, d, e)>], iterator_types = ["parallel", "reduction", "reduction", "parallel", "parallel"]}
      ins(%c5 : tensor<32x3x3x2x4xf32>) outs(%p5_f : tensor<32x2x4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %n = arith.constant 9.0 : f32
    %q = arith.divf %v, %n : f32
    %a = arith.addf %acc, %q : f32
    linalg.yield %a : f32
  } -> tensor<32x2x4xf32>
  %p5 = tensor.collapse_shape %p5_s [[0], [1, 2]] : tensor<32x2x4xf32> into tensor<32x8xf32>
  %p6_e = tensor.empty() : tensor<32x16xf32>
  %p6_f = linalg.fill ins(%zero : f32) outs(%p6_e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %p6_s = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, d)>], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%r6 : tensor<32x1x1x16xf32>) outs(%p6_f : tensor<32x16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %n = arith.constant 1.0 : f32
    %q = arith.divf %v, %n : f32
    %a = arith.addf %acc, %q : f32
    linalg.yield %a : f32
  } -> tensor<32x16xf32>
  %p6 = tensor.collapse_shape %p6_s [[0], [1]] : tensor<32x16xf32> into tensor<32x16xf32>
  %flat = tensor.concat dim(1) %p0, %p1, %p2, %p3, %p4, %p5, %p6 : (tensor<32x8xf32>, tensor<32x8xf32>, tensor<32x8xf32>, tensor<32x8xf32>, tensor<32x8xf32>, tensor<32x8xf32>, tensor<32x16xf32>) -> tensor<32x64xf32>
  %z_e = tensor.empty() : tensor<32x10xf32>
  %z_b = linalg.generic {indexing_maps = [#bias, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%fcb : tensor<10xf32>) outs(%z_e : tensor<32x10xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<32x10xf32>
  %z = linalg.matmul ins(%flat, %fc : tensor<32x64xf32>, tensor<64x10xf32>) outs(%z_b : tensor<32x10xf32>) -> tensor<32x10xf32>
  return %z : tensor<32x10xf32>
}
