// RUN: qtrain-opt %s -split-input-file --remarks-filter="qtrain-.*" --qtrain-autodiff 2>&1 | FileCheck %s

// Regression: a sum over k of a term that depends on the parameter only
// through a comparison (a step function) has a zero derivative. The
// gradient op then read nothing but the adjoint (b, c) and wrote the
// gradient (c), so no operand sized the k loop and qtrain-autodiff built a
// linalg.generic that failed verification ("expected the shape-to-loops
// map to be non-null"). The parameter now gets no gradient from the op: a
// zero gradient, said by a remark.
// CHECK: remark: {{.*}}parameter #0 does not affect the loss; its gradient is zero
// CHECK-LABEL: func.func @train_step
//  CHECK-NOT:   error
//       CHECK:   linalg.fill
//       CHECK:   return
#in = affine_map<(b, c, k) -> (b, c, k)>
#w = affine_map<(b, c, k) -> (c)>
#out = affine_map<(b, c, k) -> (b, c)>
func.func @forward(%w: tensor<2xf32> {qtrain.param}, %x: tensor<2x2x3xf32>) -> tensor<2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<2x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<2x2xf32>) -> tensor<2x2xf32>
  %count = linalg.generic {indexing_maps = [#w, #in, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%w, %x : tensor<2xf32>, tensor<2x2x3xf32>) outs(%fill : tensor<2x2xf32>) {
  ^bb0(%wc: f32, %v: f32, %acc: f32):
    %one = arith.constant 1.0 : f32
    %above = arith.cmpf ogt, %v, %wc : f32
    %step = arith.select %above, %one, %zero : f32
    %sum = arith.addf %acc, %step : f32
    linalg.yield %sum : f32
  } -> tensor<2x2xf32>
  return %count : tensor<2x2xf32>
}

// -----

// A nonzero derivative whose gradient op reads neither input: d/dw of
// sum_k 2 w[c] is 2 * 3 * dY summed over the batch. The input %x sizes the
// k loop only, and stays an operand of the gradient op although its body
// does not read it.
// CHECK-LABEL: func.func @train_step
//  CHECK-SAME:   (%[[W:.*]]: tensor<2xf32> {qtrain.param}, %{{.*}}: tensor<2xf32>, %[[X:.*]]: tensor<2x2x3xf32>,
//       CHECK:   %[[DW:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["reduction", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[X]], %{{.*}} : tensor<2x2x3xf32>, tensor<2x2xf32>)
//  CHECK-NEXT:   ^bb0(%{{.*}}: f32, %[[DY:.*]]: f32, %[[ACC:.*]]: f32):
//  CHECK-NEXT:     %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
//  CHECK-NEXT:     %[[P:.*]] = arith.mulf %[[TWO]], %[[DY]] : f32
//  CHECK-NEXT:     %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
//  CHECK-NEXT:     linalg.yield %[[S]] : f32
#in = affine_map<(b, c, k) -> (b, c, k)>
#w = affine_map<(b, c, k) -> (c)>
#out = affine_map<(b, c, k) -> (b, c)>
func.func @forward(%w: tensor<2xf32> {qtrain.param}, %x: tensor<2x2x3xf32>) -> tensor<2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<2x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<2x2xf32>) -> tensor<2x2xf32>
  %sums = linalg.generic {indexing_maps = [#w, #in, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%w, %x : tensor<2xf32>, tensor<2x2x3xf32>) outs(%fill : tensor<2x2xf32>) {
  ^bb0(%wc: f32, %v: f32, %acc: f32):
    %two = arith.constant 2.0 : f32
    %t = arith.mulf %wc, %two : f32
    %sum = arith.addf %acc, %t : f32
    linalg.yield %sum : f32
  } -> tensor<2x2xf32>
  return %sums : tensor<2x2xf32>
}
