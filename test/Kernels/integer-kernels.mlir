// RUN: qtrain-opt %s -split-input-file --qtrain-integer-kernels -verify-diagnostics --remarks-filter="qtrain-.*" | FileCheck %s
// RUN: qtrain-opt %s -split-input-file --qtrain-integer-kernels="f64-reference" | FileCheck %s --check-prefix=REF
// Specialized variants are left alone: a second run changes nothing.
// RUN: qtrain-opt %s -split-input-file --qtrain-integer-kernels 2>/dev/null > %t.once
// RUN: qtrain-opt %s -split-input-file --qtrain-integer-kernels --qtrain-integer-kernels 2>/dev/null > %t.twice
// RUN: diff %t.once %t.twice

// A 4-bit linear layer: per-tensor activation times a transposed
// per-channel weight. The codes are i8; the weight's transpose is replayed
// on its codes; the four terms accumulate in i32 (K = 16: 16 * 8 * 8 fits);
// the corrections collapse the loops private to the masked operand.
// CHECK-LABEL: func.func @linear_b4
//  CHECK-SAME:   kernel = i8
//       CHECK:   %[[CX:.*]], %[[SX:.*]], %[[LX:.*]] = qtrain.quantize %arg0, 4 role activation rounding nearest_even granularity<per_tensor> : tensor<8x16xf32> -> tensor<8x16xi8>, tensor<f32>
//       CHECK:   %[[CW:.*]], %[[SW:.*]], %[[LW:.*]] = qtrain.quantize %arg1, 4 role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<4x16xf32> -> tensor<4x16xi8>, tensor<4xf32>
//       CHECK:   %[[CWT:.*]] = linalg.transpose ins(%[[CW]] : tensor<4x16xi8>) outs(%{{.*}} : tensor<16x4xi8>) permutation = [1, 0]
// T1 = sum cx * cw over the full loops, with the product's tags and the
// widths of its codes (for qtrain-microkernels).
//       CHECK:   %[[T1:.*]] = linalg.generic {{.*}} ins(%[[CX]], %[[CWT]] : tensor<8x16xi8>, tensor<16x4xi8>) outs(%{{.*}} : tensor<8x4xi32>) attrs = {qtrain.code_bits = array<i32: 4, 4>, qtrain.layer = 0 : i64, qtrain.product = "forward"}
//       CHECK:     arith.extsi %{{.*}} : i8 to i32
//       CHECK:     arith.muli
//       CHECK:     arith.addi
// T2 = sum cx (the weight's mask, its output loop collapsed): 8x1. The
// mask is constant along k, so the codes are summed over k first (row
// sums) and the term runs k once.
//       CHECK:   %[[ROWS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[CX]] : tensor<8x16xi8>) outs(%{{.*}} : tensor<8xi32>)
//       CHECK:   %[[ROWS1:.*]] = tensor.expand_shape %[[ROWS]] {{.*}} into tensor<8x1xi32>
//       CHECK:   %[[T2:.*]] = linalg.generic {{.*}} ins(%[[ROWS1]], %{{.*}} : tensor<8x1xi32>, tensor<1x1xi8>) outs(%{{.*}} : tensor<8x1xi32>)
// T3 = sum cw (column sums): 1x4. T4 = K: 1x1.
//       CHECK:   linalg.generic {{.*}} ins(%[[CWT]] : tensor<16x4xi8>) outs(%{{.*}} : tensor<4xi32>)
//       CHECK:   %[[T3:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4xi32>)
//       CHECK:   %[[T4:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1xi32>)
// The epilogue: f64, l' = l + 8 s, the per-channel statistics indexed by
// the output column, the terms broadcast along their collapsed loops.
//       CHECK:   linalg.generic {indexing_maps = [#[[ID:.*]], #[[ID]], #[[ROW:.*]], #[[COL:.*]], #[[ONE:.*]], #[[SCALAR:.*]], #[[SCALAR]], #[[CHAN:.*]], #[[CHAN]], #[[ID]]]
//  CHECK-SAME:     ins(%arg2, %[[T1]], %[[T2]], %[[T3]], %[[T4]], %[[SX]], %[[LX]], %[[SW]], %[[LW]] :
//       CHECK:     arith.constant 8.000000e+00 : f64
//       CHECK:     arith.sitofp %{{.*}} : i32 to f64
//       CHECK:     arith.truncf %{{.*}} : f64 to f32
//   CHECK-NOT:   qtrain.fake_quant
// REF-LABEL: func.func @linear_b4
//  REF-SAME:   kernel = f64
//       REF:   qtrain.fake_quant
//       REF:   qtrain.fake_quant
//       REF:   linalg.generic {{.*}} outs(%{{.*}} : tensor<8x4xf64>) attrs = {qtrain.layer = 0 : i64, qtrain.product = "forward"}
//       REF:     arith.extf
//       REF:   arith.truncf %{{.*}} : f64 to f32
func.func @linear_b4(%x: tensor<8x16xf32>, %w: tensor<4x16xf32>, %init: tensor<8x4xf32>) -> tensor<8x4xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 0, product = forward, bits = 4, grad_bits = 0>} {
  %b = arith.constant 4 : i32
  %xq = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<8x16xf32>
  %wq = qtrain.fake_quant %w, %b role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<4x16xf32>
  %e = tensor.empty() : tensor<16x4xf32>
  %wt = linalg.transpose ins(%wq : tensor<4x16xf32>) outs(%e : tensor<16x4xf32>) permutation = [1, 0]
  %y = linalg.matmul {qtrain.layer = 0 : i64, qtrain.product = "forward"} ins(%xq, %wt : tensor<8x16xf32>, tensor<16x4xf32>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// 12 bits: i16 codes; T1 accumulates in i64 (K * 2^11 * 2^11 >= 2^31),
// the corrections (at most K * 2^11) in i32.
// CHECK-LABEL: func.func @wide_b12
//  CHECK-SAME:   kernel = i16
//       CHECK:   qtrain.quantize %arg0, 12 {{.*}} -> tensor<8x1024xi16>, tensor<f32>
//       CHECK:   outs(%{{.*}} : tensor<8x4xi64>) attrs = {qtrain.code_bits = array<i32: 12, 12>, qtrain.layer = 1 : i64
//       CHECK:   arith.extsi %{{.*}} : i16 to i64
//       CHECK:   outs(%{{.*}} : tensor<8x1xi32>)
//       CHECK:   outs(%{{.*}} : tensor<1x4xi32>)
//       CHECK:   outs(%{{.*}} : tensor<1x1xi32>)
func.func @wide_b12(%x: tensor<8x1024xf32>, %w: tensor<1024x4xf32>, %init: tensor<8x4xf32>) -> tensor<8x4xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 1, product = forward, bits = 12, grad_bits = 0>} {
  %b = arith.constant 12 : i32
  %xq = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<8x1024xf32>
  %wq = qtrain.fake_quant %w, %b role weight rounding nearest_even granularity<per_tensor> : tensor<1024x4xf32>
  %y = linalg.matmul {qtrain.layer = 1 : i64, qtrain.product = "forward"} ins(%xq, %wq : tensor<8x1024xf32>, tensor<1024x4xf32>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// A zero-padded convolution: the padding is replayed on the codes (with
// code 0) and on the activation's mask, whose batch loop (private to it,
// unpadded) is collapsed; the weight's output channels are collapsed in
// its own mask.
// CHECK-LABEL: func.func @conv_b8
//       CHECK:   %[[CA:.*]], %{{.*}}, %{{.*}} = qtrain.quantize %arg0, 8 {{.*}} -> tensor<2x1x6x6xi8>, tensor<f32>
//       CHECK:   %[[ZERO:.*]] = arith.constant 0 : i8
//       CHECK:   tensor.pad %[[CA]] low[0, 0, 1, 1] high[0, 0, 1, 1]
//       CHECK:     tensor.yield %[[ZERO]] : i8
//       CHECK:   } : tensor<2x1x6x6xi8> to tensor<2x1x8x8xi8>
//       CHECK:   %[[ONES:.*]] = linalg.fill {{.*}} -> tensor<1x1x6x6xi8>
//       CHECK:   tensor.pad %[[ONES]] low[0, 0, 1, 1] high[0, 0, 1, 1]
//       CHECK:   } : tensor<1x1x6x6xi8> to tensor<1x1x8x8xi8>
//       CHECK:   linalg.fill {{.*}} -> tensor<1x1x3x3xi8>
// T1 stays a convolution, of the codes (8-bit VNNI codes with 32-bit
// sums: qtrain-microkernels runs it as an implicit GEMM).
//       CHECK:   %[[T1:.*]] = linalg.conv_2d_nchw_fchw {{.*}}qtrain.code_bits = array<i32: 8, 8>{{.*}} ins(%[[PADDED:.*]], %{{.*}} : tensor<2x1x8x8xi8>, tensor<3x1x3x3xi8>) outs(%{{.*}} : tensor<2x3x6x6xi32>)
// T2: the activation's codes summed over the channels first (the weight's
// mask is constant along c).
//       CHECK:   ins(%[[PADDED]] : tensor<2x1x8x8xi8>) outs(%{{.*}} : tensor<2x8x8xi32>)
//       CHECK:   outs(%{{.*}} : tensor<2x1x6x6xi32>)
//       CHECK:   outs(%{{.*}} : tensor<1x3x6x6xi32>)
//       CHECK:   outs(%{{.*}} : tensor<1x1x6x6xi32>)
func.func @conv_b8(%x: tensor<2x1x6x6xf32>, %w: tensor<3x1x3x3xf32>, %init: tensor<2x3x6x6xf32>) -> tensor<2x3x6x6xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 2, product = forward, bits = 8, grad_bits = 0>} {
  %b = arith.constant 8 : i32
  %zero = arith.constant 0.0 : f32
  %xq = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<2x1x6x6xf32>
  %wq = qtrain.fake_quant %w, %b role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<3x1x3x3xf32>
  %xp = tensor.pad %xq low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x1x6x6xf32> to tensor<2x1x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>, qtrain.layer = 2 : i64, qtrain.product = "forward"}
      ins(%xp, %wq : tensor<2x1x8x8xf32>, tensor<3x1x3x3xf32>) outs(%init : tensor<2x3x6x6xf32>) -> tensor<2x3x6x6xf32>
  return %y : tensor<2x3x6x6xf32>
}

// -----

// At 2 bits (bit-serial, which has no convolution form) T1 is a GEMM on
// patches (im2col, K-major): the filter's codes 3 x (1*3*3) times patches
// (1*3*3) x (2*6*6), put back to NCHW.
// CHECK-LABEL: func.func @conv_b2
//       CHECK:   %[[COLS:.*]] = linalg.generic {{.*}} ins(%[[PADDED:.*]] : tensor<2x1x8x8xi8>) outs(%{{.*}} : tensor<1x3x3x2x6x6xi8>)
//       CHECK:   %[[P:.*]] = tensor.collapse_shape %[[COLS]] {{\[}}[0, 1, 2], [3, 4, 5]] : tensor<1x3x3x2x6x6xi8> into tensor<9x72xi8>
//       CHECK:   %[[F:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3]] : tensor<3x1x3x3xi8> into tensor<3x9xi8>
//       CHECK:   %[[GEMM:.*]] = linalg.generic {{.*}} ins(%[[F]], %[[P]] : tensor<3x9xi8>, tensor<9x72xi8>) outs(%{{.*}} : tensor<3x72xi32>) attrs = {qtrain.code_bits = array<i32: 2, 2>, qtrain.layer = 2 : i64
//       CHECK:   tensor.expand_shape %[[GEMM]] {{.*}} into tensor<3x2x6x6xi32>
//       CHECK:   linalg.transpose ins(%{{.*}} : tensor<3x2x6x6xi32>) outs(%{{.*}} : tensor<2x3x6x6xi32>) permutation = [1, 0, 2, 3]
func.func @conv_b2(%x: tensor<2x1x6x6xf32>, %w: tensor<3x1x3x3xf32>, %init: tensor<2x3x6x6xf32>) -> tensor<2x3x6x6xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 2, product = forward, bits = 2, grad_bits = 0>} {
  %b = arith.constant 2 : i32
  %zero = arith.constant 0.0 : f32
  %xq = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<2x1x6x6xf32>
  %wq = qtrain.fake_quant %w, %b role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<3x1x3x3xf32>
  %xp = tensor.pad %xq low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x1x6x6xf32> to tensor<2x1x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>, qtrain.layer = 2 : i64, qtrain.product = "forward"}
      ins(%xp, %wq : tensor<2x1x8x8xf32>, tensor<3x1x3x3xf32>) outs(%init : tensor<2x3x6x6xf32>) -> tensor<2x3x6x6xf32>
  return %y : tensor<2x3x6x6xf32>
}

// -----

// The input gradient of a layer with per-output-channel weights sums over
// those channels: no single integer product; it stays f32, with a remark.
// CHECK-LABEL: func.func @input_grad_b4_g8
//  CHECK-SAME:   kernel = f32
//       CHECK:   qtrain.fake_quant
//       CHECK:   linalg.matmul
func.func @input_grad_b4_g8(%e: tensor<8x4xf32>, %w: tensor<4x16xf32>, %init: tensor<8x16xf32>, %seed: i64, %step: i32) -> tensor<8x16xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 0, product = input_grad, bits = 4, grad_bits = 8>} {
  %b = arith.constant 4 : i32
  %g = arith.constant 8 : i32
  %eq = qtrain.fake_quant %e, %g role error rounding stochastic granularity<per_tensor> seed(%seed, %step) {stream = 1 : i64} : tensor<8x4xf32>
  %wq = qtrain.fake_quant %w, %b role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<4x16xf32>
  // expected-remark @below {{site 0 input_grad stays f32: a per-channel scale runs along a reduction dimension}}
  %y = linalg.matmul {qtrain.layer = 0 : i64, qtrain.product = "input_grad"} ins(%eq, %wq : tensor<8x4xf32>, tensor<4x16xf32>) outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// A weight gradient: the stochastic error quantizer keeps its seed, step
// and stream in qtrain.quantize.
// CHECK-LABEL: func.func @weight_grad_b4_g8
//  CHECK-SAME:   kernel = i8
//       CHECK:   qtrain.quantize %arg0, 8 role error rounding stochastic granularity<per_tensor> seed(%arg3, %arg4) {stream = 1 : i64}
func.func @weight_grad_b4_g8(%e: tensor<8x4xf32>, %x: tensor<8x16xf32>, %init: tensor<4x16xf32>, %seed: i64, %step: i32) -> tensor<4x16xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 0, product = weight_grad, bits = 4, grad_bits = 8>} {
  %b = arith.constant 4 : i32
  %g = arith.constant 8 : i32
  %eq = qtrain.fake_quant %e, %g role error rounding stochastic granularity<per_tensor> seed(%seed, %step) {stream = 1 : i64} : tensor<8x4xf32>
  %xq = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<8x16xf32>
  %e0 = tensor.empty() : tensor<4x8xf32>
  %et = linalg.transpose ins(%eq : tensor<8x4xf32>) outs(%e0 : tensor<4x8xf32>) permutation = [1, 0]
  %y = linalg.matmul {qtrain.layer = 0 : i64, qtrain.product = "weight_grad"} ins(%et, %xq : tensor<4x8xf32>, tensor<8x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Functions that are not variants are left alone.
// CHECK-LABEL: func.func @not_a_variant
//       CHECK:   qtrain.fake_quant
func.func @not_a_variant(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %init: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %b = arith.constant 4 : i32
  %xq = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<8x16xf32>
  %y = linalg.matmul {qtrain.layer = 0 : i64, qtrain.product = "forward"} ins(%xq, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// Both factors are one quantized value (x * x): one quantize, both chains
// read its codes.
// CHECK-LABEL: func.func @square_b4
//  CHECK-SAME:   kernel = i8
//       CHECK:   %[[C:.*]], %{{.*}}, %{{.*}} = qtrain.quantize %arg0, 4
//       CHECK:   qtrain.quantize %arg0, 4
//       CHECK:   linalg.generic {{.*}} ins(%[[C]], %{{.*}} : tensor<8x8xi8>, tensor<8x8xi8>)
//   CHECK-NOT:   qtrain.fake_quant
func.func @square_b4(%x: tensor<8x8xf32>, %init: tensor<8x8xf32>) -> tensor<8x8xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 3, product = forward, bits = 4, grad_bits = 0>} {
  %b = arith.constant 4 : i32
  %xq = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<8x8xf32>
  %y = linalg.matmul {qtrain.layer = 3 : i64, qtrain.product = "forward"} ins(%xq, %xq : tensor<8x8xf32>, tensor<8x8xf32>) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
