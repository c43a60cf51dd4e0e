// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --remarks-filter="qtrain-.*" --qtrain-infer-roles | FileCheck %s

// A joint forward/backward graph as aot_autograd produces it: the tangent of
// the output starts the backward pass; the weight gradient is a marked result.
// CHECK-LABEL: func.func @train_step
//       CHECK:   linalg.transpose {{.*}} {qtrain.role = #qtrain<role weight>}
//       CHECK:   linalg.matmul {qtrain.role = #qtrain<role activation>}
//       CHECK:   linalg.generic {{.*}} attrs = {qtrain.role = #qtrain<role activation>}
//       CHECK:   linalg.generic {{.*}} attrs = {qtrain.role = #qtrain<role error>}
//       CHECK:   linalg.generic {{.*}} attrs = {qtrain.role = #qtrain<role weight_grad>}
//       CHECK:   linalg.matmul {qtrain.role = #qtrain<role error>}
#id = affine_map<(m, n) -> (m, n)>
// expected-remark @+1 {{roles: 1 weight, 2 activation, 2 error, 1 weight_grad}}
func.func @train_step(%w: tensor<3x5xf32> {qtrain.param}, %x: tensor<4x5xf32>,
                      %g: tensor<4x3xf32> {qtrain.role = #qtrain<role error>})
    -> (tensor<4x3xf32>, tensor<3x5xf32> {qtrain.role = #qtrain<role weight_grad>}, tensor<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %wt_init = tensor.empty() : tensor<5x3xf32>
  %wt = linalg.transpose ins(%w : tensor<3x5xf32>) outs(%wt_init : tensor<5x3xf32>) permutation = [1, 0]
  %init = tensor.empty() : tensor<4x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<4x5xf32>, tensor<5x3xf32>) outs(%fill : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x3xf32>) outs(%init : tensor<4x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x3xf32>
  // backward: relu mask, dW = mask^T x, dX = mask w
  %mask = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %g : tensor<4x3xf32>, tensor<4x3xf32>) outs(%init : tensor<4x3xf32>) {
  ^bb0(%v: f32, %d: f32, %o: f32):
    %pos = arith.cmpf ogt, %v, %zero : f32
    %s = arith.select %pos, %d, %zero : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %dw_init = tensor.empty() : tensor<3x5xf32>
  %dw_fill = linalg.fill ins(%zero : f32) outs(%dw_init : tensor<3x5xf32>) -> tensor<3x5xf32>
  %dw = linalg.generic {indexing_maps = [affine_map<(n, k, m) -> (m, n)>, affine_map<(n, k, m) -> (m, k)>, affine_map<(n, k, m) -> (n, k)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%mask, %x : tensor<4x3xf32>, tensor<4x5xf32>) outs(%dw_fill : tensor<3x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x5xf32>
  %dx_init = tensor.empty() : tensor<4x5xf32>
  %dx_fill = linalg.fill ins(%zero : f32) outs(%dx_init : tensor<4x5xf32>) -> tensor<4x5xf32>
  %dx = linalg.matmul ins(%mask, %w : tensor<4x3xf32>, tensor<3x5xf32>) outs(%dx_fill : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %r, %dw, %dx : tensor<4x3xf32>, tensor<3x5xf32>, tensor<4x5xf32>
}

// -----

// Without a marked result, the gradient is found where the optimizer update
// reads it together with the parameter.
// CHECK-LABEL: func.func @train_step
//       CHECK:   %[[G:.*]] = linalg.generic {{.*}} attrs = {qtrain.role = #qtrain<role weight_grad>}
//       CHECK:   linalg.generic {{.*}} ins(%{{.*}}, %[[G]] :
#id1 = affine_map<(i) -> (i)>
// expected-remark @+1 {{roles: 0 weight, 0 activation, 1 error, 1 weight_grad}}
func.func @train_step(%p: tensor<8xf32> {qtrain.param}, %g: tensor<8xf32> {qtrain.role = #qtrain<role error>}, %lr: f32) -> tensor<8xf32> {
  %init = tensor.empty() : tensor<8xf32>
  %grad = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%g : tensor<8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%d: f32, %o: f32):
    %t = arith.addf %d, %d : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %new = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%p, %grad : tensor<8xf32>, tensor<8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %b, %lr : f32
    %n = arith.subf %a, %s : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  return %new : tensor<8xf32>
}

// -----

// expected-error @+1 {{qtrain-infer-roles: @train_step needs parameters ({qtrain.param}) and the gradient that starts its backward pass (an argument with {qtrain.role = #qtrain<role error>})}}
func.func @train_step(%p: tensor<8xf32> {qtrain.param}) -> tensor<8xf32> {
  return %p : tensor<8xf32>
}

// -----

// expected-error @+1 {{qtrain-infer-roles: no function @train_step with a body of one block (set entry=<name>)}}
module {
  func.func private @train_step(%p: tensor<8xf32>) -> tensor<8xf32>
}
