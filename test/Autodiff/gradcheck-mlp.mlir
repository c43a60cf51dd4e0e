// Gradients of a two-layer MLP (transpose, bias broadcast, matmul in plain and
// transposed-B form, tanh) match central differences in f64.
// RUN: qtrain-opt %s --qtrain-autodiff -o %t.step.mlir
// RUN: qtrain-opt %t.step.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: %gradcheck %t.so %t.step.mlir | FileCheck %s

// CHECK: gradcheck: PASS

#id = affine_map<(b, f) -> (b, f)>
#bias = affine_map<(b, f) -> (f)>
func.func @forward(%w1: tensor<6x5xf64> {qtrain.param}, %b1: tensor<6xf64> {qtrain.param}, %w2: tensor<3x6xf64> {qtrain.param}, %x: tensor<4x5xf64>) -> tensor<4x3xf64> {
  %zero = arith.constant 0.0 : f64
  %w1t_init = tensor.empty() : tensor<5x6xf64>
  %w1t = linalg.transpose ins(%w1 : tensor<6x5xf64>) outs(%w1t_init : tensor<5x6xf64>) permutation = [1, 0]
  %h_init = tensor.empty() : tensor<4x6xf64>
  %hb = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]} ins(%b1 : tensor<6xf64>) outs(%h_init : tensor<4x6xf64>) {
  ^bb0(%b: f64, %o: f64):
    linalg.yield %b : f64
  } -> tensor<4x6xf64>
  %h = linalg.matmul ins(%x, %w1t : tensor<4x5xf64>, tensor<5x6xf64>) outs(%hb : tensor<4x6xf64>) -> tensor<4x6xf64>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<4x6xf64>) outs(%h_init : tensor<4x6xf64>) {
  ^bb0(%v: f64, %o: f64):
    %t = math.tanh %v : f64
    linalg.yield %t : f64
  } -> tensor<4x6xf64>
  %l_init = tensor.empty() : tensor<4x3xf64>
  %lz = linalg.fill ins(%zero : f64) outs(%l_init : tensor<4x3xf64>) -> tensor<4x3xf64>
  %l = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%a, %w2 : tensor<4x6xf64>, tensor<3x6xf64>) outs(%lz : tensor<4x3xf64>) -> tensor<4x3xf64>
  return %l : tensor<4x3xf64>
}
