// RUN: qtrain-opt %s --qtrain-reassociate-sums -verify-diagnostics | FileCheck %s

// A bias gradient (an f32 sum over n and h*w): the accumulating addition
// is marked reassoc, so LLVM may keep vector partial sums.
#in = affine_map<(n, c, p) -> (n, c, p)>
#out = affine_map<(n, c, p) -> (c)>
// CHECK-LABEL: func.func @bias_grad
//       CHECK:   arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
func.func @bias_grad(%g: tensor<4x3x25xf32>, %init: tensor<3xf32>) -> tensor<3xf32> {
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel", "reduction"]} ins(%g : tensor<4x3x25xf32>) outs(%init : tensor<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// Left alone: integer sums (exact), f64 sums, elementwise additions (no
// reduction), and an accumulator used elsewhere in the body (its order
// matters in another way).
#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>
// CHECK-LABEL: func.func @left_alone
//   CHECK-NOT:   fastmath<reassoc>
//       CHECK:   return
func.func @left_alone(%x: tensor<8xi32>, %ix: tensor<i32>, %d: tensor<8xf64>, %id: tensor<f64>,
                      %f: tensor<8xf32>, %fe: tensor<8xf32>, %facc: tensor<f32>)
    -> (tensor<i32>, tensor<f64>, tensor<8xf32>, tensor<f32>) {
  %0 = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%x : tensor<8xi32>) outs(%ix : tensor<i32>) {
  ^bb0(%a: i32, %acc: i32):
    %s = arith.addi %acc, %a : i32
    linalg.yield %s : i32
  } -> tensor<i32>
  %1 = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%d : tensor<8xf64>) outs(%id : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %s = arith.addf %acc, %a : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%f : tensor<8xf32>) outs(%fe : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %3 = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%f : tensor<8xf32>) outs(%facc : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %0, %1, %2, %3 : tensor<i32>, tensor<f64>, tensor<8xf32>, tensor<f32>
}

// Bad input draws no diagnostic: a sum that yields something other than
// its addition (the addition is not the accumulation) stays as it is.
// CHECK-LABEL: func.func @not_an_accumulation
//   CHECK-NOT:   fastmath<reassoc>
//       CHECK:   return
func.func @not_an_accumulation(%f: tensor<8xf32>, %facc: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%f : tensor<8xf32>) outs(%facc : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    %m = arith.maximumf %s, %a : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
