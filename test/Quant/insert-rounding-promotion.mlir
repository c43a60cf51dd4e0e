// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=1" --qtrain-insert-quant=policy=none --qtrain-insert-rounding 2>/dev/null | FileCheck %s
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=0" --qtrain-insert-quant=policy=none --qtrain-insert-rounding 2>/dev/null | FileCheck %s --check-prefix=HIGH

// Run-time promotion (PAPERS.md section 4): every forward rounding of P or Y
// to a low format also has the high FP(6,9,0), picked by a flag of the
// "promotion" state; the ratio of its elements that overflow the low format
// leaves the step in the "overflow" state, in the same order, named by
// qtrain.tensors.
// CHECK-LABEL: func.func @forward(
//  CHECK-SAME:   %[[W:[^:]*]]: tensor<3x5xf32> {qtrain.param}, %[[X:[^:]*]]: tensor<4x5xf32>,
//  CHECK-SAME:   %{{[^:]*}}: tensor<1xf32> {qtrain.state = "loss_scale"},
//  CHECK-SAME:   %[[FLAGS:[^:]*]]: tensor<3xf32> {qtrain.state = "promotion", qtrain.tensors = ["P of argument 0", "Y of argument 1", "Y of matmul at insert-rounding-promotion.mlir:[[#MATMUL:]]"]},
//  CHECK-SAME:   %[[OLD:[^:]*]]: tensor<3xf32> {qtrain.state = "overflow", qtrain.tensors = ["P of argument 0", "Y of argument 1", "Y of matmul at insert-rounding-promotion.mlir:[[#MATMUL]]"]})
// The data is rounded at the start, the weight right before its first
// reader (the transpose).
//       CHECK:   %[[I1:.*]] = arith.constant 1 : index
//  CHECK-NEXT:   %[[F1:.*]] = tensor.extract %[[FLAGS]][%[[I1]]] : tensor<3xf32>
//  CHECK-NEXT:   %[[Z1:.*]] = arith.constant 0.000000e+00 : f32
//  CHECK-NEXT:   %[[P1:.*]] = arith.cmpf one, %[[F1]], %[[Z1]] : f32
//  CHECK-NEXT:   %[[RX:.*]] = qtrain.round_float %[[X]] to <4, 3, 4, saturate> or <6, 9, 0, saturate> if %[[P1]] role activation : tensor<4x5xf32>
//  CHECK-NEXT:   %[[NX:.*]] = qtrain.count_overflow %[[X]] for <4, 3, 4, saturate> : tensor<4x5xf32>
//  CHECK-NEXT:   %[[FX:.*]] = arith.sitofp %[[NX]] : i64 to f32
//  CHECK-NEXT:   %[[EX:.*]] = arith.constant 2.000000e+01 : f32
//  CHECK-NEXT:   %[[RATIOX:.*]] = arith.divf %[[FX]], %[[EX]] : f32
//       CHECK:   %[[GW:.*]] = qtrain.grad_round_float %[[W]] to <6, 9, 0> role weight_grad
//       CHECK:   qtrain.round_float %[[GW]] to <4, 3, 4, saturate> or <6, 9, 0, saturate> if %{{.*}} role weight
//  CHECK-NEXT:   %[[NW:.*]] = qtrain.count_overflow %[[GW]] for <4, 3, 4, saturate> : tensor<3x5xf32>
//       CHECK:   %[[RATIOW:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
//       CHECK:   linalg.transpose
//       CHECK:   %[[Y:.*]] = linalg.matmul
//       CHECK:   qtrain.round_float %[[Y]] to <4, 3, 4, saturate> or <6, 9, 0, saturate> if %{{.*}} role activation
//  CHECK-NEXT:   qtrain.count_overflow %[[Y]] for <4, 3, 4, saturate> : tensor<4x3xf32>
//       CHECK:   %[[RATIOY:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
//       CHECK:   %[[RATIOS:.*]] = tensor.from_elements %[[RATIOW]], %[[RATIOX]], %[[RATIOY]] : tensor<3xf32>
//  CHECK-NEXT:   return %{{.*}}, %{{.*}}, %[[FLAGS]], %[[RATIOS]] :

// All high: nothing to promote, no promotion state.
// HIGH-NOT: qtrain.state = "promotion"
// HIGH-NOT: count_overflow

func.func @forward(%w: tensor<3x5xf32> {qtrain.param}, %x: tensor<4x5xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<5x3xf32>
  %wt = linalg.transpose ins(%w : tensor<3x5xf32>) outs(%e : tensor<5x3xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<4x5xf32>, tensor<5x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
