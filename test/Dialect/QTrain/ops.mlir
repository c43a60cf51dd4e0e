// RUN: qtrain-opt %s -split-input-file | FileCheck %s
// Custom form round-trips through the generic form.
// RUN: qtrain-opt %s -split-input-file -mlir-print-op-generic | qtrain-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @fake_quant_per_channel_weight
//  CHECK-SAME:   %[[W:.*]]: tensor<16x8xf32> {qtrain.param}, %[[B:.*]]: i32
//       CHECK:   %[[Q:.*]] = qtrain.fake_quant %[[W]], %[[B]] role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<16x8xf32>
//       CHECK:   return %[[Q]]
func.func @fake_quant_per_channel_weight(%w: tensor<16x8xf32> {qtrain.param}, %bits: i32) -> tensor<16x8xf32> {
  %q = qtrain.fake_quant %w, %bits role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<16x8xf32>
  return %q : tensor<16x8xf32>
}

// -----

// CHECK-LABEL: func.func @fake_quant_stochastic_error
//  CHECK-SAME:   %[[E:.*]]: tensor<128x16xf32>, %[[B:.*]]: i32, %[[SEED:.*]]: i64, %[[STEP:.*]]: i32
//       CHECK:   qtrain.fake_quant %[[E]], %[[B]] role error rounding stochastic granularity<per_tensor> seed(%[[SEED]], %[[STEP]]) {stream = 3 : i64} : tensor<128x16xf32>
func.func @fake_quant_stochastic_error(%e: tensor<128x16xf32>, %bits: i32, %seed: i64, %step: i32) -> tensor<128x16xf32> {
  %q = qtrain.fake_quant %e, %bits role error rounding stochastic granularity<per_tensor> seed(%seed, %step) {stream = 3 : i64} : tensor<128x16xf32>
  return %q : tensor<128x16xf32>
}

// -----

// CHECK-LABEL: func.func @grad_quant
//  CHECK-SAME:   %[[Y:.*]]: tensor<128x16xf32>, %[[B:.*]]: i32, %[[SEED:.*]]: i64, %[[STEP:.*]]: i32
//       CHECK:   qtrain.grad_quant %[[Y]], %[[B]] rounding stochastic seed(%[[SEED]], %[[STEP]]) {stream = 2 : i64} : tensor<128x16xf32>
//       CHECK:   qtrain.grad_quant %[[Y]], %[[B]] rounding nearest_even : tensor<128x16xf32>
func.func @grad_quant(%y: tensor<128x16xf32>, %bits: i32, %seed: i64, %step: i32) -> (tensor<128x16xf32>, tensor<128x16xf32>) {
  %0 = qtrain.grad_quant %y, %bits rounding stochastic seed(%seed, %step) {stream = 2 : i64} : tensor<128x16xf32>
  %1 = qtrain.grad_quant %y, %bits rounding nearest_even : tensor<128x16xf32>
  return %0, %1 : tensor<128x16xf32>, tensor<128x16xf32>
}

// -----

// The default stream is not printed.
// CHECK-LABEL: func.func @fake_quant_constant_bits
//       CHECK:   %[[C8:.*]] = arith.constant 8 : i32
//       CHECK:   qtrain.fake_quant %{{.*}}, %[[C8]] role activation rounding nearest_even granularity<per_tensor> : tensor<4x3x8x8xf32>
//   CHECK-NOT:   stream
func.func @fake_quant_constant_bits(%a: tensor<4x3x8x8xf32>) -> tensor<4x3x8x8xf32> {
  %c8 = arith.constant 8 : i32
  %q = qtrain.fake_quant %a, %c8 role activation rounding nearest_even granularity<per_tensor> {stream = 0 : i64} : tensor<4x3x8x8xf32>
  return %q : tensor<4x3x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @fake_quant_explicit_ranges
//  CHECK-SAME:   %[[X:.*]]: tensor<32x10xf32>, %[[B:.*]]: i32, %[[LO:.*]]: f32, %[[HI:.*]]: f32, %[[CLO:.*]]: tensor<10xf32>, %[[CHI:.*]]: tensor<10xf32>
//       CHECK:   qtrain.fake_quant %[[X]], %[[B]] role activation rounding nearest_even granularity<per_tensor> range(%[[LO]], %[[HI]] : f32, f32) : tensor<32x10xf32>
//       CHECK:   qtrain.fake_quant %[[X]], %[[B]] role activation rounding nearest_even granularity<per_channel, axis = 1> range(%[[CLO]], %[[CHI]] : tensor<10xf32>, tensor<10xf32>) : tensor<32x10xf32>
func.func @fake_quant_explicit_ranges(%x: tensor<32x10xf32>, %bits: i32, %lo: f32, %hi: f32, %clo: tensor<10xf32>, %chi: tensor<10xf32>) -> (tensor<32x10xf32>, tensor<32x10xf32>) {
  %0 = qtrain.fake_quant %x, %bits role activation rounding nearest_even granularity<per_tensor> range(%lo, %hi : f32, f32) : tensor<32x10xf32>
  %1 = qtrain.fake_quant %x, %bits role activation rounding nearest_even granularity<per_channel, axis = 1> range(%clo, %chi : tensor<10xf32>, tensor<10xf32>) : tensor<32x10xf32>
  return %0, %1 : tensor<32x10xf32>, tensor<32x10xf32>
}

// -----

// A range given as its low end and width (an EMA state, [min, range]).
// CHECK-LABEL: func.func @fake_quant_range_width
//       CHECK:   qtrain.fake_quant %arg0, %arg1 role activation rounding nearest_even granularity<per_tensor> range(%arg2, %arg3 : f32, f32) width : tensor<32x10xf32>
//       CHECK:   qtrain.quantize %arg0, 8 role activation rounding nearest_even granularity<per_tensor> range(%arg2, %arg3 : f32, f32) width : tensor<32x10xf32> -> tensor<32x10xi8>, tensor<f32>
func.func @fake_quant_range_width(%x: tensor<32x10xf32>, %bits: i32, %mn: f32, %width: f32) -> (tensor<32x10xf32>, tensor<32x10xi8>) {
  %0 = qtrain.fake_quant %x, %bits role activation rounding nearest_even granularity<per_tensor> range(%mn, %width : f32, f32) width : tensor<32x10xf32>
  %c, %s, %l = qtrain.quantize %x, 8 role activation rounding nearest_even granularity<per_tensor> range(%mn, %width : f32, f32) width : tensor<32x10xf32> -> tensor<32x10xi8>, tensor<f32>
  return %0, %c : tensor<32x10xf32>, tensor<32x10xi8>
}

// -----

// Dynamic shapes are accepted; the channel count is checked when known.
// CHECK-LABEL: func.func @fake_quant_dynamic
//       CHECK:   qtrain.fake_quant %{{.*}}, %{{.*}} role weight_grad rounding nearest_even granularity<per_channel, axis = 0> range(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xf32>) : tensor<?x8xf32>
func.func @fake_quant_dynamic(%x: tensor<?x8xf32>, %bits: i32, %lo: tensor<?xf32>, %hi: tensor<?xf32>) -> tensor<?x8xf32> {
  %0 = qtrain.fake_quant %x, %bits role weight_grad rounding nearest_even granularity<per_channel, axis = 0> range(%lo, %hi : tensor<?xf32>, tensor<?xf32>) : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @round_float
//       CHECK:   %[[P:.*]] = qtrain.round_float %{{.*}} to <4, 3, 4, saturate> role weight : tensor<120x84xf32>
//       CHECK:   %[[G:.*]] = qtrain.round_float %[[P]] to <5, 2, 0> role error : tensor<120x84xf32>
//       CHECK:   qtrain.round_float %[[G]] to <6, 9, 0> : tensor<120x84xf32>
func.func @round_float(%x: tensor<120x84xf32>) -> tensor<120x84xf32> {
  %0 = qtrain.round_float %x to <4, 3, 4, saturate> role weight : tensor<120x84xf32>
  %1 = qtrain.round_float %0 to <5, 2, 0> role error : tensor<120x84xf32>
  %2 = qtrain.round_float %1 to <6, 9, 0> : tensor<120x84xf32>
  return %2 : tensor<120x84xf32>
}

// -----

// CHECK-LABEL: func.func @grad_round_float
//       CHECK:   %[[G:.*]] = qtrain.grad_round_float %{{.*}} to <5, 2, 0> role error : tensor<128x84xf32>
//       CHECK:   %[[P:.*]] = qtrain.grad_round_float %[[G]] to <6, 9, 0> role weight_grad : tensor<128x84xf32>
//       CHECK:   qtrain.grad_round_float %[[P]] to <6, 9, 0> : tensor<128x84xf32>
func.func @grad_round_float(%x: tensor<128x84xf32>) -> tensor<128x84xf32> {
  %0 = qtrain.grad_round_float %x to <5, 2, 0> role error : tensor<128x84xf32>
  %1 = qtrain.grad_round_float %0 to <6, 9, 0> role weight_grad : tensor<128x84xf32>
  %2 = qtrain.grad_round_float %1 to <6, 9, 0> : tensor<128x84xf32>
  return %2 : tensor<128x84xf32>
}

// -----

// CPT's fp8 errors (grad-format=e5m2): scaled per tensor up to 57344.
// CHECK-LABEL: func.func @scaled_rounding
//       CHECK:   %[[G:.*]] = qtrain.grad_round_float %{{.*}} to <5, 2, 0> scaled(5.734400e+04) role error : tensor<128x84xf32>
//       CHECK:   qtrain.round_float %[[G]] to <5, 2, 0> scaled(5.734400e+04) : tensor<128x84xf32>
func.func @scaled_rounding(%x: tensor<128x84xf32>) -> tensor<128x84xf32> {
  %0 = qtrain.grad_round_float %x to <5, 2, 0> scaled(57344.0) role error : tensor<128x84xf32>
  %1 = qtrain.round_float %0 to <5, 2, 0> scaled(57344.0) : tensor<128x84xf32>
  return %1 : tensor<128x84xf32>
}

// -----

// The formats qtrain-assign-precision writes: {p, gp} on a parameter,
// {y, gy} on an input and on an op, with the group.
// CHECK-LABEL: func.func @formats
//  CHECK-SAME:   tensor<3x5xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 0 : i64, qtrain.param}
//  CHECK-SAME:   tensor<4x5xf32> {qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 0 : i64}
//       CHECK:   linalg.matmul indexing_maps = [{{.*}}] {qtrain.formats = {gy = #qtrain.float<6, 9, 0>, y = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 1 : i64}
func.func @formats(
    %w: tensor<3x5xf32> {qtrain.param, qtrain.group = 0 : i64, qtrain.formats = {p = #qtrain.float<4, 3, 4, saturate>, gp = #qtrain.float<6, 9, 0>}},
    %x: tensor<4x5xf32> {qtrain.group = 0 : i64, qtrain.formats = {y = #qtrain.float<4, 3, 4, saturate>, gy = #qtrain.float<5, 2, 0>}}) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      {qtrain.group = 1 : i64, qtrain.formats = {y = #qtrain.float<6, 9, 0, saturate>, gy = #qtrain.float<6, 9, 0>}}
      ins(%x, %w : tensor<4x5xf32>, tensor<3x5xf32>) outs(%fill : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Every attribute, as a discardable attribute so that it round-trips alone
// (discardable attributes print sorted by name).
// CHECK-LABEL: func.func @attributes
//  CHECK-SAME: fp_bf16 = #qtrain.float<8, 7, 0>
//  CHECK-SAME: fp_high = #qtrain.float<6, 9, 0>
//  CHECK-SAME: fp_low_neg_bias = #qtrain.float<5, 2, -3, saturate>
//  CHECK-SAME: fp_low_p = #qtrain.float<4, 3, 4, saturate>
//  CHECK-SAME: gran_channel = #qtrain.granularity<per_channel, axis = 3>
//  CHECK-SAME: gran_tensor = #qtrain.granularity<per_tensor>
//  CHECK-SAME: int1 = #qtrain.int<1>
//  CHECK-SAME: int16 = #qtrain.int<16>
//  CHECK-SAME: role_a = #qtrain<role activation>
//  CHECK-SAME: role_e = #qtrain<role error>
//  CHECK-SAME: role_g = #qtrain<role weight_grad>
//  CHECK-SAME: role_w = #qtrain<role weight>
//  CHECK-SAME: round_n = #qtrain<rounding nearest_even>
//  CHECK-SAME: round_s = #qtrain<rounding stochastic>
func.func @attributes() attributes {
    int1 = #qtrain.int<1>, int16 = #qtrain.int<16>,
    fp_high = #qtrain.float<6, 9, 0>, fp_low_p = #qtrain.float<4, 3, 4, saturate>,
    fp_low_neg_bias = #qtrain.float<5, 2, -3, saturate>, fp_bf16 = #qtrain.float<8, 7, 0>,
    role_w = #qtrain<role weight>, role_a = #qtrain<role activation>,
    role_e = #qtrain<role error>, role_g = #qtrain<role weight_grad>,
    round_n = #qtrain<rounding nearest_even>, round_s = #qtrain<rounding stochastic>,
    gran_tensor = #qtrain.granularity<per_tensor>,
    gran_channel = #qtrain.granularity<per_channel, axis = 3>} {
  return
}

// -----

// Every schedule of PAPERS.md sections 1-3. Parameters may come in any order;
// mode and flip print only when not the default.
// CHECK-LABEL: func.func @schedules
//  CHECK-SAME: cos_rep = #qtrain.cyclic<shape = cosine, min = 3, max = 8, cycles = 8, period = floor_plus_one>
//  CHECK-SAME: cos_tri = #qtrain.cyclic<shape = cosine, mode = triangular, min = 3, max = 8, cycles = 8, period = floor_plus_one>
//  CHECK-SAME: cpt = #qtrain.cyclic<shape = cosine, min = 3, max = 8, cycles = 32, period = floor>
//  CHECK-SAME: exp_h = #qtrain.cyclic<shape = exponential, mode = triangular, flip = horizontal, min = 3, max = 8, cycles = 8, period = floor_plus_one>
//  CHECK-SAME: exp_rep = #qtrain.cyclic<shape = exponential, min = 3, max = 8, cycles = 8, period = floor_plus_one>
//  CHECK-SAME: exp_v = #qtrain.cyclic<shape = exponential, mode = triangular, flip = vertical, min = 3, max = 8, cycles = 8, period = floor_plus_one>
//  CHECK-SAME: fp32 = #qtrain.static<fp32>
//  CHECK-SAME: ldp = #qtrain.learned<min = 3, max = 8>
//  CHECK-SAME: lin_rep = #qtrain.cyclic<shape = linear, min = 4, max = 6, cycles = 8, period = floor_plus_one>
//  CHECK-SAME: lin_tri = #qtrain.cyclic<shape = linear, mode = triangular, min = 4, max = 6, cycles = 8, period = floor_plus_one>
//  CHECK-SAME: rex_h = #qtrain.cyclic<shape = rex, mode = triangular, flip = horizontal, min = 3, max = 8, cycles = 8, period = floor_plus_one>
//  CHECK-SAME: rex_rep = #qtrain.cyclic<shape = rex, min = 3, max = 8, cycles = 8, period = floor_plus_one>
//  CHECK-SAME: rex_v = #qtrain.cyclic<shape = rex, mode = triangular, flip = vertical, min = 3, max = 8, cycles = 8, period = floor_plus_one>
//  CHECK-SAME: static8 = #qtrain.static<8>
func.func @schedules() attributes {
    cpt = #qtrain.cyclic<shape = cosine, min = 3, max = 8, cycles = 32, period = floor>,
    cos_rep = #qtrain.cyclic<period = floor_plus_one, cycles = 8, max = 8, min = 3, shape = cosine, mode = repeated>,
    cos_tri = #qtrain.cyclic<shape = cosine, mode = triangular, min = 3, max = 8, cycles = 8, period = floor_plus_one>,
    lin_rep = #qtrain.cyclic<shape = linear, min = 4, max = 6, cycles = 8, period = floor_plus_one>,
    lin_tri = #qtrain.cyclic<shape = linear, mode = triangular, min = 4, max = 6, cycles = 8, period = floor_plus_one>,
    exp_rep = #qtrain.cyclic<shape = exponential, min = 3, max = 8, cycles = 8, period = floor_plus_one>,
    exp_v = #qtrain.cyclic<shape = exponential, mode = triangular, flip = vertical, min = 3, max = 8, cycles = 8, period = floor_plus_one>,
    exp_h = #qtrain.cyclic<shape = exponential, mode = triangular, flip = horizontal, min = 3, max = 8, cycles = 8, period = floor_plus_one>,
    rex_rep = #qtrain.cyclic<shape = rex, min = 3, max = 8, cycles = 8, period = floor_plus_one>,
    rex_v = #qtrain.cyclic<shape = rex, mode = triangular, flip = vertical, min = 3, max = 8, cycles = 8, period = floor_plus_one>,
    rex_h = #qtrain.cyclic<shape = rex, mode = triangular, flip = horizontal, min = 3, max = 8, cycles = 8, period = floor_plus_one>,
    static8 = #qtrain.static<8>, fp32 = #qtrain.static<fp32>,
    ldp = #qtrain.learned<min = 3, max = 8>} {
  return
}

// -----

// The dialect's own discardable attributes.
// CHECK: module attributes {qtrain.schedule = #qtrain.cyclic<shape = cosine, min = 3, max = 8, cycles = 32, period = floor>}
// CHECK-LABEL: func.func @forward
//  CHECK-SAME: {qtrain.param}
//  CHECK-SAME: {qtrain.role = #qtrain<role activation>}
//  CHECK-SAME: -> (tensor<4x10xf32> {qtrain.role = #qtrain<role activation>})
//  CHECK-SAME: attributes {qtrain.schedule = #qtrain.static<8>}
module attributes {qtrain.schedule = #qtrain.cyclic<shape = cosine, min = 3, max = 8, cycles = 32, period = floor>} {
  func.func @forward(%w: tensor<10x784xf32> {qtrain.param}, %x: tensor<4x784xf32> {qtrain.role = #qtrain<role activation>}) -> (tensor<4x10xf32> {qtrain.role = #qtrain<role activation>}) attributes {qtrain.schedule = #qtrain.static<8>} {
    %0 = tensor.empty() : tensor<4x10xf32>
    return %0 : tensor<4x10xf32>
  }
}

// -----

// CHECK-LABEL: func.func @range_ema
//       CHECK:   qtrain.range_ema %{{.*}}, %{{.*}} : tensor<128x400xf32>, tensor<2xf32>
//       CHECK:   qtrain.range_ema %{{.*}}, %{{.*}} {momentum = 5.000000e-01 : f64} : tensor<128x400xf32>, tensor<2xf32>
func.func @range_ema(%a: tensor<128x400xf32>, %s: tensor<2xf32> {qtrain.state = "ema"}) -> (tensor<2xf32> {qtrain.state = "ema"}, tensor<2xf32>) {
  %0 = qtrain.range_ema %a, %s : tensor<128x400xf32>, tensor<2xf32>
  %1 = qtrain.range_ema %a, %s {momentum = 0.5 : f64} : tensor<128x400xf32>, tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// A parameter's initial value, inline or as a resource blob.
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   tensor<2xf32> {qtrain.init = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>, qtrain.param}
//  CHECK-SAME:   tensor<2xf32> {qtrain.init = dense_resource<w> : tensor<2xf32>, qtrain.param}
//       CHECK:   w: "0x040000000000803F00000040"
func.func @forward(%b: tensor<2xf32> {qtrain.param, qtrain.init = dense<[1.0, 2.0]> : tensor<2xf32>},
                   %w: tensor<2xf32> {qtrain.param, qtrain.init = dense_resource<w> : tensor<2xf32>},
                   %x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  return %x : tensor<3x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// CHECK-LABEL: func.func @quantize_codes
//       CHECK:   %{{.*}}, %{{.*}}, %{{.*}} = qtrain.quantize %arg0, 4 role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<6x25xf32> -> tensor<6x25xi8>, tensor<6xf32>
//       CHECK:   qtrain.quantize %arg1, 12 role error rounding stochastic granularity<per_tensor> seed(%arg2, %arg3) {stream = 2 : i64} : tensor<8x4xf32> -> tensor<8x4xi16>, tensor<f32>
//       CHECK:   qtrain.quantize %arg1, 8 role activation rounding nearest_even granularity<per_tensor> range(%arg4, %arg5 : f32, f32) : tensor<8x4xf32> -> tensor<8x4xi8>, tensor<f32>
func.func @quantize_codes(%w: tensor<6x25xf32>, %e: tensor<8x4xf32>, %seed: i64, %step: i32, %mn: f32, %mx: f32)
    -> (tensor<6x25xi8>, tensor<6xf32>, tensor<8x4xi16>, tensor<8x4xi8>) {
  %c, %s, %l = qtrain.quantize %w, 4 role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<6x25xf32> -> tensor<6x25xi8>, tensor<6xf32>
  %ec, %es, %el = qtrain.quantize %e, 12 role error rounding stochastic granularity<per_tensor> seed(%seed, %step) {stream = 2 : i64} : tensor<8x4xf32> -> tensor<8x4xi16>, tensor<f32>
  %ac, %as, %al = qtrain.quantize %e, 8 role activation rounding nearest_even granularity<per_tensor> range(%mn, %mx : f32, f32) : tensor<8x4xf32> -> tensor<8x4xi8>, tensor<f32>
  return %c, %l, %ec, %ac : tensor<6x25xi8>, tensor<6xf32>, tensor<8x4xi16>, tensor<8x4xi8>
}

// -----

// CHECK-LABEL: func.func @kernel
//       CHECK:   %[[K:.*]] = qtrain.kernel site 2 "weight_grad" -> tensor<4x8xf32> {
//       CHECK:     %[[Q:.*]] = qtrain.fake_quant %arg0, %arg2 role activation
//       CHECK:     %[[M:.*]] = linalg.matmul ins(%[[Q]], %arg1 : tensor<4x3xf32>, tensor<3x8xf32>)
//       CHECK:     qtrain.yield %[[M]] : tensor<4x8xf32>
//       CHECK:   return %[[K]]
func.func @kernel(%a: tensor<4x3xf32>, %e: tensor<3x8xf32>, %bits: i32, %init: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = qtrain.kernel site 2 "weight_grad" -> tensor<4x8xf32> {
    %q = qtrain.fake_quant %a, %bits role activation rounding nearest_even granularity<per_tensor> : tensor<4x3xf32>
    %m = linalg.matmul ins(%q, %e : tensor<4x3xf32>, tensor<3x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
    qtrain.yield %m : tensor<4x8xf32>
  }
  return %y : tensor<4x8xf32>
}

// -----

// A kernel variant's contract, before and after qtrain-integer-kernels.
// CHECK-LABEL: func.func @variant_forward
//  CHECK-SAME:   attributes {qtrain.variant = #qtrain.variant<site = 0, product = forward, bits = 4, grad_bits = 0>}
func.func @variant_forward() attributes {qtrain.variant = #qtrain.variant<site = 0, product = forward, bits = 4, grad_bits = 0>} { return }
// CHECK-LABEL: func.func @variant_weight_grad
//  CHECK-SAME:   attributes {qtrain.variant = #qtrain.variant<site = 2, product = weight_grad, bits = 8, grad_bits = 8, kernel = i8>}
func.func @variant_weight_grad() attributes {qtrain.variant = #qtrain.variant<grad_bits = 8, kernel = i8, bits = 8, product = weight_grad, site = 2>} { return }
