// Two quantized layers chained directly (no bias or activation between) and
// a weight shared by both (tied, one transpose): each product's variants
// read the dispatched result of the product before it, the shared weight is
// quantized once, and the module still lowers.
// RUN: qtrain-opt %s --qtrain-insert-quant --qtrain-autodiff --qtrain-form-kernels --qtrain-materialize-variants="bits=4,8" -o %t.mlir 2>/dev/null
// RUN: FileCheck %s < %t.mlir
// RUN: qtrain-opt %t.mlir --qtrain-lower-cpu -o /dev/null

// CHECK: qtrain.sites = [{{.*}}name = "site0"{{.*}}name = "site1"
// CHECK-LABEL: func.func @train_step
//       CHECK:   %[[H:.*]] = scf.index_switch
//       CHECK:     func.call @train_step_site0_forward_b0(
//       CHECK:   scf.index_switch
//       CHECK:     func.call @train_step_site1_forward_b0({{.*}}%[[H]]
// The tied weight has one quantizer, per channel, in each forward variant.
// CHECK-LABEL: func.func @train_step_site1_forward_b4
//   CHECK-NOT:   role weight rounding nearest_even granularity<per_tensor>
//       CHECK:   role weight rounding nearest_even granularity<per_channel, axis = 0>
//   CHECK-NOT:   role weight
//       CHECK:   linalg.matmul
func.func @forward(%w: tensor<6x6xf32> {qtrain.param}, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %wt_init = tensor.empty() : tensor<6x6xf32>
  %wt = linalg.transpose ins(%w : tensor<6x6xf32>) outs(%wt_init : tensor<6x6xf32>) permutation = [1, 0]
  %init = tensor.empty() : tensor<4x6xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %h = linalg.matmul ins(%x, %wt : tensor<4x6xf32>, tensor<6x6xf32>) outs(%fill : tensor<4x6xf32>) -> tensor<4x6xf32>
  %y = linalg.matmul ins(%h, %wt : tensor<4x6xf32>, tensor<6x6xf32>) outs(%fill : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}
