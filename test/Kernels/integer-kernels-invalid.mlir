// RUN: qtrain-opt %s -split-input-file --qtrain-integer-kernels -verify-diagnostics --remarks-filter="qtrain-.*" | FileCheck %s
// RUN: not qtrain-opt %s -split-input-file --qtrain-integer-kernels="f64-reference" 2>&1 | FileCheck %s --check-prefix=REF

// Products the pass cannot make integer stay f32, each with a remark that
// says why; the f64 reference refuses dynamic shapes outright.

// CHECK-LABEL: func.func @dynamic_b4
//  CHECK-SAME:   kernel = f32
// REF: error: qtrain-integer-kernels: f64-reference: the product is not a multiply-accumulate of two operands with a static shape
func.func @dynamic_b4(%x: tensor<?x16xf32>, %w: tensor<16x4xf32>, %init: tensor<?x4xf32>) -> tensor<?x4xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 0, product = forward, bits = 4, grad_bits = 0>} {
  %b = arith.constant 4 : i32
  %xq = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<?x16xf32>
  %wq = qtrain.fake_quant %w, %b role weight rounding nearest_even granularity<per_tensor> : tensor<16x4xf32>
  // expected-remark @below {{site 0 forward stays f32: dynamic shapes}}
  %y = linalg.matmul {qtrain.layer = 0 : i64, qtrain.product = "forward"} ins(%xq, %wq : tensor<?x16xf32>, tensor<16x4xf32>) outs(%init : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// An operand that is not quantized.
// CHECK-LABEL: func.func @unquantized_b4
//  CHECK-SAME:   kernel = f32
func.func @unquantized_b4(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %init: tensor<8x4xf32>) -> tensor<8x4xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 1, product = forward, bits = 4, grad_bits = 0>} {
  %b = arith.constant 4 : i32
  %xq = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<8x16xf32>
  // expected-remark @below {{site 1 forward stays f32: an operand is not an integer-grid quantizer seen through zero padding and transposes}}
  %y = linalg.matmul {qtrain.layer = 1 : i64, qtrain.product = "forward"} ins(%xq, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// A product that is not a multiply-accumulate (a max-reduction).
// CHECK-LABEL: func.func @not_mac_b4
//  CHECK-SAME:   kernel = f32
func.func @not_mac_b4(%x: tensor<8x16xf32>, %w: tensor<8x16xf32>, %init: tensor<8xf32>) -> tensor<8xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 2, product = forward, bits = 4, grad_bits = 0>} {
  %b = arith.constant 4 : i32
  %xq = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<8x16xf32>
  %wq = qtrain.fake_quant %w, %b role weight rounding nearest_even granularity<per_tensor> : tensor<8x16xf32>
  // expected-remark @below {{site 2 forward stays f32: not a multiply-accumulate of two operands}}
  %y = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>],
                       iterator_types = ["parallel", "reduction"]} {qtrain.layer = 2 : i64, qtrain.product = "forward"}
      ins(%xq, %wq : tensor<8x16xf32>, tensor<8x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.maximumf %a, %c : f32
    %s = arith.maximumf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %y : tensor<8xf32>
}
