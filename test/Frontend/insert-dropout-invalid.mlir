// RUN: qtrain-opt %s --split-input-file --qtrain-insert-dropout -verify-diagnostics

// A mark on something other than a copy of its input.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @forward(%x: tensor<8x4xf32>, %seed: i64 {qtrain.control = "seed"},
                   %step: i32 {qtrain.control = "step"}) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  // expected-error @+1 {{qtrain-insert-dropout: a dropout mark must be on an elementwise copy of one tensor}}
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"], qtrain.dropout = 2.500000e-01 : f64}
      ins(%x : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<8x4xf32>
  return %d : tensor<8x4xf32>
}

// -----

// No controls: insert-quant has not run.
#id = affine_map<(d0, d1) -> (d0, d1)>
// expected-error @+1 {{qtrain-insert-dropout: @forward has dropout but no i64 {qtrain.control = "seed"} and i32 {qtrain.control = "step"} arguments (run qtrain-insert-quant first: it adds them)}}
func.func @forward(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"], qtrain.dropout = 2.500000e-01 : f64}
      ins(%x : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8x4xf32>
  return %d : tensor<8x4xf32>
}

// -----

// p outside [0, 1): the dialect's attribute verifier.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @forward(%x: tensor<8x4xf32>, %seed: i64 {qtrain.control = "seed"},
                   %step: i32 {qtrain.control = "step"}) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  // expected-error @+1 {{'qtrain.dropout' must be a probability in [0, 1), got 1.000000e+00 : f64}}
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"], qtrain.dropout = 1.000000e+00 : f64}
      ins(%x : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8x4xf32>
  return %d : tensor<8x4xf32>
}

// -----

func.func @op(%x: tensor<8x4xf32>, %seed: i64, %step: i32) -> tensor<8x4xf32> {
  // expected-error @+1 {{'qtrain.dropout' op p must be in [0, 1), got -1.000000e-01}}
  %d = qtrain.dropout %x seed(%seed, %step) {p = -0.1 : f64, stream = 0 : i64} : tensor<8x4xf32>
  return %d : tensor<8x4xf32>
}
