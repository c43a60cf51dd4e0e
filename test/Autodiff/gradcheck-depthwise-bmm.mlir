// Gradients match central differences in f64 for: depthwise convolutions in
// both layouts (strided and dilated), average pooling (sum pooling and a
// division), batch_matmul, and a log-softmax written as generics (max, exp,
// sum, log) feeding the loss.
// RUN: qtrain-opt %s --qtrain-autodiff -o %t.step.mlir
// RUN: qtrain-opt %t.step.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: %gradcheck %t.so %t.step.mlir --samples 8 | FileCheck %s

// CHECK: gradcheck: PASS

#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
#id2 = affine_map<(n, c) -> (n, c)>
#row = affine_map<(n, c) -> (n)>
func.func @forward(%dw1: tensor<3x3x3xf64> {qtrain.param}, %dw2: tensor<2x2x3xf64> {qtrain.param},
                   %bm: tensor<2x3x4xf64> {qtrain.param}, %x: tensor<2x3x9x9xf64>) -> tensor<2x4xf64> {
  %zero = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %four = arith.constant 4.0 : f64
  // depthwise nchw/chw, stride 2: 9x9 -> 4x4
  %i1 = tensor.empty() : tensor<2x3x4x4xf64>
  %f1 = linalg.fill ins(%zero : f64) outs(%i1 : tensor<2x3x4x4xf64>) -> tensor<2x3x4x4xf64>
  %c1 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %dw1 : tensor<2x3x9x9xf64>, tensor<3x3x3xf64>) outs(%f1 : tensor<2x3x4x4xf64>) -> tensor<2x3x4x4xf64>
  // to nhwc, depthwise nhwc/hwc with dilation 2: 4x4 -> 2x2
  %t_init = tensor.empty() : tensor<2x4x4x3xf64>
  %t = linalg.transpose ins(%c1 : tensor<2x3x4x4xf64>) outs(%t_init : tensor<2x4x4x3xf64>) permutation = [0, 2, 3, 1]
  %i2 = tensor.empty() : tensor<2x2x2x3xf64>
  %f2 = linalg.fill ins(%zero : f64) outs(%i2 : tensor<2x2x2x3xf64>) -> tensor<2x2x2x3xf64>
  %c2 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%t, %dw2 : tensor<2x4x4x3xf64>, tensor<2x2x3xf64>) outs(%f2 : tensor<2x2x2x3xf64>) -> tensor<2x2x2x3xf64>
  // average pooling 2x2 -> 1x1: sum pooling, then divide
  %i3 = tensor.empty() : tensor<2x1x1x3xf64>
  %f3 = linalg.fill ins(%zero : f64) outs(%i3 : tensor<2x1x1x3xf64>) -> tensor<2x1x1x3xf64>
  %win = tensor.empty() : tensor<2x2xf64>
  %s = linalg.pooling_nhwc_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%c2, %win : tensor<2x2x2x3xf64>, tensor<2x2xf64>) outs(%f3 : tensor<2x1x1x3xf64>) -> tensor<2x1x1x3xf64>
  %avg = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x1x1x3xf64>) outs(%i3 : tensor<2x1x1x3xf64>) {
  ^bb0(%v: f64, %o: f64):
    %q = arith.divf %v, %four : f64
    linalg.yield %q : f64
  } -> tensor<2x1x1x3xf64>
  // batch_matmul [2,1,3] x [2,3,4] -> [2,1,4] -> [2,4]
  %flat = tensor.collapse_shape %avg [[0], [1, 2], [3]] : tensor<2x1x1x3xf64> into tensor<2x1x3xf64>
  %i4 = tensor.empty() : tensor<2x1x4xf64>
  %f4 = linalg.fill ins(%zero : f64) outs(%i4 : tensor<2x1x4xf64>) -> tensor<2x1x4xf64>
  %bmm = linalg.batch_matmul ins(%flat, %bm : tensor<2x1x3xf64>, tensor<2x3x4xf64>) outs(%f4 : tensor<2x1x4xf64>) -> tensor<2x1x4xf64>
  %z = tensor.collapse_shape %bmm [[0, 1], [2]] : tensor<2x1x4xf64> into tensor<2x4xf64>
  // log_softmax(z) = z - max - log(sum(exp(z - max)))
  %ie = tensor.empty() : tensor<2xf64>
  %mx0 = linalg.fill ins(%ninf : f64) outs(%ie : tensor<2xf64>) -> tensor<2xf64>
  %mx = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%z : tensor<2x4xf64>) outs(%mx0 : tensor<2xf64>) {
  ^bb0(%v: f64, %acc: f64):
    %m = arith.maximumf %acc, %v : f64
    linalg.yield %m : f64
  } -> tensor<2xf64>
  %se0 = linalg.fill ins(%zero : f64) outs(%ie : tensor<2xf64>) -> tensor<2xf64>
  %se = linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%z, %mx : tensor<2x4xf64>, tensor<2xf64>) outs(%se0 : tensor<2xf64>) {
  ^bb0(%v: f64, %m: f64, %acc: f64):
    %d = arith.subf %v, %m : f64
    %e = math.exp %d : f64
    %a = arith.addf %acc, %e : f64
    linalg.yield %a : f64
  } -> tensor<2xf64>
  %io = tensor.empty() : tensor<2x4xf64>
  %ls = linalg.generic {indexing_maps = [#id2, #row, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%z, %mx, %se : tensor<2x4xf64>, tensor<2xf64>, tensor<2xf64>) outs(%io : tensor<2x4xf64>) {
  ^bb0(%v: f64, %m: f64, %s2: f64, %o: f64):
    %d = arith.subf %v, %m : f64
    %l = math.log %s2 : f64
    %r = arith.subf %d, %l : f64
    linalg.yield %r : f64
  } -> tensor<2x4xf64>
  return %ls : tensor<2x4xf64>
}
