// RUN: qtrain-opt %s --qtrain-insert-quant="policy=none" --qtrain-insert-rounding="promotion=false" --qtrain-autodiff 2>/dev/null | FileCheck %s
// RUN: qtrain-opt %s --qtrain-insert-quant="policy=none" --qtrain-insert-rounding="promotion=false" --qtrain-autodiff 2>/dev/null | FileCheck %s --check-prefix=GONE

// The reverse-mode rule of qtrain.grad_round_float: the adjoint of its result
// is rounded to its format (qtrain.round_float, no saturation: backward
// formats overflow to inf) and flows on to its input. Each tensor has a
// format of its own here so that every rounding can be told apart: GY of
// the logits <5, 10, 0>, GY of the linear layer <5, 2, 0>, GP of the weight
// <8, 7, 0>. The qtrain.formats are written by hand, as
// qtrain-assign-precision would write them.

// No grad_round_float survives autodiff, in either function.
// GONE-NOT: qtrain.grad_round_float

// The evaluation step keeps the forward roundings only.
// CHECK-LABEL: func.func @eval_step(
//   CHECK-NOT:   grad_round_float
//       CHECK:   qtrain.round_float %{{.*}} to <4, 3, 4, saturate> role weight : tensor<3x5xf32>
//       CHECK:   return

// CHECK-LABEL: func.func @train_step(
//  CHECK-SAME:   %[[W:[^:]*]]: tensor<3x5xf32> {qtrain.param}, %{{[^:]*}}: tensor<3x5xf32>, %[[X:[^:]*]]: tensor<4x5xf32>,
//  CHECK-SAME:   %[[SCALE:[^:]*]]: tensor<1xf32> {qtrain.state = "loss_scale"}
// Forward: P and Y in their formats, saturating.
//   CHECK-DAG:   %[[RX:.*]] = qtrain.round_float %[[X]] to <6, 9, 0, saturate> role activation : tensor<4x5xf32>
//   CHECK-DAG:   %[[RW:.*]] = qtrain.round_float %[[W]] to <4, 3, 4, saturate> role weight : tensor<3x5xf32>
//       CHECK:   %[[H:.*]] = linalg.matmul {{.*}} ins(%[[RX]], %[[RW]] :
//  CHECK-NEXT:   %[[RH:.*]] = qtrain.round_float %[[H]] to <4, 3, 4, saturate> role activation : tensor<4x3xf32>
//  CHECK-NEXT:   %[[R:.*]] = linalg.generic {{.*}} ins(%[[RH]] :
//       CHECK:   %[[LOGITS:.*]] = qtrain.round_float %[[R]] to <6, 9, 0, saturate> role activation : tensor<4x3xf32>
// The loss gradient, times the loss scale, is GY of the logits.
//       CHECK:   %[[S:.*]] = tensor.extract %[[SCALE]]
//       CHECK:   %[[SCALED:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4x3xf32>)
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     arith.mulf %{{.*}}, %[[S]] : f32
//       CHECK:   %[[GLOGITS:.*]] = qtrain.round_float %[[SCALED]] to <5, 10, 0> role error : tensor<4x3xf32>
// ReLU backward reads the stored (rounded) Y of the layer; its result is GY
// of the layer.
//  CHECK-NEXT:   tensor.empty
//  CHECK-NEXT:   %[[DH:.*]] = linalg.generic {{.*}} ins(%[[RH]], %[[GLOGITS]] :
//       CHECK:   %[[GH:.*]] = qtrain.round_float %[[DH]] to <5, 2, 0> role error : tensor<4x3xf32>
// The weight gradient contracts the stored X with GY and is rounded to GP,
// then divided by the loss scale before the update.
//       CHECK:   %[[DW:.*]] = linalg.generic {{.*}} ins(%[[RX]], %[[GH]] :
//       CHECK:   %[[GW:.*]] = qtrain.round_float %[[DW]] to <8, 7, 0> role weight_grad : tensor<3x5xf32>
//  CHECK-NEXT:   tensor.empty
//  CHECK-NEXT:   %[[UNSCALED:.*]] = linalg.generic {{.*}} ins(%[[GW]] :
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     arith.divf %{{.*}}, %[[S]] : f32
//       CHECK:   linalg.generic {{.*}} ins(%[[W]], %[[UNSCALED]], %{{.*}} :
// No gradient of the data input, so its GY format is not used.
//   CHECK-NOT:   to <6, 9, 0> role error
//       CHECK:   return

#id = affine_map<(b, f) -> (b, f)>
func.func @forward(
    %w: tensor<3x5xf32> {qtrain.param, qtrain.formats = {p = #qtrain.float<4, 3, 4, saturate>, gp = #qtrain.float<8, 7, 0>}},
    %x: tensor<4x5xf32> {qtrain.formats = {y = #qtrain.float<6, 9, 0, saturate>, gy = #qtrain.float<6, 9, 0>}}) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x3xf32>) -> tensor<4x3xf32>
  %h = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      {qtrain.formats = {y = #qtrain.float<4, 3, 4, saturate>, gy = #qtrain.float<5, 2, 0>}}
      ins(%x, %w : tensor<4x5xf32>, tensor<3x5xf32>) outs(%fill : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x3xf32>) outs(%init : tensor<4x3xf32>)
      attrs = {qtrain.formats = {y = #qtrain.float<6, 9, 0, saturate>, gy = #qtrain.float<5, 10, 0>}} {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
