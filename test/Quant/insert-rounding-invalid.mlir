// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --qtrain-insert-rounding

// expected-error @+1 {{qtrain-insert-rounding: no function @forward}}
module {
  func.func private @forward(%x: tensor<4xf32>) -> tensor<4xf32>
}

// -----

// A parameter needs P and GP formats; {y, gy} are the keys of an output.
// expected-error @+1 {{qtrain-insert-rounding: 'qtrain.formats' needs #qtrain.float entries 'p' and 'gp' here, got {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}}}
func.func @forward(%w: tensor<4xf32> {qtrain.param, qtrain.formats = {y = #qtrain.float<4, 3, 4, saturate>, gy = #qtrain.float<5, 2, 0>}}, %x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// The dialect accepts an empty dictionary; the pass needs both formats.
// expected-error @+1 {{qtrain-insert-rounding: 'qtrain.formats' needs #qtrain.float entries 'y' and 'gy' here, got {}}}
func.func @forward(%x: tensor<4xf32> {qtrain.formats = {}}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{qtrain-insert-rounding: 'qtrain.formats' needs #qtrain.float entries 'y' and 'gy' here, got {y = #qtrain.float<4, 3, 4, saturate>}}}
  %y = linalg.copy {qtrain.formats = {y = #qtrain.float<4, 3, 4, saturate>}} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

#id = affine_map<(i) -> (i)>
func.func @forward(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{qtrain-insert-rounding: 'qtrain.formats' on an op without one f32 tensor result}}
  %y:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e, %e : tensor<4xf32>, tensor<4xf32>)
      attrs = {qtrain.formats = {y = #qtrain.float<4, 3, 4, saturate>, gy = #qtrain.float<5, 2, 0>}} {
  ^bb0(%a: f32, %o: f32, %p: f32):
    linalg.yield %a, %a : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %y#0, %y#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// qtrain.round_float rounds f32 tensors only.
func.func @forward(%x: tensor<4xf64>) -> tensor<4xf64> {
  %e = tensor.empty() : tensor<4xf64>
  // expected-error @+1 {{qtrain-insert-rounding: 'qtrain.formats' on an op without one f32 tensor result}}
  %y = linalg.copy {qtrain.formats = {y = #qtrain.float<4, 3, 4, saturate>, gy = #qtrain.float<5, 2, 0>}} ins(%x : tensor<4xf64>) outs(%e : tensor<4xf64>) -> tensor<4xf64>
  return %y : tensor<4xf64>
}

// -----

// expected-error @+1 {{qtrain-insert-rounding: 'qtrain.formats' on argument #0 of type 'f32'; only f32 tensors are rounded}}
func.func @forward(%s: f32 {qtrain.formats = {y = #qtrain.float<4, 3, 4, saturate>, gy = #qtrain.float<5, 2, 0>}}) -> f32 {
  return %s : f32
}

// -----

// expected-error @+1 {{qtrain-insert-rounding: @forward has a loss scale already}}
func.func @forward(%x: tensor<4xf32>, %s: tensor<1xf32> {qtrain.state = "loss_scale"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
