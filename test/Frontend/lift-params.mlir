// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --remarks-filter="qtrain-.*" --qtrain-lift-params | FileCheck %s
// RUN: qtrain-opt %s -split-input-file --qtrain-lift-params="reinit=true" 2>/dev/null | FileCheck %s --check-prefix=REINIT
// RUN: qtrain-opt %s -split-input-file --qtrain-lift-params="min-elements=5" 2>/dev/null | FileCheck %s --check-prefix=MIN5

// An export: the weights become parameters before the input, in the order
// the graph first uses them (the bias fills the matmul's init before the
// matmul reads the weight), and keep their values as qtrain.init. The zero
// fill and the scalars stay constants.
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   (%[[B:.*]]: tensor<2xf32> {qtrain.init = dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>, qtrain.param},
//  CHECK-SAME:    %[[W:.*]]: tensor<3x2xf32> {qtrain.init = dense_resource<fc_w> : tensor<3x2xf32>, qtrain.param},
//  CHECK-SAME:    %[[X:.*]]: tensor<1x3xf32>) -> tensor<1x2xf32>
//   CHECK-NOT:   arith.constant dense_resource
//       CHECK:   %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<2xf32>
//       CHECK:   linalg.generic {{.*}} ins(%[[B]], %[[ZERO]] : tensor<2xf32>, tensor<2xf32>)
//       CHECK:   linalg.matmul ins(%[[X]], %[[W]] : tensor<1x3xf32>, tensor<3x2xf32>)
// The values stay in the resource section, referenced from qtrain.init.
//       CHECK: dialect_resources
//       CHECK:   fc_w: "0x040000000000803F000000400000404000008040
// reinit records no initial value but PyTorch's default initialization,
// with the fan-in of the matmul the bias initializes (K = 3).
// REINIT-LABEL: func.func @forward
//  REINIT-SAME:   (%{{.*}}: tensor<2xf32> {qtrain.fresh_init = {fan_in = 3 : i64, kind = "bias_uniform"}, qtrain.param},
//  REINIT-SAME:    %{{.*}}: tensor<3x2xf32> {qtrain.fresh_init = {fan_in = 3 : i64, kind = "kaiming_uniform"}, qtrain.param}, %{{.*}}: tensor<1x3xf32>)
//   REINIT-NOT:   dialect_resources
// min-elements=5 keeps the 2-element bias a constant.
// MIN5-LABEL: func.func @forward
//  MIN5-SAME:   (%{{.*}}: tensor<3x2xf32> {qtrain.init = dense_resource<fc_w> : tensor<3x2xf32>, qtrain.param}, %{{.*}}: tensor<1x3xf32>)
//       MIN5:   arith.constant dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>
#bias = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @forward(%x: tensor<1x3xf32>) -> tensor<1x2xf32> {
  %one = arith.constant 1.0 : f32
  %single = arith.constant dense<2.0> : tensor<1xf32>
  // expected-remark @+1 {{lifted constant #1 (dense_resource<fc_w> : tensor<3x2xf32>) into parameter %arg1}}
  %w = arith.constant dense_resource<fc_w> : tensor<3x2xf32>
  // expected-remark @+1 {{lifted constant #2 (tensor<2xf32>) into parameter %arg0}}
  %b = arith.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %zero = arith.constant dense<0.0> : tensor<2xf32>
  %e = tensor.empty() : tensor<1x2xf32>
  %init = linalg.generic {indexing_maps = [#bias, #bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b, %zero : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%v: f32, %z: f32, %o: f32):
    %s = arith.addf %v, %z : f32
    linalg.yield %s : f32
  } -> tensor<1x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<1x3xf32>, tensor<3x2xf32>) outs(%init : tensor<1x2xf32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      fc_w: "0x040000000000803F00000040000040400000804000000000000000BF"
    }
  }
#-}

// -----

// A constant used twice is one parameter; a dead one is left alone.
// Parameters already present stay first, the lifted ones follow them, and
// the inputs keep their order.
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   (%[[P:.*]]: tensor<2x2xf32> {qtrain.param},
//  CHECK-SAME:    %[[C:.*]]: tensor<2x2xf32> {qtrain.init = dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>, qtrain.param},
//  CHECK-SAME:    %[[X:.*]]: tensor<2x2xf32>, %[[Y:.*]]: tensor<2x2xf32>)
//       CHECK:   arith.constant dense<{{\[}}[5.000000e+00, 6.000000e+00], [7.000000e+00, 8.000000e+00]]>
//       CHECK:   linalg.add ins(%[[X]], %[[C]] :
//       CHECK:   linalg.add ins(%{{.*}}, %[[C]] :
//       CHECK:   linalg.add ins(%{{.*}}, %[[P]] :
//       CHECK:   linalg.add ins(%{{.*}}, %[[Y]] :
func.func @forward(%p: tensor<2x2xf32> {qtrain.param}, %x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-remark @+1 {{lifted constant #0 (tensor<2x2xf32>) into parameter %arg1}}
  %c = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %dead = arith.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %0 = linalg.add ins(%x, %c : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = linalg.add ins(%0, %c : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = linalg.add ins(%1, %p : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %3 = linalg.add ins(%2, %y : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %3 : tensor<2x2xf32>
}

// -----

// A hand-written forward graph with parameters and nothing to lift is left
// as it is; so are integer constants and other functions.
// CHECK-LABEL: func.func @helper
//       CHECK:   arith.constant dense<[1.000000e+00, 2.000000e+00]>
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   (%{{.*}}: tensor<2xf32> {qtrain.param}, %{{.*}}: tensor<2xf32>)
//       CHECK:   arith.constant dense<0> : tensor<2xi64>
func.func @helper() -> tensor<2xf32> {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %c : tensor<2xf32>
}
func.func @forward(%w: tensor<2xf32> {qtrain.param}, %x: tensor<2xf32>) -> tensor<2xf32> {
  %idx = arith.constant dense<0> : tensor<2xi64>
  %e = tensor.empty() : tensor<2xf32>
  %0 = linalg.add ins(%x, %w : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
