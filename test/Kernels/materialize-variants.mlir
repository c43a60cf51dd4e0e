// RUN: qtrain-opt %s --qtrain-autodiff --qtrain-form-kernels --qtrain-materialize-variants="bits=4,8 grad-bits=8" -verify-diagnostics --remarks-filter="qtrain-.*" | FileCheck %s
// RUN: qtrain-opt %s --qtrain-autodiff --qtrain-form-kernels --qtrain-materialize-variants="bits=3:5 grad-bits=6:8 fp32=false" 2>/dev/null | FileCheck %s --check-prefix=RANGE

// A linear layer quantized by qtrain-insert-quant (forward op tagged as site
// 0). Variants: (0, 0), (4, 8), (8, 8); the site list goes on the module.
// CHECK: qtrain.sites = [{macs = 60 : i64, name = "site0", op = "linalg.matmul", variants = [array<i32: 0, 0>, array<i32: 4, 8>, array<i32: 8, 8>]}]
// The step takes the slots after its controls and state, before the labels.
// CHECK-LABEL: func.func @train_step
//  CHECK-SAME:   %[[SLOTS:[^ ]*]]: tensor<1xi32> {qtrain.control = "slots"}, %{{.*}}: tensor<4xi64>
// The forward product dispatches on slot 0.
//       CHECK:   %[[C0:.*]] = arith.constant 0 : index
//       CHECK:   %[[SLOT:.*]] = tensor.extract %[[SLOTS]][%[[C0]]]
//       CHECK:   %[[IDX:.*]] = arith.index_cast %[[SLOT]] : i32 to index
//       CHECK:   scf.index_switch %[[IDX]] -> tensor<4x3xf32>
//       CHECK:   case 0 {
//       CHECK:     func.call @train_step_site0_forward_b0(
//       CHECK:   case 1 {
//       CHECK:     func.call @train_step_site0_forward_b4(
//       CHECK:   case 2 {
//       CHECK:     func.call @train_step_site0_forward_b8(
//       CHECK:   default {
//       CHECK:     func.call @train_step_site0_forward_b0(
// The weight gradient dispatches on the same slot.
//       CHECK:   func.call @train_step_site0_weight_grad_b4_g8(
// Each variant has its precisions as constants, in its quantizers.
// CHECK-LABEL: func.func @train_step_site0_forward_b4
//  CHECK-SAME:   attributes {qtrain.variant = #qtrain.variant<site = 0, product = forward, bits = 4, grad_bits = 0>}
//       CHECK:   %[[B4:.*]] = arith.constant 4 : i32
//       CHECK:   qtrain.fake_quant %{{.*}}, %[[B4]] role weight
//       CHECK:   qtrain.fake_quant %{{.*}}, %[[B4]] role activation
//       CHECK:   linalg.matmul
// CHECK-LABEL: func.func @train_step_site0_weight_grad_b8_g8
//       CHECK:   %[[B8:.*]] = arith.constant 8 : i32
//       CHECK:   %[[G8:.*]] = arith.constant 8 : i32
//   CHECK-DAG:   qtrain.fake_quant %{{.*}}, %[[G8]] role error rounding stochastic
//   CHECK-DAG:   qtrain.fake_quant %{{.*}}, %[[B8]] role activation

// RANGE: variants = [array<i32: 3, 6>, array<i32: 3, 7>, array<i32: 3, 8>, array<i32: 4, 6>, array<i32: 4, 7>, array<i32: 4, 8>, array<i32: 5, 6>, array<i32: 5, 7>, array<i32: 5, 8>]
// RANGE-NOT: _b0
module attributes {qtrain.grad_schedule = #qtrain.static<8>, qtrain.schedule = #qtrain.cyclic<shape = cosine, min = 3, max = 8, cycles = 32, period = floor>} {
  func.func @forward(%w: tensor<3x5xf32> {qtrain.param}, %x: tensor<4x5xf32>, %bits: i32 {qtrain.control = "bits"}, %gbits: i32 {qtrain.control = "grad_bits"}, %seed: i64 {qtrain.control = "seed"}, %step: i32 {qtrain.control = "step"}) -> tensor<4x3xf32> {
    %zero = arith.constant 0.0 : f32
    %wq = qtrain.fake_quant %w, %bits role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<3x5xf32>
    %xq = qtrain.fake_quant %x, %bits role activation rounding nearest_even granularity<per_tensor> : tensor<4x5xf32>
    %wt_init = tensor.empty() : tensor<5x3xf32>
    %wt = linalg.transpose ins(%wq : tensor<3x5xf32>) outs(%wt_init : tensor<5x3xf32>) permutation = [1, 0]
    %init = tensor.empty() : tensor<4x3xf32>
    %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x3xf32>) -> tensor<4x3xf32>
    // expected-remark @below {{site 0 (linalg.matmul, 60 MACs): 3 precisions}}
    %y = linalg.matmul {qtrain.layer = 0 : i64, qtrain.product = "forward"} ins(%xq, %wt : tensor<4x5xf32>, tensor<5x3xf32>) outs(%fill : tensor<4x3xf32>) -> tensor<4x3xf32>
    %e = qtrain.grad_quant %y, %gbits rounding stochastic seed(%seed, %step) : tensor<4x3xf32>
    return %e : tensor<4x3xf32>
  }
}
