// RUN: qtrain-opt %s --qtrain-insert-quant="grad-format=e5m2" | FileCheck %s
// RUN: qtrain-opt %s --qtrain-insert-quant="grad-format=e5m2" --qtrain-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: qtrain-opt %s --qtrain-insert-quant | FileCheck %s --check-prefix=INT
// RUN: not qtrain-opt %s --qtrain-insert-quant="grad-format=e5m2 grad-bits=6" 2>&1 | FileCheck %s --check-prefix=BITS
// RUN: not qtrain-opt %s --qtrain-insert-quant="grad-format=e4m3" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not qtrain-opt %s --qtrain-insert-quant="grad-format=e5m2 policy=none" 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: qtrain-opt %s --qtrain-insert-quant="grad-format=e5m2" | not qtrain-opt --qtrain-insert-quant="grad-format=e5m2" 2>&1 | FileCheck %s --check-prefix=TWICE

// CPT's fp8 backward (issue #24): the error entering the layer's backward
// pass is rounded to e5m2, scaled per tensor, in place of CPT's integer grid;
// weights and activations keep their fixed-point quantizers.
// CHECK: module attributes {qtrain.grad_format = "e5m2", qtrain.grad_schedule = #qtrain.static<8>
// CHECK-LABEL: func.func @forward
//   CHECK-DAG:   qtrain.fake_quant %{{.*}}, %{{.*}} role weight rounding nearest_even granularity<per_channel, axis = 0>
//   CHECK-DAG:   qtrain.fake_quant %{{.*}}, %{{.*}} role activation rounding nearest_even granularity<per_tensor>
//       CHECK:   %[[Y:.*]] = linalg.matmul {qtrain.layer = 0 : i64, qtrain.product = "forward"}
//       CHECK:   %[[E:.*]] = qtrain.grad_round_float %[[Y]] to <5, 2, 0> scaled(5.734400e+04) role error : tensor<4x3xf32>
//   CHECK-NOT:   qtrain.grad_quant
//       CHECK:   return %[[E]]

// Reverse mode rounds the adjoint of the layer's output, and the weight
// gradient reads it (the input is data: no input gradient).
// GRAD-LABEL: func.func @train_step
//       GRAD:   %[[DE:.*]] = qtrain.round_float %{{.*}} to <5, 2, 0> scaled(5.734400e+04) role error : tensor<4x3xf32>
//       GRAD:   linalg.generic {{.*}} ins(%{{.*}}, %[[DE]] : {{.*}} qtrain.product = "weight_grad"
//   GRAD-NOT:   qtrain.fake_quant {{.*}} role error

// INT-NOT: qtrain.grad_format
// INT: qtrain.grad_quant

// BITS: error: qtrain-insert-quant: grad-format=e5m2 is the 8-bit backward in fp8; grad-bits must be 8, got 6
// FORMAT: error: qtrain-insert-quant: unknown grad-format 'e4m3' (expected int or e5m2)
// NONE: error: qtrain-insert-quant: grad-format=e5m2 quantizes the errors of a quantized policy; policy=none has none
// TWICE: error: qtrain-insert-quant: @forward is already quantized
func.func @forward(%w: tensor<3x5xf32> {qtrain.param}, %x: tensor<4x5xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %wt_init = tensor.empty() : tensor<5x3xf32>
  %wt = linalg.transpose ins(%w : tensor<3x5xf32>) outs(%wt_init : tensor<5x3xf32>) permutation = [1, 0]
  %init = tensor.empty() : tensor<4x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<4x5xf32>, tensor<5x3xf32>) outs(%fill : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
