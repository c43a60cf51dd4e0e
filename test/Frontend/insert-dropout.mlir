// RUN: qtrain-opt %s --split-input-file --qtrain-insert-dropout --remarks-filter="qtrain-.*" 2>&1 | FileCheck %s
// RUN: qtrain-opt %s --split-input-file --qtrain-insert-dropout --qtrain-autodiff | FileCheck %s --check-prefix=STEP

// A dropout mark (what qtrain-import-torch writes for nn.Dropout) becomes
// qtrain.dropout on the seed and step controls, one stream per site.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @forward(%w: tensor<4x6xf32> {qtrain.param}, %x: tensor<8x4xf32>,
                   %bits: i32 {qtrain.control = "bits"}, %gb: i32 {qtrain.control = "grad_bits"},
                   %seed: i64 {qtrain.control = "seed"}, %step: i32 {qtrain.control = "step"})
    -> tensor<8x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%init : tensor<8x6xf32>) -> tensor<8x6xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"], qtrain.dropout = 2.500000e-01 : f64}
      ins(%y : tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8x6xf32>
  %d2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"], qtrain.dropout = 5.000000e-01 : f64}
      ins(%d : tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8x6xf32>
  return %d2 : tensor<8x6xf32>
}
// CHECK: remark: {{.*}}Remark="dropout #0 (p = 2.500000e-01) trains with a Philox mask of stream 1146093568; evaluation skips it"
// CHECK: remark: {{.*}}Remark="dropout #1 (p = 5.000000e-01) trains with a Philox mask of stream 1146093569
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[SEED:[a-z0-9]+]]: i64 {qtrain.control = "seed"}, %[[STEPARG:[a-z0-9]+]]: i32 {qtrain.control = "step"})
// CHECK: %[[Y:.*]] = linalg.matmul
// CHECK: %[[D:.*]] = qtrain.dropout %[[Y]] seed(%[[SEED]], %[[STEPARG]]) {p = 2.500000e-01 : f64, stream = 1146093568 : i64} : tensor<8x6xf32>
// CHECK: %[[D2:.*]] = qtrain.dropout %[[D]] seed(%[[SEED]], %[[STEPARG]]) {p = 5.000000e-01 : f64, stream = 1146093569 : i64}
// CHECK-NOT: qtrain.dropout =
// CHECK: return %[[D2]]

// The evaluation step has no dropout; the training step masks the forward
// value and the gradient with the same op (seed, step, stream).
// STEP-LABEL: func.func @eval_step(
// STEP-NOT: qtrain.dropout
// STEP: return
// STEP-LABEL: func.func @train_step(
// STEP: qtrain.dropout %{{.*}} seed(%[[S:[a-z0-9]+]], %[[T:[a-z0-9]+]]) {p = 2.500000e-01 : f64, qtrain.role = #qtrain<role activation>, stream = 1146093568 : i64}
// STEP: qtrain.dropout %{{.*}} seed(%[[S]], %[[T]]) {p = 5.000000e-01 : f64, qtrain.role = #qtrain<role activation>, stream = 1146093569 : i64}
// STEP: qtrain.dropout %{{.*}} seed(%[[S]], %[[T]]) {p = 5.000000e-01 : f64, qtrain.role = #qtrain<role error>, stream = 1146093569 : i64}
// STEP: qtrain.dropout %{{.*}} seed(%[[S]], %[[T]]) {p = 2.500000e-01 : f64, qtrain.role = #qtrain<role error>, stream = 1146093568 : i64}
// STEP: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<8x6xf32>) {{.*}}role weight_grad
