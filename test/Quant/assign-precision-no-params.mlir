// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=1" 2>/dev/null | FileCheck %s
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=1" --qtrain-insert-rounding="loss-scale=false promotion=false" 2>/dev/null | FileCheck %s --check-prefix=ROUND

// Nothing in the input names the qtrain dialect (no {qtrain.param}), so the
// passes must load it themselves before they create #qtrain.float and
// qtrain ops (dependentDialects).

// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   tensor<4x3xf32> {qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 0 : i64}
//       CHECK:   linalg.generic {{.*}}qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 0 : i64

// ROUND-LABEL: func.func @forward
//  ROUND-SAME:   (%[[X:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
//       ROUND:   %[[RX:.*]] = qtrain.round_float %[[X]] to <4, 3, 4, saturate> role activation
//       ROUND:   %[[GX:.*]] = qtrain.grad_round_float %[[RX]] to <5, 2, 0> role error
//       ROUND:   linalg.generic {{.*}}ins(%[[GX]] :
#id = affine_map<(i, j) -> (i, j)>
func.func @forward(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
