// RUN: qtrain-opt %s --qtrain-fp8-error-products --split-input-file --remarks-filter="qtrain-.*" -verify-diagnostics | FileCheck %s
// RUN: qtrain-opt %s --qtrain-fp8-error-products="fp8-scale=exact" --split-input-file 2>/dev/null | FileCheck %s --check-prefix=EXACT
// RUN: not qtrain-opt %s --qtrain-fp8-error-products="fp8-scale=none" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: qtrain-fp8-error-products: fp8-scale must be fit or exact, got 'none'

// A weight gradient dW = A^T E in a variant function, with A's 4-bit codes
// and the e5m2 error the step passes it: an fp8 product of exact operands
// (e4m3 codes, e5m2 values v = E 2^-k) and the correction
// y = init + 2^k (s T1 + l' T3), T3 the column sums of v.
// CHECK-LABEL: func.func private @weight_grad_b4(
//  CHECK-SAME:   %[[A:[^:]*]]: tensor<8x16xf32>, %[[E:[^:]*]]: tensor<8x4xf32>, %[[INIT:[^:]*]]: tensor<16x4xf32>)
//       CHECK:   %[[AMAX:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[E]] : tensor<8x4xf32>)
//       CHECK:     math.absf
//       CHECK:     arith.maximumf
//       CHECK:   %[[V:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[AMAX]] : tensor<8x4xf32>, tensor<f32>)
//       CHECK:   %[[CODES:.*]], %[[S:.*]], %[[LOW:.*]] = qtrain.quantize %[[A]], 4 role activation rounding nearest_even granularity<per_tensor>
//       CHECK:   %[[C:.*]] = linalg.generic {{.*}} ins(%[[CODES]] : tensor<8x16xi8>)
//       CHECK:     arith.sitofp
//       CHECK:   %[[T1:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[V]] : {{.*}}qtrain.float_operands = [#qtrain.float<4, 3, 1>, #qtrain.float<5, 2, 1>]
//       CHECK:   %[[T3:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[V]] : tensor<8x4xf32>) outs(%{{.*}} : tensor<4xf32>)
//       CHECK:   %[[Y:.*]] = linalg.generic {{.*}} ins(%[[INIT]], %[[T1]], %[[T3]], %[[S]], %[[LOW]], %[[AMAX]] :
//       CHECK:     arith.constant 8.000000e+00 : f64
//       CHECK:     arith.truncf %{{.*}} : f64 to f32
//       CHECK:   return %[[Y]]
//   CHECK-NOT:   qtrain.fake_quant
// EXACT-LABEL: func.func private @weight_grad_b4(
//       EXACT:   qtrain.float_operands = [#qtrain.float<4, 3, 1>, #qtrain.float<5, 2, 0>]
#mA = affine_map<(b, i, j) -> (b, i)>
#mE = affine_map<(b, i, j) -> (b, j)>
#mO = affine_map<(b, i, j) -> (i, j)>
func.func private @weight_grad_b4(%a: tensor<8x16xf32>, %e: tensor<8x4xf32>, %init: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %c4 = arith.constant 4 : i32
  %aq = qtrain.fake_quant %a, %c4 role activation rounding nearest_even granularity<per_tensor> : tensor<8x16xf32>
  %y = linalg.generic {indexing_maps = [#mA, #mE, #mO], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%aq, %e : tensor<8x16xf32>, tensor<8x4xf32>) outs(%init : tensor<16x4xf32>) attrs = {qtrain.layer = 0 : i64, qtrain.product = "weight_grad"} {
  ^bb0(%x: f32, %g: f32, %acc: f32):
    %p = arith.mulf %x, %g : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x4xf32>
  return %y : tensor<16x4xf32>
}

// 8-bit codes are bf16 values, not e4m3 ones: the product is marked for
// bf16. The error is the step's own rounding here, and comes first.
// CHECK-LABEL: func.func @train_step
//       CHECK:   qtrain.float_operands = [#qtrain.float<5, 2, 1>, #qtrain.float<4, 7, 0>]
//       CHECK:   call @weight_grad_b4
func.func @train_step(%a: tensor<8x16xf32>, %dy: tensor<8x4xf32>, %init: tensor<16x4xf32>) -> (tensor<16x4xf32>, tensor<4x16xf32>) {
  %e = qtrain.round_float %dy to <5, 2, 0> scaled(57344.0) role error : tensor<8x4xf32>
  %c8 = arith.constant 8 : i32
  %aq = qtrain.fake_quant %a, %c8 role activation rounding nearest_even granularity<per_tensor> : tensor<8x16xf32>
  %e0 = tensor.empty() : tensor<4x16xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %yt = linalg.generic {indexing_maps = [affine_map<(b, j, i) -> (b, j)>, affine_map<(b, j, i) -> (b, i)>, affine_map<(b, j, i) -> (j, i)>], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%e, %aq : tensor<8x4xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) {
  ^bb0(%g: f32, %x: f32, %acc: f32):
    %p = arith.mulf %g, %x : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %y = func.call @weight_grad_b4(%a, %e, %init) : (tensor<8x16xf32>, tensor<8x4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  return %y, %yt : tensor<16x4xf32>, tensor<4x16xf32>
}

// -----

// The input gradient dX = E W: the weight is quantized per output channel,
// whose scales lie along the reduction. It stays f32, and says why.
// CHECK-LABEL: func.func @input_grad
//   CHECK-NOT:   qtrain.float_operands
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<4x16xf32>)
func.func @input_grad(%dy: tensor<8x4xf32>, %w: tensor<4x16xf32>, %init: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = qtrain.round_float %dy to <5, 2, 0> scaled(57344.0) role error : tensor<8x4xf32>
  %c6 = arith.constant 6 : i32
  %wq = qtrain.fake_quant %w, %c6 role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<4x16xf32>
  // expected-remark @below {{a product of fp8 errors stays f32: its other factor is quantized per channel}}
  %y = linalg.matmul ins(%e, %wq : tensor<8x4xf32>, tensor<4x16xf32>) outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// Left alone: an error on CPT's integer grid (no scaled rounding), an
// unscaled e5m2 rounding (the float-format method's, for
// qtrain-float-operands), a function argument that one caller passes
// unrounded, and a factor that no quantizer made.
// CHECK-LABEL: func.func private @some_callers
//   CHECK-NOT:   qtrain.quantize
// CHECK-LABEL: func.func @others
//   CHECK-NOT:   qtrain.quantize
//   CHECK-NOT:   qtrain.float_operands
func.func private @some_callers(%a: tensor<8x16xf32>, %e: tensor<8x4xf32>, %init: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %c4 = arith.constant 4 : i32
  %aq = qtrain.fake_quant %a, %c4 role activation rounding nearest_even granularity<per_tensor> : tensor<8x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i)>, affine_map<(b, i, j) -> (b, j)>, affine_map<(b, i, j) -> (i, j)>], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%aq, %e : tensor<8x16xf32>, tensor<8x4xf32>) outs(%init : tensor<16x4xf32>) {
  ^bb0(%x: f32, %g: f32, %acc: f32):
    %p = arith.mulf %x, %g : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x4xf32>
  return %y : tensor<16x4xf32>
}
func.func @others(%a: tensor<8x8xf32>, %dy: tensor<8x8xf32>, %init: tensor<8x8xf32>, %a2: tensor<8x16xf32>, %dy2: tensor<8x4xf32>, %init2: tensor<16x4xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<16x4xf32>, tensor<16x4xf32>) {
  %c4 = arith.constant 4 : i32
  %aq = qtrain.fake_quant %a, %c4 role activation rounding nearest_even granularity<per_tensor> : tensor<8x8xf32>
  %eq = qtrain.fake_quant %dy, %c4 role error rounding nearest_even granularity<per_tensor> : tensor<8x8xf32>
  %y0 = linalg.matmul ins(%aq, %eq : tensor<8x8xf32>, tensor<8x8xf32>) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  %er = qtrain.round_float %dy to <5, 2, 0> role error : tensor<8x8xf32>
  %y1 = linalg.matmul ins(%aq, %er : tensor<8x8xf32>, tensor<8x8xf32>) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  %es = qtrain.round_float %dy to <5, 2, 0> scaled(57344.0) role error : tensor<8x8xf32>
  // expected-remark @below {{a product of fp8 errors stays f32: its other factor is not a fixed-point quantizer of 1 to 8 bits seen through transposes}}
  %y2 = linalg.matmul ins(%a, %es : tensor<8x8xf32>, tensor<8x8xf32>) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  %es2 = qtrain.round_float %dy2 to <5, 2, 0> scaled(57344.0) role error : tensor<8x4xf32>
  %y3 = func.call @some_callers(%a2, %es2, %init2) : (tensor<8x16xf32>, tensor<8x4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  %y4 = func.call @some_callers(%a2, %dy2, %init2) : (tensor<8x16xf32>, tensor<8x4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  return %y0, %y1, %y2, %y3, %y4 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<16x4xf32>, tensor<16x4xf32>
}
