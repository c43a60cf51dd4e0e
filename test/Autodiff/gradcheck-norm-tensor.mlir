// Gradients through normalization and data-movement ops match central
// differences in f64: layer norm over the last dimension (mean and variance
// reductions, rsqrt, weight and bias through linalg.broadcast, linalg.mul,
// linalg.add), a residual add, a strided tensor.extract_slice, adaptive
// average pooling as torch-mlir lowers it (pooling_nchw_sum, then a divide),
// tensor.concat, linalg.transpose, and a max-subtracted softmax along the
// last dimension feeding another layer.
// RUN: qtrain-opt %s --qtrain-autodiff -o %t.step.mlir
// RUN: qtrain-opt %t.step.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: %gradcheck %t.so %t.step.mlir --samples 8 | FileCheck %s

// CHECK-COUNT-5: max relative error
// CHECK: gradcheck: PASS

#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @forward(%w1: tensor<6x8xf64> {qtrain.param}, %gamma: tensor<8xf64> {qtrain.param},
                   %beta: tensor<8xf64> {qtrain.param}, %w2: tensor<3x8xf64> {qtrain.param},
                   %w3: tensor<3x3xf64> {qtrain.param}, %x: tensor<2x6xf64>) -> tensor<2x3xf64> {
  %cst0 = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %e28 = tensor.empty() : tensor<2x8xf64>
  %f28 = linalg.fill ins(%cst0 : f64) outs(%e28 : tensor<2x8xf64>) -> tensor<2x8xf64>
  %h = linalg.matmul ins(%x, %w1 : tensor<2x6xf64>, tensor<6x8xf64>) outs(%f28 : tensor<2x8xf64>) -> tensor<2x8xf64>
  // layer norm over the last dimension
  %e2 = tensor.empty() : tensor<2xf64>
  %f2 = linalg.fill ins(%cst0 : f64) outs(%e2 : tensor<2xf64>) -> tensor<2xf64>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<2x8xf64>) outs(%f2 : tensor<2xf64>) {
  ^bb0(%v: f64, %acc: f64):
    %a = arith.addf %acc, %v : f64
    linalg.yield %a : f64
  } -> tensor<2xf64>
  %centered = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h, %sum : tensor<2x8xf64>, tensor<2xf64>) outs(%e28 : tensor<2x8xf64>) {
  ^bb0(%v: f64, %s: f64, %o: f64):
    %n = arith.constant 8.0 : f64
    %m = arith.divf %s, %n : f64
    %c = arith.subf %v, %m : f64
    linalg.yield %c : f64
  } -> tensor<2x8xf64>
  %sq = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%centered : tensor<2x8xf64>) outs(%f2 : tensor<2xf64>) {
  ^bb0(%v: f64, %acc: f64):
    %p = arith.mulf %v, %v : f64
    %a = arith.addf %acc, %p : f64
    linalg.yield %a : f64
  } -> tensor<2xf64>
  %normed = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%centered, %sq : tensor<2x8xf64>, tensor<2xf64>) outs(%e28 : tensor<2x8xf64>) {
  ^bb0(%c: f64, %s: f64, %o: f64):
    %n = arith.constant 8.0 : f64
    %eps = arith.constant 1.0e-5 : f64
    %var = arith.divf %s, %n : f64
    %ve = arith.addf %var, %eps : f64
    %r = math.rsqrt %ve : f64
    %y = arith.mulf %c, %r : f64
    linalg.yield %y : f64
  } -> tensor<2x8xf64>
  %g = linalg.broadcast ins(%gamma : tensor<8xf64>) outs(%e28 : tensor<2x8xf64>) dimensions = [0]
  %b = linalg.broadcast ins(%beta : tensor<8xf64>) outs(%e28 : tensor<2x8xf64>) dimensions = [0]
  %scaled = linalg.mul ins(%normed, %g : tensor<2x8xf64>, tensor<2x8xf64>) outs(%e28 : tensor<2x8xf64>) -> tensor<2x8xf64>
  %ln = linalg.add ins(%scaled, %b : tensor<2x8xf64>, tensor<2x8xf64>) outs(%e28 : tensor<2x8xf64>) -> tensor<2x8xf64>
  // residual
  %res = linalg.add ins(%ln, %h : tensor<2x8xf64>, tensor<2x8xf64>) outs(%e28 : tensor<2x8xf64>) -> tensor<2x8xf64>
  // every other column
  %strided = tensor.extract_slice %res[0, 1] [2, 4] [1, 2] : tensor<2x8xf64> to tensor<2x4xf64>
  // adaptive average pooling of a 2x2x2x2 map to 2x2x1x2
  %map = tensor.expand_shape %res [[0], [1, 2, 3]] output_shape [2, 2, 2, 2] : tensor<2x8xf64> into tensor<2x2x2x2xf64>
  %pe = tensor.empty() : tensor<2x2x1x2xf64>
  %pf = linalg.fill ins(%cst0 : f64) outs(%pe : tensor<2x2x1x2xf64>) -> tensor<2x2x1x2xf64>
  %win = tensor.empty() : tensor<2x1xf64>
  %ps = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%map, %win : tensor<2x2x2x2xf64>, tensor<2x1xf64>) outs(%pf : tensor<2x2x1x2xf64>) -> tensor<2x2x1x2xf64>
  %avg = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ps : tensor<2x2x1x2xf64>) outs(%pe : tensor<2x2x1x2xf64>) {
  ^bb0(%v: f64, %o: f64):
    %two = arith.constant 2.0 : f64
    %q = arith.divf %v, %two : f64
    linalg.yield %q : f64
  } -> tensor<2x2x1x2xf64>
  %pooled = tensor.collapse_shape %avg [[0], [1, 2, 3]] : tensor<2x2x1x2xf64> into tensor<2x4xf64>
  %cat = tensor.concat dim(1) %strided, %pooled : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x8xf64>
  // z^T = w2 cat^T
  %te = tensor.empty() : tensor<8x2xf64>
  %t = linalg.transpose ins(%cat : tensor<2x8xf64>) outs(%te : tensor<8x2xf64>) permutation = [1, 0]
  %e32 = tensor.empty() : tensor<3x2xf64>
  %f32 = linalg.fill ins(%cst0 : f64) outs(%e32 : tensor<3x2xf64>) -> tensor<3x2xf64>
  %zt = linalg.matmul ins(%w2, %t : tensor<3x8xf64>, tensor<8x2xf64>) outs(%f32 : tensor<3x2xf64>) -> tensor<3x2xf64>
  %e23 = tensor.empty() : tensor<2x3xf64>
  %z = linalg.transpose ins(%zt : tensor<3x2xf64>) outs(%e23 : tensor<2x3xf64>) permutation = [1, 0]
  // softmax along the last dimension, max-subtracted
  %mx0 = linalg.fill ins(%ninf : f64) outs(%e2 : tensor<2xf64>) -> tensor<2xf64>
  %mx = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%z : tensor<2x3xf64>) outs(%mx0 : tensor<2xf64>) {
  ^bb0(%v: f64, %acc: f64):
    %m = arith.maximumf %acc, %v : f64
    linalg.yield %m : f64
  } -> tensor<2xf64>
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%z, %mx : tensor<2x3xf64>, tensor<2xf64>) outs(%e23 : tensor<2x3xf64>) {
  ^bb0(%v: f64, %m: f64, %o: f64):
    %d = arith.subf %v, %m : f64
    %e = math.exp %d : f64
    linalg.yield %e : f64
  } -> tensor<2x3xf64>
  %se = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<2x3xf64>) outs(%f2 : tensor<2xf64>) {
  ^bb0(%v: f64, %acc: f64):
    %a = arith.addf %acc, %v : f64
    linalg.yield %a : f64
  } -> tensor<2xf64>
  %sm = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %se : tensor<2x3xf64>, tensor<2xf64>) outs(%e23 : tensor<2x3xf64>) {
  ^bb0(%v: f64, %s: f64, %o: f64):
    %q = arith.divf %v, %s : f64
    linalg.yield %q : f64
  } -> tensor<2x3xf64>
  %f23 = linalg.fill ins(%cst0 : f64) outs(%e23 : tensor<2x3xf64>) -> tensor<2x3xf64>
  %out = linalg.matmul ins(%sm, %w3 : tensor<2x3xf64>, tensor<3x3xf64>) outs(%f23 : tensor<2x3xf64>) -> tensor<2x3xf64>
  return %out : tensor<2x3xf64>
}
