// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --convert-qtrain-to-linalg

func.func @grad_quant_left(%y: tensor<4x3xf32>, %b: i32, %s: i64, %t: i32) -> tensor<4x3xf32> {
  // expected-error @+1 {{qtrain.grad_quant is not supported by convert-qtrain-to-linalg: run qtrain-autodiff first, which moves its effect into the backward pass}}
  %0 = qtrain.grad_quant %y, %b rounding stochastic seed(%s, %t) : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @dynamic(%x: tensor<?x3xf32>, %b: i32) -> tensor<?x3xf32> {
  // expected-error @+1 {{qtrain.fake_quant could not be lowered (dynamic shapes are not supported)}}
  %0 = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

func.func @grad_round_left(%y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{qtrain.grad_round_float is not supported by convert-qtrain-to-linalg: run qtrain-autodiff first, which moves its effect into the backward pass}}
  %0 = qtrain.grad_round_float %y to <5, 2, 0> : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @round_below_fp32(%y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{qtrain.round_float to #qtrain.float<8, 7, 3> could not be lowered: its range is beyond fp32's (smallest normal exponent -129, at least -126 and at most 111 for its mantissa)}}
  %0 = qtrain.round_float %y to <8, 7, 3> : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// A large negative bias: the smallest normal is 2^106, so the subnormal
// rounding's constant 2^(106 - 0 + 23) would not be a finite f32.
func.func @round_above_fp32(%y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{qtrain.round_float to #qtrain.float<4, 0, -112, saturate> could not be lowered: its range is beyond fp32's (smallest normal exponent 106, at least -126 and at most 104 for its mantissa)}}
  %0 = qtrain.round_float %y to <4, 0, -112, saturate> : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// range_ema was not checked after the lowering: with a dynamic shape it
// stayed in the output without an error.
func.func @range_ema_dynamic(%x: tensor<?x3xf32>, %s: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{qtrain.range_ema could not be lowered (dynamic shapes are not supported)}}
  %0 = qtrain.range_ema %x, %s : tensor<?x3xf32>, tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A qtrain op without a lowering (a kernel that qtrain-materialize-variants
// did not outline) is the conversion's error, where it used to stay.
func.func @kernel_left(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %i: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{failed to legalize operation 'qtrain.kernel' that was explicitly marked illegal}}
  %0 = qtrain.kernel site 0 "forward" -> tensor<4x3xf32> {
    %p = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%i : tensor<4x3xf32>) -> tensor<4x3xf32>
    qtrain.yield %p : tensor<4x3xf32>
  }
  return %0 : tensor<4x3xf32>
}

// -----

// A code format below fp32's normal range: the error says so (it used to
// say "dynamic shapes").
func.func @decode_below_fp32(%c: tensor<4xi8>) -> tensor<4xf32> {
  // expected-error @+1 {{qtrain.decode_float of #qtrain.float<4, 3, 125, saturate> could not be lowered: its normal range is below fp32's}}
  %0 = qtrain.decode_float %c from <4, 3, 125, saturate> : tensor<4xi8> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
