// qtrain-integer-kernels input-grad=f32|bf16|int on the input gradient of a
// convolution with per-output-channel weights (the flipped kernel of
// LeNet's conv2, the error padded by the kernel extent).
// RUN: qtrain-opt %s --qtrain-integer-kernels="input-grad=f32" 2>/dev/null | FileCheck %s --check-prefix=F32
// RUN: qtrain-opt %s --qtrain-integer-kernels="input-grad=bf16" | FileCheck %s --check-prefix=BF16
// RUN: qtrain-opt %s --qtrain-integer-kernels="input-grad=int" | FileCheck %s --check-prefix=INT
// RUN: not qtrain-opt %s --qtrain-integer-kernels="input-grad=fp16" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not qtrain-opt %s --pass-pipeline="builtin.module(qtrain-kernels{input-grad=i8})" 2>&1 | FileCheck %s --check-prefix=BAD-PIPELINE

// BAD: error: qtrain-integer-kernels: input-grad must be f32, bf16, int or fp8, got 'fp16'
// BAD-PIPELINE: input-grad must be f32, bf16, int or fp8, got 'i8'

// The exact path: the f32 convolution of the fake-quantized values.
// F32-LABEL: func.func @conv_input_grad
//  F32-SAME:   kernel = f32
//       F32:   qtrain.fake_quant
//       F32:   linalg.conv_2d_nchw_fchw {{.*}} ins({{.*}} : tensor<2x3x8x8xf32>, tensor<2x3x3x3xf32>)

// bf16: both operands rounded to bf16 (nearest even on the bits), the
// convolution tagged for the bf16 kernels.
// BF16-LABEL: func.func @conv_input_grad
//  BF16-SAME:   kernel = bf16
//       BF16:   arith.bitcast {{.*}} : f32 to i32
//       BF16:   arith.andi {{.*}} %c-65536_i32
//       BF16:   linalg.conv_2d_nchw_fchw {{{.*}}qtrain.bf16_operands{{.*}}} ins({{.*}} : tensor<2x3x8x8xf32>, tensor<2x3x3x3xf32>)

// int: the weight's codes and per-channel scale; the error scaled by it
// along its channels (axis 1) and quantized per tensor with the error's
// noise stream, once (the product's codes and the zero-point term's
// dequantized values come from the same qtrain.quantize); the weight's
// grid indices, flipped, quantized on [0, 2^b - 1]; an i8 x i8 -> i32
// convolution of the codes; the zero points summed over the error's
// channels, then over the window, once for all of dX's channels, and added.
// INT-LABEL: func.func @conv_input_grad
//  INT-SAME:   kernel = i8
//       INT:   %[[CODES:.*]], %[[SCALE:.*]], %[[LOW:.*]] = qtrain.quantize %arg1, 4 role weight {{.*}} granularity<per_channel, axis = 0> : tensor<3x2x3x3xf32> -> tensor<3x2x3x3xi8>, tensor<3xf32>
//       INT:   %[[SCALED:.*]] = linalg.generic {{.*}} ins(%arg0, %[[SCALE]] : tensor<2x3x6x6xf32>, tensor<3xf32>)
//       INT:     arith.mulf
//       INT:   %[[ECODES:.*]], %[[ESCALE:.*]], %[[ELOW:.*]] = qtrain.quantize %[[SCALED]], 8 role error rounding stochastic granularity<per_tensor> seed(%arg3, %arg4) {stream = 1 : i64}
//       INT:   %[[DEQ:.*]] = linalg.generic {{.*}} ins(%[[ECODES]], %[[ESCALE]], %[[ELOW]] :
//       INT:   ins(%[[CODES]] : tensor<3x2x3x3xi8>)
//       INT:     arith.sitofp
//   INT-NOT:   qtrain.quantize %[[SCALED]]
//       INT:   qtrain.quantize {{.*}}, 4 role weight rounding nearest_even granularity<per_tensor> range
//       INT:   linalg.conv_2d_nchw_fchw {{{.*}}qtrain.code_bits = array<i32: 8, 4>{{.*}}} ins({{.*}} : tensor<2x3x8x8xi8>, tensor<2x3x3x3xi8>) outs({{.*}} : tensor<2x2x6x6xi32>)
//       INT:   arith.divf
//       INT:   linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel", "parallel"]{{.*}} ins(%[[DEQ]], {{.*}} outs({{.*}} : tensor<2x6x6xf32>)
//       INT:   tensor.pad {{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
//       INT:   outs({{.*}} : tensor<2x1x6x6xf32>)
//       INT:   linalg.generic {{.*}} outs({{.*}} : tensor<2x2x6x6xf32>)
//       INT:     arith.addf
//   INT-NOT:   qtrain.fake_quant %arg
#flip = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2 + 2, -d3 + 2)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @conv_input_grad(%e: tensor<2x3x6x6xf32>, %w: tensor<3x2x3x3xf32>, %init: tensor<2x2x6x6xf32>, %seed: i64, %step: i32) -> tensor<2x2x6x6xf32>
    attributes {qtrain.variant = #qtrain.variant<site = 1, product = input_grad, bits = 4, grad_bits = 8>} {
  %b = arith.constant 4 : i32
  %g = arith.constant 8 : i32
  %zero = arith.constant 0.0 : f32
  %wq = qtrain.fake_quant %w, %b role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<3x2x3x3xf32>
  %eq = qtrain.fake_quant %e, %g role error rounding stochastic granularity<per_tensor> seed(%seed, %step) {stream = 1 : i64} : tensor<2x3x6x6xf32>
  %ep = tensor.pad %eq low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x3x6x6xf32> to tensor<2x3x8x8xf32>
  %empty = tensor.empty() : tensor<2x3x3x3xf32>
  %flipped = linalg.generic {indexing_maps = [#flip, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%wq : tensor<3x2x3x3xf32>) outs(%empty : tensor<2x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3x3x3xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>, qtrain.layer = 1 : i64, qtrain.product = "input_grad"}
      ins(%ep, %flipped : tensor<2x3x8x8xf32>, tensor<2x3x3x3xf32>) outs(%init : tensor<2x2x6x6xf32>) -> tensor<2x2x6x6xf32>
  return %y : tensor<2x2x6x6xf32>
}
