// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --remarks-filter="qtrain-lift-params" --qtrain-lift-params | FileCheck %s

// Elided weights start from PyTorch's defaults, with the fan-in of the
// layer, whatever the weight's layout: an HWCF filter (fan_in = 3*3*2, not
// prod(shape[1:]) = 3*2*4), an [in, out] matmul weight (K = 8, not 5), the
// bias of each layer lifted before its weight.
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   %arg0: tensor<4xf32> {qtrain.fresh_init = {fan_in = 18 : i64, kind = "bias_uniform"}, qtrain.param}
//  CHECK-SAME:   %arg1: tensor<3x3x2x4xf32> {qtrain.fresh_init = {fan_in = 18 : i64, kind = "kaiming_uniform"}, qtrain.param}
//  CHECK-SAME:   %arg2: tensor<8x5xf32> {qtrain.fresh_init = {fan_in = 8 : i64, kind = "kaiming_uniform"}, qtrain.param}
//  CHECK-SAME:   %arg3: tensor<5xf32> {qtrain.fresh_init = {fan_in = 8 : i64, kind = "bias_uniform"}, qtrain.param}
//  CHECK-SAME:   %arg4: tensor<1x6x6x2xf32>
// Integer constants stay constants.
//       CHECK:   arith.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
//       CHECK:   arith.constant dense<true> : tensor<1x5xi1>
#c = affine_map<(d0, d1, d2, d3) -> (d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#b2 = affine_map<(d0, d1) -> (d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @forward(%x: tensor<1x6x6x2xf32>) -> (tensor<1x5xf32>, tensor<5xi64>, tensor<1x5xi1>) {
  %zero = arith.constant 0.0 : f32
  // expected-remark @+1 {{lifted constant #0 (dense_resource<__elided__> : tensor<3x3x2x4xf32>) into parameter %arg1, initialized kaiming_uniform (the export elided its values): the weight of linalg.conv_2d_nhwc_hwcf, fan_in 18 (reduction loops 3x3x2)}}
  %w = arith.constant dense_resource<__elided__> : tensor<3x3x2x4xf32>
  // expected-remark @+1 {{lifted constant #1 (dense_resource<__elided__> : tensor<4xf32>) into parameter %arg0, initialized bias_uniform (the export elided its values): the bias (the init) of linalg.conv_2d_nhwc_hwcf, fan_in 18 (reduction loops 3x3x2)}}
  %b = arith.constant dense_resource<__elided__> : tensor<4xf32>
  // expected-remark @+1 {{lifted constant #2 (dense_resource<__elided__> : tensor<8x5xf32>) into parameter %arg2, initialized kaiming_uniform (the export elided its values): the weight of linalg.matmul, fan_in 8 (reduction loops 8)}}
  %fw = arith.constant dense_resource<__elided__> : tensor<8x5xf32>
  // expected-remark @+1 {{lifted constant #3 (dense_resource<__elided__> : tensor<5xf32>) into parameter %arg3, initialized bias_uniform (the export elided its values): the bias added to the output of linalg.matmul, fan_in 8 (reduction loops 8)}}
  %fb = arith.constant dense_resource<__elided__> : tensor<5xf32>
  %ids = arith.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
  %mask = arith.constant dense<true> : tensor<1x5xi1>
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %bias = linalg.generic {indexing_maps = [#c, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<4xf32>) outs(%e : tensor<1x4x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x4x4xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<1x6x6x2xf32>, tensor<3x3x2x4xf32>) outs(%bias : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %slice = tensor.extract_slice %conv[0, 0, 0, 0] [1, 1, 2, 4] [1, 1, 1, 1] : tensor<1x4x4x4xf32> to tensor<1x1x2x4xf32>
  %pooled = tensor.collapse_shape %slice [[0], [1, 2, 3]] : tensor<1x1x2x4xf32> into tensor<1x8xf32>
  %e2 = tensor.empty() : tensor<1x5xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x5xf32>) -> tensor<1x5xf32>
  %mm = linalg.matmul ins(%pooled, %fw : tensor<1x8xf32>, tensor<8x5xf32>) outs(%fill : tensor<1x5xf32>) -> tensor<1x5xf32>
  %y = linalg.generic {indexing_maps = [#id2, #b2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %fb : tensor<1x5xf32>, tensor<5xf32>) outs(%e2 : tensor<1x5xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %s = arith.addf %in, %in_0 : f32
    linalg.yield %s : f32
  } -> tensor<1x5xf32>
  return %y, %ids, %mask : tensor<1x5xf32>, tensor<5xi64>, tensor<1x5xi1>
}

// -----

// Splats: in a weight position (a conv filter, a norm scale and shift) they
// are placeholders and become parameters; as a padding value or an
// elementwise operand of the whole tensor they stay constants.
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   %arg0: tensor<2x1x3x3xf32> {qtrain.fresh_init = {fan_in = 9 : i64, kind = "kaiming_uniform"}, qtrain.param}
//  CHECK-SAME:   %arg1: tensor<2xf32> {qtrain.fresh_init = {fan_in = 0 : i64, kind = "ones"}, qtrain.param}
//  CHECK-SAME:   %arg2: tensor<2xf32> {qtrain.fresh_init = {fan_in = 0 : i64, kind = "zeros"}, qtrain.param}
//  CHECK-SAME:   %arg3: tensor<1x1x6x6xf32>
//       CHECK:   arith.constant dense<5.000000e-01> : tensor<1x2x4x4xf32>
#c = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @forward(%x: tensor<1x1x6x6xf32>) -> tensor<1x2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-remark @+1 {{lifted constant #0 (tensor<2x1x3x3xf32>) into parameter %arg0, initialized kaiming_uniform (a splat in a weight position): the weight of linalg.conv_2d_nchw_fchw, fan_in 9 (reduction loops 1x3x3)}}
  %w = arith.constant dense<0.0> : tensor<2x1x3x3xf32>
  // expected-remark @+1 {{lifted constant #1 (tensor<2xf32>) into parameter %arg1, initialized ones (a splat in a weight position): a per-channel scale (arith.mulf in linalg.generic)}}
  %scale = arith.constant dense<1.0> : tensor<2xf32>
  // expected-remark @+1 {{lifted constant #2 (tensor<2xf32>) into parameter %arg2, initialized zeros (a splat in a weight position): a per-channel shift (arith.addf in linalg.generic)}}
  %shift = arith.constant dense<0.0> : tensor<2xf32>
  %half = arith.constant dense<0.5> : tensor<1x2x4x4xf32>
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) outs(%fill : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #c, #c, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %scale, %shift, %half : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%v: f32, %s: f32, %t: f32, %h: f32, %out: f32):
    %m = arith.mulf %v, %s : f32
    %a = arith.addf %m, %t : f32
    %r = arith.mulf %a, %h : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// An elided embedding table, read by tensor.extract at indices computed
// from token ids in a linalg.generic, starts as nn.Embedding's N(0, 1); a
// table a layer also reads as its weight (tied weights) too. A constant
// index table read at a constant index is no lookup: it stays what its
// other uses say.
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   %arg0: tensor<7x4xf32> {qtrain.fresh_init = {fan_in = 0 : i64, kind = "normal"}, qtrain.param}
#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
#m3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @forward(%tokens: tensor<1x3xi64>) -> tensor<3x7xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-remark @+1 {{lifted constant #0 (dense_resource<__elided__> : tensor<7x4xf32>) into parameter %arg0, initialized normal (the export elided its values): an embedding table (read by tensor.extract in linalg.generic), N(0, 1) as nn.Embedding}}
  %table = arith.constant dense_resource<__elided__> : tensor<7x4xf32>
  %e3 = tensor.empty() : tensor<1x3x4xf32>
  %emb = linalg.generic {indexing_maps = [#ids, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%tokens : tensor<1x3xi64>) outs(%e3 : tensor<1x3x4xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%row, %col] : tensor<7x4xf32>
    linalg.yield %v : f32
  } -> tensor<1x3x4xf32>
  %x = tensor.collapse_shape %emb [[0, 1], [2]] : tensor<1x3x4xf32> into tensor<3x4xf32>
  %t0 = tensor.empty() : tensor<4x7xf32>
  %tt = linalg.transpose ins(%table : tensor<7x4xf32>) outs(%t0 : tensor<4x7xf32>) permutation = [1, 0]
  %o0 = tensor.empty() : tensor<3x7xf32>
  %of = linalg.fill ins(%zero : f32) outs(%o0 : tensor<3x7xf32>) -> tensor<3x7xf32>
  %logits = linalg.matmul ins(%x, %tt : tensor<3x4xf32>, tensor<4x7xf32>) outs(%of : tensor<3x7xf32>) -> tensor<3x7xf32>
  return %logits : tensor<3x7xf32>
}
