// RUN: qtrain-opt %s -split-input-file -verify-diagnostics

// Every verifier and custom-parser message of the qtrain dialect.

//===----------------------------------------------------------------------===//
// GranularityAttr
//===----------------------------------------------------------------------===//

// expected-error @+1 {{per_tensor granularity takes no axis}}
func.func @g() attributes {g = #qtrain.granularity<per_tensor, axis = 0>} { return }

// -----

// expected-error @+1 {{per_channel granularity requires an axis}}
func.func @g() attributes {g = #qtrain.granularity<per_channel>} { return }

// -----

// expected-error @+1 {{channel axis must be non-negative, got -1}}
func.func @g() attributes {g = #qtrain.granularity<per_channel, axis = -1>} { return }

// -----

//===----------------------------------------------------------------------===//
// IntGridAttr
//===----------------------------------------------------------------------===//

// expected-error @+1 {{integer grid bitwidth must be in [1, 16], got 0}}
func.func @g() attributes {g = #qtrain.int<0>} { return }

// -----

// expected-error @+1 {{integer grid bitwidth must be in [1, 16], got 17}}
func.func @g() attributes {g = #qtrain.int<17>} { return }

// -----

//===----------------------------------------------------------------------===//
// FloatFormatAttr
//===----------------------------------------------------------------------===//

// expected-error @+1 {{exponent bits must be in [1, 8], got 0}}
func.func @f() attributes {f = #qtrain.float<0, 3, 0>} { return }

// -----

// expected-error @+1 {{exponent bits must be in [1, 8], got 9}}
func.func @f() attributes {f = #qtrain.float<9, 3, 0>} { return }

// -----

// expected-error @+1 {{mantissa bits must be in [0, 23], got 24}}
func.func @f() attributes {f = #qtrain.float<8, 24, 0>} { return }

// -----

// expected-error @+1 {{format with 8 exponent bits and bias -1 spans 2^-148 to 2^128, outside the range of f32 (2^-149 to 2^127)}}
func.func @f() attributes {f = #qtrain.float<8, 23, -1>} { return }

// -----

// expected-error @+1 {{format with 5 exponent bits and bias 140 spans 2^-156 to 2^-124, outside the range of f32 (2^-149 to 2^127)}}
func.func @f() attributes {f = #qtrain.float<5, 2, 140>} { return }

// -----

// expected-error @+1 {{expected 'saturate'}}
func.func @f() attributes {f = #qtrain.float<4, 3, 4, clamp>} { return }

// -----

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

// expected-error @+1 {{schedule bits must be in [1, 16], got min = 0, max = 8}}
func.func @s() attributes {s = #qtrain.cyclic<shape = cosine, min = 0, max = 8, cycles = 32, period = floor>} { return }

// -----

// expected-error @+1 {{schedule bits must be in [1, 16], got min = 3, max = 17}}
func.func @s() attributes {s = #qtrain.cyclic<shape = cosine, min = 3, max = 17, cycles = 32, period = floor>} { return }

// -----

// expected-error @+1 {{schedule min (8) exceeds max (3)}}
func.func @s() attributes {s = #qtrain.cyclic<shape = linear, min = 8, max = 3, cycles = 32, period = floor>} { return }

// -----

// expected-error @+1 {{a cyclic schedule needs at least one cycle}}
func.func @s() attributes {s = #qtrain.cyclic<shape = cosine, min = 3, max = 8, cycles = 0, period = floor>} { return }

// -----

// expected-error @+1 {{triangular rex schedules need flip = vertical or horizontal}}
func.func @s() attributes {s = #qtrain.cyclic<shape = rex, mode = triangular, min = 3, max = 8, cycles = 8, period = floor_plus_one>} { return }

// -----

// expected-error @+1 {{triangular exponential schedules need flip = vertical or horizontal}}
func.func @s() attributes {s = #qtrain.cyclic<shape = exponential, mode = triangular, min = 3, max = 8, cycles = 8, period = floor_plus_one>} { return }

// -----

// expected-error @+1 {{flip applies only to triangular exponential and rex schedules}}
func.func @s() attributes {s = #qtrain.cyclic<shape = cosine, mode = triangular, flip = vertical, min = 3, max = 8, cycles = 8, period = floor_plus_one>} { return }

// -----

// expected-error @+1 {{flip applies only to triangular exponential and rex schedules}}
func.func @s() attributes {s = #qtrain.cyclic<shape = rex, flip = horizontal, min = 3, max = 8, cycles = 8, period = floor_plus_one>} { return }

// -----

// expected-error @+1 {{static precision must be in [1, 16] bits or fp32, got 17}}
func.func @s() attributes {s = #qtrain.static<17>} { return }

// -----

// expected-error @+1 {{write full precision as 'fp32', not 0 bits}}
func.func @s() attributes {s = #qtrain.static<0>} { return }

// -----

// expected-error @+1 {{schedule min (6) exceeds max (4)}}
func.func @s() attributes {s = #qtrain.learned<min = 6, max = 4>} { return }

// -----

// expected-error @+1 {{schedule bits must be in [1, 16], got min = 3, max = 32}}
func.func @s() attributes {s = #qtrain.learned<min = 3, max = 32>} { return }

// -----

//===----------------------------------------------------------------------===//
// VariantAttr
//===----------------------------------------------------------------------===//

// expected-error @+1 {{variant site must be non-negative, got -1}}
func.func @v() attributes {v = #qtrain.variant<site = -1, product = forward, bits = 4, grad_bits = 0>} { return }

// -----

// expected-error @+1 {{variant bits must be in [0, 16] (0 = fp32), got bits = 17, grad_bits = 0}}
func.func @v() attributes {v = #qtrain.variant<site = 0, product = forward, bits = 17, grad_bits = 0>} { return }

// -----

// expected-error @+1 {{variant bits must be in [0, 16] (0 = fp32), got bits = 4, grad_bits = 32}}
func.func @v() attributes {v = #qtrain.variant<site = 0, product = weight_grad, bits = 4, grad_bits = 32>} { return }

// -----

// expected-error @+1 {{a forward variant has grad_bits = 0, got 8}}
func.func @v() attributes {v = #qtrain.variant<site = 0, product = forward, bits = 4, grad_bits = 8>} { return }

// -----

// expected-error @+1 {{the full-precision variant has no i16 kernel}}
func.func @v() attributes {v = #qtrain.variant<site = 0, product = forward, bits = 0, grad_bits = 0, kernel = i16>} { return }

// -----

// expected-error @+1 {{an i8 kernel takes codes of at most 8 bits, got bits = 4, grad_bits = 12}}
func.func @v() attributes {v = #qtrain.variant<site = 0, product = input_grad, bits = 4, grad_bits = 12, kernel = i8>} { return }

// -----

// expected-error @+2 {{expected ::mlir::qtrain::ProductKind to be one of: forward, input_grad, weight_grad}}
// expected-error @+1 {{failed to parse QTrain_VariantAttr parameter 'product'}}
func.func @v() attributes {v = #qtrain.variant<site = 0, product = sideways, bits = 4, grad_bits = 0>} { return }

// -----

// expected-error @+2 {{expected one of [f32, i8, i16, f64, bf16] for the arithmetic a kernel variant's products run in, got: i4}}
// expected-error @+1 {{failed to parse QTrain_VariantAttr parameter 'kernel'}}
func.func @v() attributes {v = #qtrain.variant<site = 0, product = forward, bits = 4, grad_bits = 0, kernel = i4>} { return }

// -----

// expected-error @+1 {{struct is missing required parameter: grad_bits}}
func.func @v() attributes {v = #qtrain.variant<site = 0, product = forward, bits = 4>} { return }

// -----

//===----------------------------------------------------------------------===//
// Discardable attributes of the dialect
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'qtrain.schedule' must be a precision schedule (#qtrain.cyclic, #qtrain.static or #qtrain.learned), got #qtrain.int<8>}}
module attributes {qtrain.schedule = #qtrain.int<8>} {}

// -----

// expected-error @+1 {{'qtrain.grad_format' must be "e5m2" on a module, got "e4m3"}}
module attributes {qtrain.grad_format = "e4m3"} {}

// -----

// expected-error @+1 {{'qtrain.grad_format' must be "e5m2" on a module, got "e5m2"}}
func.func @f() attributes {qtrain.grad_format = "e5m2"} { return }

// -----

// The dictionary of earlier versions is refused.
// expected-error @+1 {{'qtrain.variant' must be a #qtrain.variant, got {bits = 4 : i32, grad_bits = 0 : i32, product = "forward", site = 0 : i64}}}
func.func @f() attributes {qtrain.variant = {bits = 4 : i32, grad_bits = 0 : i32, product = "forward", site = 0 : i64}} { return }

// -----

// expected-error @+1 {{'qtrain.code_bits' must be array<i32: a, b> with 1 <= a, b <= 16, got array<i32: 4>}}
func.func @f() attributes {qtrain.code_bits = array<i32: 4>} { return }

// -----

// expected-error @+1 {{unknown qtrain attribute 'qtrain.bits' on an operation}}
func.func @f() attributes {qtrain.bits = 8 : i32} { return }

// -----

// expected-error @+1 {{'qtrain.role' must be a #qtrain.role, got 3 : i32}}
func.func @f() attributes {qtrain.role = 3 : i32} { return }

// -----

// expected-error @+1 {{'qtrain.param' must be a unit attribute}}
func.func @f(%w: tensor<4xf32> {qtrain.param = 1 : i32}) { return }

// -----

// expected-error @+1 {{'qtrain.role' must be a #qtrain.role, got "weight"}}
func.func @f(%w: tensor<4xf32> {qtrain.role = "weight"}) { return }

// -----

// expected-error @+1 {{unknown qtrain attribute 'qtrain.parameter' on a region argument}}
func.func @f(%w: tensor<4xf32> {qtrain.parameter}) { return }

// -----

// expected-error @+1 {{unknown qtrain attribute 'qtrain.param' on a result}}
func.func @f(%w: tensor<4xf32>) -> (tensor<4xf32> {qtrain.param}) { return %w : tensor<4xf32> }

// -----

//===----------------------------------------------------------------------===//
// FakeQuantOp
//===----------------------------------------------------------------------===//

func.func @fake_quant_bits_too_wide(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c17 = arith.constant 17 : i32
  // expected-error @+1 {{'qtrain.fake_quant' op bits must be in [0, 16] (0 = full precision), got 17}}
  %0 = qtrain.fake_quant %x, %c17 role activation rounding nearest_even granularity<per_tensor> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @fake_quant_bits_negative(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = arith.constant -1 : i32
  // expected-error @+1 {{'qtrain.fake_quant' op bits must be in [0, 16] (0 = full precision), got -1}}
  %0 = qtrain.fake_quant %x, %c role activation rounding nearest_even granularity<per_tensor> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @fake_quant_axis_out_of_range(%x: tensor<8x4xf32>, %b: i32) -> tensor<8x4xf32> {
  // expected-error @+1 {{'qtrain.fake_quant' op channel axis 2 is out of range for a tensor of rank 2}}
  %0 = qtrain.fake_quant %x, %b role weight rounding nearest_even granularity<per_channel, axis = 2> : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @fake_quant_stochastic_without_seed(%x: tensor<8xf32>, %b: i32) -> tensor<8xf32> {
  // expected-error @+1 {{'qtrain.fake_quant' op stochastic rounding requires a seed}}
  %0 = qtrain.fake_quant %x, %b role error rounding stochastic granularity<per_tensor> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @fake_quant_seed_without_stochastic(%x: tensor<8xf32>, %b: i32, %k: i64, %t: i32) -> tensor<8xf32> {
  // expected-error @+1 {{'qtrain.fake_quant' op a seed is only used by stochastic rounding}}
  %0 = qtrain.fake_quant %x, %b role error rounding nearest_even granularity<per_tensor> seed(%k, %t) : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @fake_quant_per_tensor_range_tensor(%x: tensor<8x4xf32>, %b: i32, %lo: tensor<8xf32>, %hi: tensor<8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'qtrain.fake_quant' op a per-tensor range must be f32 scalars, got 'tensor<8xf32>'}}
  %0 = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> range(%lo, %hi : tensor<8xf32>, tensor<8xf32>) : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @fake_quant_per_channel_range_scalar(%x: tensor<8x4xf32>, %b: i32, %lo: f32, %hi: f32) -> tensor<8x4xf32> {
  // expected-error @+1 {{'qtrain.fake_quant' op a per-channel range must be 1-D tensors, got 'f32'}}
  %0 = qtrain.fake_quant %x, %b role weight rounding nearest_even granularity<per_channel, axis = 0> range(%lo, %hi : f32, f32) : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @fake_quant_per_channel_range_size(%x: tensor<8x4xf32>, %b: i32, %lo: tensor<4xf32>, %hi: tensor<4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'qtrain.fake_quant' op a per-channel range needs one entry per channel (8), got 4}}
  %0 = qtrain.fake_quant %x, %b role weight rounding nearest_even granularity<per_channel, axis = 0> range(%lo, %hi : tensor<4xf32>, tensor<4xf32>) : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @fake_quant_not_f32(%x: tensor<8xf16>, %b: i32) -> tensor<8xf16> {
  // expected-error @+1 {{'qtrain.fake_quant' op operand #0 must be ranked tensor of 32-bit float values}}
  %0 = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> : tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

func.func @fake_quant_bad_role(%x: tensor<8xf32>, %b: i32) -> tensor<8xf32> {
  // expected-error @+2 {{expected ::mlir::qtrain::Role to be one of: weight, activation, error, weight_grad}}
  // expected-error @+1 {{failed to parse QTrain_RoleAttr parameter 'value'}}
  %0 = qtrain.fake_quant %x, %b role gradient rounding nearest_even granularity<per_tensor> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// GradQuantOp
//===----------------------------------------------------------------------===//

func.func @grad_quant_bits(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = arith.constant 20 : i32
  // expected-error @+1 {{'qtrain.grad_quant' op bits must be in [0, 16] (0 = full precision), got 20}}
  %0 = qtrain.grad_quant %x, %c rounding nearest_even : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @grad_quant_no_seed(%x: tensor<8xf32>, %b: i32) -> tensor<8xf32> {
  // expected-error @+1 {{'qtrain.grad_quant' op stochastic rounding requires a seed}}
  %0 = qtrain.grad_quant %x, %b rounding stochastic : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @grad_quant_seed_unused(%x: tensor<8xf32>, %b: i32, %k: i64, %t: i32) -> tensor<8xf32> {
  // expected-error @+1 {{'qtrain.grad_quant' op a seed is only used by stochastic rounding}}
  %0 = qtrain.grad_quant %x, %b rounding nearest_even seed(%k, %t) : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// RangeEmaOp
//===----------------------------------------------------------------------===//

func.func @range_ema_state(%a: tensor<8xf32>, %s: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'qtrain.range_ema' op state must be tensor<2xf32> ([min, range]), got 'tensor<3xf32>'}}
  %0 = qtrain.range_ema %a, %s : tensor<8xf32>, tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @range_ema_momentum(%a: tensor<8xf32>, %s: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'qtrain.range_ema' op momentum must be in [0, 1), got 1.5}}
  %0 = qtrain.range_ema %a, %s {momentum = 1.5 : f64} : tensor<8xf32>, tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expected-error @+1 {{'qtrain.state' must be "ema", "loss_scale", "promotion", "overflow", "ldp_lambda", "bn_mean" or "bn_var", got "momentum"}}
func.func @state_kind(%s: tensor<2xf32> {qtrain.state = "momentum"}) { return }

// -----

// expected-error @+1 {{'qtrain.control' must be "bits", "grad_bits", "seed", "step" or "slots", got "lr"}}
func.func @control_kind(%lr: f32 {qtrain.control = "lr"}) { return }

// -----

//===----------------------------------------------------------------------===//
// qtrain.formats and qtrain.group
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'qtrain.formats' must be a dictionary, got 3 : i64}}
func.func @f() attributes {qtrain.formats = 3 : i64} { return }

// -----

// expected-error @+1 {{'qtrain.formats' has an unknown key 'x' (keys are y, gy, p and gp), got {x = #qtrain.float<4, 3, 4>}}}
func.func @f() attributes {qtrain.formats = {x = #qtrain.float<4, 3, 4>}} { return }

// -----

// expected-error @+1 {{'qtrain.formats' entry 'y' must be a #qtrain.float, got {y = 1 : i64}}}
func.func @f() attributes {qtrain.formats = {y = 1 : i64}} { return }

// -----

// On an argument, as on an op.
// expected-error @+1 {{'qtrain.formats' entry 'gp' must be a #qtrain.float, got {gp = "fp16"}}}
func.func @f(%w: tensor<4xf32> {qtrain.param, qtrain.formats = {gp = "fp16"}}) { return }

// -----

// expected-error @+1 {{unknown qtrain attribute 'qtrain.formats' on a result}}
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32> {qtrain.formats = {y = #qtrain.float<4, 3, 4>}}) { return %x : tensor<4xf32> }

// -----

// expected-error @+1 {{'qtrain.group' must be a non-negative i64, got -1 : i64}}
func.func @f() attributes {qtrain.group = -1 : i64} { return }

// -----

// expected-error @+1 {{'qtrain.group' must be a non-negative i64, got 1 : i32}}
func.func @f(%x: tensor<4xf32> {qtrain.group = 1 : i32}) { return }

// -----

// expected-error @+1 {{unknown qtrain attribute 'qtrain.group' on a result}}
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32> {qtrain.group = 0 : i64}) { return %x : tensor<4xf32> }

// -----

//===----------------------------------------------------------------------===//
// RoundFloatOp
//===----------------------------------------------------------------------===//

func.func @round_float_not_f32(%x: tensor<8xbf16>) -> tensor<8xbf16> {
  // expected-error @+1 {{'qtrain.round_float' op operand #0 must be ranked tensor of 32-bit float values}}
  %0 = qtrain.round_float %x to <4, 3, 4> : tensor<8xbf16>
  return %0 : tensor<8xbf16>
}

// -----

func.func @round_float_bad_format(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{mantissa bits must be in [0, 23], got 30}}
  %0 = qtrain.round_float %x to <4, 30, 4> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @round_float_scaled_not_a_value(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'qtrain.round_float' op scaled(5.000000e+04) must be a positive normal value of #qtrain.float<5, 2, 0>}}
  %0 = qtrain.round_float %x to <5, 2, 0> scaled(50000.0) : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @round_float_scaled_beyond_format(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'qtrain.round_float' op scaled(4.480000e+02) must be a positive normal value of #qtrain.float<4, 3, 4, saturate>}}
  %0 = qtrain.round_float %x to <4, 3, 4, saturate> scaled(448.0) : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @round_float_scaled_negative(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'qtrain.round_float' op scaled(-4.000000e+00) must be a positive normal value}}
  %0 = qtrain.round_float %x to <5, 2, 0> scaled(-4.0) : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @round_float_scaled_promoted(%x: tensor<8xf32>, %p: i1) -> tensor<8xf32> {
  // expected-error @+1 {{'qtrain.round_float' op a scaled rounding cannot be promoted}}
  %0 = qtrain.round_float %x to <5, 2, 0> or <6, 9, 0> if %p scaled(57344.0) : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// GradRoundFloatOp
//===----------------------------------------------------------------------===//

func.func @grad_round_float_scaled_not_a_value(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'qtrain.grad_round_float' op scaled(0.000000e+00) must be a positive normal value of #qtrain.float<5, 2, 0>}}
  %0 = qtrain.grad_round_float %x to <5, 2, 0> scaled(0.0) : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @grad_round_float_not_f32(%x: tensor<8xbf16>) -> tensor<8xbf16> {
  // expected-error @+1 {{'qtrain.grad_round_float' op operand #0 must be ranked tensor of 32-bit float values, but got 'tensor<8xbf16>'}}
  %0 = qtrain.grad_round_float %x to <5, 2, 0> : tensor<8xbf16>
  return %0 : tensor<8xbf16>
}

// -----

func.func @grad_round_float_bad_format(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{exponent bits must be in [1, 8], got 9}}
  %0 = qtrain.grad_round_float %x to <9, 2, 0> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @grad_round_float_shape(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'qtrain.grad_round_float' op requires the same type for all operands and results}}
  %0 = "qtrain.grad_round_float"(%x) {format = #qtrain.float<5, 2, 0>} : (tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// qtrain.init
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'qtrain.init' must be an elements attribute of the argument's type 'tensor<4xf32>', got dense<1.000000e+00> : tensor<2xf32>}}
func.func @f(%w: tensor<4xf32> {qtrain.param, qtrain.init = dense<1.0> : tensor<2xf32>}) { return }

// -----

// expected-error @+1 {{'qtrain.init' must be an elements attribute of the argument's type 'tensor<2xf32>', got 1.000000e+00 : f32}}
func.func @f(%w: tensor<2xf32> {qtrain.param, qtrain.init = 1.0 : f32}) { return }

// -----

// qtrain.fresh_init: a known kind, and a positive fan-in for the uniform
// ones.
// expected-error @+1 {{'qtrain.fresh_init' must be {kind = "kaiming_uniform" | "bias_uniform" | "ones" | "zeros" | "normal", fan_in = N : i64} with N > 0 for the uniform kinds, got {fan_in = 0 : i64, kind = "kaiming_uniform"}}}
func.func @f(%w: tensor<2x2xf32> {qtrain.param, qtrain.fresh_init = {fan_in = 0 : i64, kind = "kaiming_uniform"}}) { return }

// -----

// expected-error @+1 {{'qtrain.fresh_init' must be {kind = "kaiming_uniform" | "bias_uniform" | "ones" | "zeros" | "normal", fan_in = N : i64} with N > 0 for the uniform kinds, got {fan_in = 1 : i64, kind = "xavier_normal"}}}
func.func @f(%w: tensor<2x2xf32> {qtrain.param, qtrain.fresh_init = {fan_in = 1 : i64, kind = "xavier_normal"}}) { return }

// -----

// expected-error @+1 {{unknown qtrain attribute 'qtrain.init' on a result}}
func.func @f(%w: tensor<2xf32>) -> (tensor<2xf32> {qtrain.init = dense<1.0> : tensor<2xf32>}) { return %w : tensor<2xf32> }

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

// -----

func.func @quantize_bits_zero(%x: tensor<8xf32>) {
  // expected-error @+1 {{'qtrain.quantize' op attribute 'bits' failed to satisfy constraint: 32-bit signless integer attribute whose minimum value is 1 whose maximum value is 16}}
  %c, %s, %l = qtrain.quantize %x, 0 role activation rounding nearest_even granularity<per_tensor> : tensor<8xf32> -> tensor<8xi8>, tensor<f32>
  return
}

// -----

func.func @quantize_code_type(%x: tensor<8xf32>) {
  // expected-error @+1 {{'qtrain.quantize' op codes of a 9-bit grid must be 'tensor<8xi16>', got 'tensor<8xi8>'}}
  %c, %s, %l = qtrain.quantize %x, 9 role activation rounding nearest_even granularity<per_tensor> : tensor<8xf32> -> tensor<8xi8>, tensor<f32>
  return
}

// -----

func.func @quantize_code_shape(%x: tensor<8xf32>) {
  // expected-error @+1 {{'qtrain.quantize' op codes of a 4-bit grid must be 'tensor<8xi8>', got 'tensor<4xi8>'}}
  %c, %s, %l = qtrain.quantize %x, 4 role activation rounding nearest_even granularity<per_tensor> : tensor<8xf32> -> tensor<4xi8>, tensor<f32>
  return
}

// -----

func.func @quantize_stat_shape(%w: tensor<6x4xf32>) {
  // expected-error @+1 {{'qtrain.quantize' op scale and low must be 'tensor<6xf32>' for this granularity, got 'tensor<f32>'}}
  %c, %s, %l = qtrain.quantize %w, 4 role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<6x4xf32> -> tensor<6x4xi8>, tensor<f32>
  return
}

// -----

func.func @quantize_needs_seed(%x: tensor<8xf32>) {
  // expected-error @+1 {{'qtrain.quantize' op stochastic rounding requires a seed}}
  %c, %s, %l = qtrain.quantize %x, 8 role error rounding stochastic granularity<per_tensor> : tensor<8xf32> -> tensor<8xi8>, tensor<f32>
  return
}

// -----

func.func @quantize_axis(%x: tensor<8xf32>) {
  // expected-error @+1 {{'qtrain.quantize' op channel axis 1 is out of range for a tensor of rank 1}}
  %c, %s, %l = qtrain.quantize %x, 8 role weight rounding nearest_even granularity<per_channel, axis = 1> : tensor<8xf32> -> tensor<8xi8>, tensor<8xf32>
  return
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

// -----

func.func @kernel_yields_no_product(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'qtrain.kernel' op must yield one result of a linalg op in its body (the product)}}
  %y = qtrain.kernel site 0 "forward" -> tensor<4xf32> {
    qtrain.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @kernel_product_kind(%x: tensor<4xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'qtrain.kernel' op product must be forward, input_grad or weight_grad, got 'sideways'}}
  %y = qtrain.kernel site 0 "sideways" -> tensor<4xf32> {
    %c = linalg.copy ins(%x : tensor<4xf32>) outs(%o : tensor<4xf32>) -> tensor<4xf32>
    qtrain.yield %c : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @kernel_yield_types(%x: tensor<4xf32>, %o: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'qtrain.kernel' op yields 'tensor<4xf32>' but its results are 'tensor<8xf32>'}}
  %y = qtrain.kernel site 0 "forward" -> tensor<8xf32> {
    %c = linalg.copy ins(%x : tensor<4xf32>) outs(%o : tensor<4xf32>) -> tensor<4xf32>
    qtrain.yield %c : tensor<4xf32>
  }
  return %y : tensor<8xf32>
}

// -----

func.func @yield_outside_kernel(%x: tensor<4xf32>) {
  // expected-error @+1 {{'qtrain.yield' op expects parent op 'qtrain.kernel'}}
  qtrain.yield %x : tensor<4xf32>
}

// -----

func.func @fake_quant_min_without_max(%x: tensor<8xf32>, %mn: f32) -> tensor<8xf32> {
  %b = arith.constant 8 : i32
  // expected-error @+1 {{'qtrain.fake_quant' op a range needs both min and max}}
  %0 = "qtrain.fake_quant"(%x, %b, %mn) <{granularity = #qtrain.granularity<per_tensor>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, role = #qtrain<role activation>, rounding = #qtrain<rounding nearest_even>, stream = 0 : i64}> : (tensor<8xf32>, i32, f32) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @fake_quant_width_without_range(%x: tensor<8xf32>) -> tensor<8xf32> {
  %b = arith.constant 8 : i32
  // expected-error @+1 {{'qtrain.fake_quant' op 'width' needs an explicit range(%min, %width)}}
  %0 = qtrain.fake_quant %x, %b role activation rounding nearest_even granularity<per_tensor> width : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @fake_quant_seed_without_step(%x: tensor<8xf32>, %s: i64) -> tensor<8xf32> {
  %b = arith.constant 8 : i32
  // expected-error @+1 {{'qtrain.fake_quant' op seed and step go together}}
  %0 = "qtrain.fake_quant"(%x, %b, %s) <{granularity = #qtrain.granularity<per_tensor>, operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 0>, role = #qtrain<role error>, rounding = #qtrain<rounding stochastic>, stream = 0 : i64}> : (tensor<8xf32>, i32, i64) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// expected-error @+1 {{'qtrain.precision' must be a non-negative i64 (the layer), got -1 : i64}}
func.func @precision_site(%p: tensor<f32> {qtrain.param, qtrain.precision = -1 : i64}) { return }

// -----

// expected-error @+1 {{'qtrain.loss_term' must be a unit attribute}}
func.func @loss_term(%x: tensor<f32>) -> (tensor<f32> {qtrain.loss_term = 1 : i64}) { return %x : tensor<f32> }

// -----

func.func @learned_bits_bounds(%p: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'qtrain.learned_bits' op needs 1 <= min <= max <= 16, got 8 to 3}}
  %b = qtrain.learned_bits %p range 8 to 3 : tensor<f32>
  return %b : tensor<f32>
}

// -----

// expected-error @+1 {{'qtrain.name' must be a string of letters, digits, '_', '.' and '-' that does not start with '.' (a file name), got "../x"}}
func.func @name(%w: tensor<4xf32> {qtrain.param, qtrain.name = "../x"}) { return }

// -----

// expected-error @+1 {{'qtrain.name' must be a string of letters, digits, '_', '.' and '-' that does not start with '.' (a file name), got 3 : i32}}
func.func @name_type(%w: tensor<4xf32> {qtrain.param, qtrain.name = 3 : i32}) { return }

// -----

func.func @dropout_stream(%x: tensor<8xf32>, %seed: i64, %step: i32) -> tensor<8xf32> {
  // expected-error @+1 {{'qtrain.dropout' op stream must be a 32-bit unsigned id, got -1}}
  %d = qtrain.dropout %x seed(%seed, %step) {p = 0.5 : f64, stream = -1 : i64} : tensor<8xf32>
  return %d : tensor<8xf32>
}
