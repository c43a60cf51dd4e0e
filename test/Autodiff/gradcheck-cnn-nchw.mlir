// Gradients of a small NCHW network match central differences in f64:
// tensor.pad, a strided convolution, an overlapping max pool, a dilated
// convolution with a broadcast bias, sum pooling, collapse_shape and a
// transposed-weight linear layer.
// RUN: qtrain-opt %s --qtrain-autodiff -o %t.step.mlir
// RUN: qtrain-opt %t.step.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: %gradcheck %t.so %t.step.mlir --samples 8 | FileCheck %s

// CHECK: gradcheck: PASS

#bias4 = affine_map<(n, c, h, w) -> (c)>
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @forward(%w1: tensor<3x1x3x3xf64> {qtrain.param}, %w2: tensor<2x3x2x2xf64> {qtrain.param},
                   %b2: tensor<2xf64> {qtrain.param}, %fc: tensor<4x8xf64> {qtrain.param},
                   %x: tensor<2x1x13x13xf64>) -> tensor<2x4xf64> {
  %zero = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f64
  } : tensor<2x1x13x13xf64> to tensor<2x1x15x15xf64>
  %c1_init = tensor.empty() : tensor<2x3x7x7xf64>
  %c1_zero = linalg.fill ins(%zero : f64) outs(%c1_init : tensor<2x3x7x7xf64>) -> tensor<2x3x7x7xf64>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%xp, %w1 : tensor<2x1x15x15xf64>, tensor<3x1x3x3xf64>) outs(%c1_zero : tensor<2x3x7x7xf64>) -> tensor<2x3x7x7xf64>
  %r1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1 : tensor<2x3x7x7xf64>) outs(%c1_init : tensor<2x3x7x7xf64>) {
  ^bb0(%v: f64, %o: f64):
    %m = arith.maximumf %v, %zero : f64
    linalg.yield %m : f64
  } -> tensor<2x3x7x7xf64>
  %p1_init = tensor.empty() : tensor<2x3x5x5xf64>
  %p1_fill = linalg.fill ins(%ninf : f64) outs(%p1_init : tensor<2x3x5x5xf64>) -> tensor<2x3x5x5xf64>
  %win3 = tensor.empty() : tensor<3x3xf64>
  %p1 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%r1, %win3 : tensor<2x3x7x7xf64>, tensor<3x3xf64>) outs(%p1_fill : tensor<2x3x5x5xf64>) -> tensor<2x3x5x5xf64>
  %c2_init = tensor.empty() : tensor<2x2x3x3xf64>
  %c2_bias = linalg.generic {indexing_maps = [#bias4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b2 : tensor<2xf64>) outs(%c2_init : tensor<2x2x3x3xf64>) {
  ^bb0(%b: f64, %o: f64):
    linalg.yield %b : f64
  } -> tensor<2x2x3x3xf64>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%p1, %w2 : tensor<2x3x5x5xf64>, tensor<2x3x2x2xf64>) outs(%c2_bias : tensor<2x2x3x3xf64>) -> tensor<2x2x3x3xf64>
  %p2_init = tensor.empty() : tensor<2x2x2x2xf64>
  %p2_zero = linalg.fill ins(%zero : f64) outs(%p2_init : tensor<2x2x2x2xf64>) -> tensor<2x2x2x2xf64>
  %win2 = tensor.empty() : tensor<2x2xf64>
  %p2 = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%c2, %win2 : tensor<2x2x3x3xf64>, tensor<2x2xf64>) outs(%p2_zero : tensor<2x2x2x2xf64>) -> tensor<2x2x2x2xf64>
  %flat = tensor.collapse_shape %p2 [[0], [1, 2, 3]] : tensor<2x2x2x2xf64> into tensor<2x8xf64>
  %l_init = tensor.empty() : tensor<2x4xf64>
  %l_zero = linalg.fill ins(%zero : f64) outs(%l_init : tensor<2x4xf64>) -> tensor<2x4xf64>
  %l = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%flat, %fc : tensor<2x8xf64>, tensor<4x8xf64>) outs(%l_zero : tensor<2x4xf64>) -> tensor<2x4xf64>
  return %l : tensor<2x4xf64>
}
