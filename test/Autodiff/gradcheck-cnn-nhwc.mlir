// Gradients of a small NHWC network match central differences in f64:
// conv_2d_nhwc_hwcf with stride 2 over an input whose last row no window
// reaches, max pooling, extract_slice, expand_shape, exp/log/sub/div/mul in
// elementwise generics, a sum reduction written as a generic, and the MSE
// loss.
// RUN: qtrain-opt %s --qtrain-autodiff="loss=mse" -o %t.step.mlir
// RUN: qtrain-opt %t.step.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: %gradcheck %t.so %t.step.mlir --samples 8 | FileCheck %s

// CHECK: gradcheck: PASS

#id4 = affine_map<(n, h, w, c) -> (n, h, w, c)>
#sum = affine_map<(n, h, w, c) -> (n, c)>
#id2 = affine_map<(n, c) -> (n, c)>
func.func @forward(%w: tensor<3x3x2x4xf64> {qtrain.param}, %s: tensor<2x4xf64> {qtrain.param},
                   %x: tensor<3x8x8x2xf64>) -> tensor<3x4xf64> {
  %zero = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %c_init = tensor.empty() : tensor<3x3x3x4xf64>
  %c_zero = linalg.fill ins(%zero : f64) outs(%c_init : tensor<3x3x3x4xf64>) -> tensor<3x3x3x4xf64>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %w : tensor<3x8x8x2xf64>, tensor<3x3x2x4xf64>) outs(%c_zero : tensor<3x3x3x4xf64>) -> tensor<3x3x3x4xf64>
  %e = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<3x3x3x4xf64>) outs(%c_init : tensor<3x3x3x4xf64>) {
  ^bb0(%v: f64, %o: f64):
    %one = arith.constant 1.0 : f64
    %ex = math.exp %v : f64
    %d = arith.addf %ex, %one : f64
    %l = math.log %d : f64
    %q = arith.divf %l, %d : f64
    %r = arith.subf %q, %v : f64
    %t = arith.mulf %r, %v : f64
    linalg.yield %t : f64
  } -> tensor<3x3x3x4xf64>
  %p_init = tensor.empty() : tensor<3x2x2x4xf64>
  %p_fill = linalg.fill ins(%ninf : f64) outs(%p_init : tensor<3x2x2x4xf64>) -> tensor<3x2x2x4xf64>
  %win = tensor.empty() : tensor<2x2xf64>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%e, %win : tensor<3x3x3x4xf64>, tensor<2x2xf64>) outs(%p_fill : tensor<3x2x2x4xf64>) -> tensor<3x2x2x4xf64>
  %sl = tensor.extract_slice %p[0, 0, 0, 0] [3, 2, 1, 4] [1, 1, 1, 1] : tensor<3x2x2x4xf64> to tensor<3x2x1x4xf64>
  %sum_init = tensor.empty() : tensor<3x4xf64>
  %sum_zero = linalg.fill ins(%zero : f64) outs(%sum_init : tensor<3x4xf64>) -> tensor<3x4xf64>
  %sum = linalg.generic {indexing_maps = [#id4, #sum], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%sl : tensor<3x2x1x4xf64>) outs(%sum_zero : tensor<3x4xf64>) {
  ^bb0(%v: f64, %acc: f64):
    %a = arith.addf %acc, %v : f64
    linalg.yield %a : f64
  } -> tensor<3x4xf64>
  %ex = tensor.expand_shape %s [[0, 1], [2]] output_shape [1, 2, 4] : tensor<2x4xf64> into tensor<1x2x4xf64>
  %sc = tensor.collapse_shape %ex [[0, 1], [2]] : tensor<1x2x4xf64> into tensor<2x4xf64>
  %s0 = tensor.extract_slice %sc[0, 0] [1, 4] [1, 1] : tensor<2x4xf64> to tensor<1x4xf64>
  %out_init = tensor.empty() : tensor<3x4xf64>
  %out = linalg.generic {indexing_maps = [#id2, affine_map<(n, c) -> (0, c)>, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%sum, %s0 : tensor<3x4xf64>, tensor<1x4xf64>) outs(%out_init : tensor<3x4xf64>) {
  ^bb0(%v: f64, %k: f64, %o: f64):
    %m = arith.mulf %v, %k : f64
    linalg.yield %m : f64
  } -> tensor<3x4xf64>
  return %out : tensor<3x4xf64>
}
