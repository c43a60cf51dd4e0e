// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --remarks-filter="qtrain-.*" --qtrain-autodiff

// expected-error @+1 {{qtrain-autodiff: no function @forward in the module (set forward=<name>)}}
module {
  func.func @model(%x: tensor<2x2xf32>) -> tensor<2x2xf32> { return %x : tensor<2x2xf32> }
}

// -----

// expected-error @+1 {{qtrain-autodiff: @forward has no parameters; mark them with {qtrain.param}}}
func.func @forward(%x: tensor<2x2xf32>) -> tensor<2x2xf32> { return %x : tensor<2x2xf32> }

// -----

// expected-error @+1 {{qtrain-autodiff: @forward must return the logits, then only state marked {qtrain.state} or loss terms marked {qtrain.loss_term}; result #1 is not}}
func.func @forward(%w: tensor<2x2xf32> {qtrain.param}) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  return %w, %w : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// expected-error @+1 {{qtrain-autodiff: the logits of @forward must be a static batch x classes f32 (or f64) tensor, got 'tensor<?x10xf32>'}}
func.func @forward(%w: tensor<2x2xf32> {qtrain.param}, %x: tensor<?x10xf32>) -> tensor<?x10xf32> {
  return %x : tensor<?x10xf32>
}

// -----

// A zero-size parameter: nothing to train, and no bundle holds it.
func.func @forward(%w: tensor<2x2xf32> {qtrain.param},
                   // expected-error @+1 {{qtrain-autodiff: parameter #1 of @forward, 'tensor<0x2xf32>', has no elements; parameters need every dimension above 0}}
                   %empty: tensor<0x2xf32> {qtrain.param},
                   %x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  return %x : tensor<2x2xf32>
}

// -----

// expected-error @+1 {{qtrain-autodiff: parameter #0 of @forward must be a static 'f32' tensor like the logits, got 'tensor<2x2xf64>'}}
func.func @forward(%w: tensor<2x2xf64> {qtrain.param}, %x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  return %x : tensor<2x2xf32>
}

// -----

// expected-error @+1 {{qtrain-autodiff: the module already has a symbol @train_step}}
module {
  func.func @forward(%w: tensor<2x2xf32> {qtrain.param}) -> tensor<2x2xf32> { return %w : tensor<2x2xf32> }
  func.func @train_step() { return }
}

// -----

// A parameter the loss does not depend on gets a zero gradient and a remark.
// expected-remark @+1 {{parameter #1 does not affect the loss; its gradient is zero}}
func.func @forward(%w: tensor<2x2xf32> {qtrain.param}, %unused: tensor<3xf32> {qtrain.param}) -> tensor<2x2xf32> {
  return %w : tensor<2x2xf32>
}

// -----

// An op without a reverse-mode rule is named, with its function.
func.func @forward(%w: tensor<4x2xf32> {qtrain.param}, %i: tensor<2x1xindex>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'tensor.gather' is not supported by qtrain-autodiff (in @train_step): it has no reverse-mode rule}}
  %c = tensor.gather %w[%i] gather_dims([0]) unique : (tensor<4x2xf32>, tensor<2x1xindex>) -> tensor<2x2xf32>
  return %c : tensor<2x2xf32>
}

// -----

// A scalar op in a linalg body without a derivative.
func.func @forward(%w: tensor<2x2xf32> {qtrain.param}) -> tensor<2x2xf32> {
  %init = tensor.empty() : tensor<2x2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<2x2xf32>) outs(%init : tensor<2x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    // expected-error @+1 {{'math.sin' in a linalg body is not supported by qtrain: no derivative rule}}
    %r = math.sin %a : f32
    linalg.yield %r : f32
  } -> tensor<2x2xf32>
  return %s : tensor<2x2xf32>
}

// -----

// A reduction combined with something other than add, max or min.
func.func @forward(%w: tensor<2x3xf32> {qtrain.param}) -> tensor<2x1xf32> {
  %one = arith.constant 1.0 : f32
  %init = tensor.empty() : tensor<2xf32>
  %fill = linalg.fill ins(%one : f32) outs(%init : tensor<2xf32>) -> tensor<2xf32>
  // expected-error @+1 {{'linalg.generic' is not supported by qtrain: reverse mode handles reductions that combine with addf, maximumf or minimumf only}}
  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%w : tensor<2x3xf32>) outs(%fill : tensor<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.mulf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %e = tensor.expand_shape %p [[0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
  return %e : tensor<2x1xf32>
}

// -----

// An access that is not a projected permutation (a 1-D convolution written
// as a generic).
func.func @forward(%w: tensor<6xf32> {qtrain.param}, %k: tensor<3xf32> {qtrain.param}) -> tensor<1x4xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'linalg.generic' is not supported by qtrain: operand #0 is read through a map that is not a projected permutation (affine_map<(d0, d1) -> (d0 + d1)>)}}
  %c = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i + j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%w, %k : tensor<6xf32>, tensor<3xf32>) outs(%fill : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = tensor.expand_shape %c [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
  return %e : tensor<1x4xf32>
}

// -----

// @eval_step keeps @forward's argument order, and the step ABI passes the
// parameters first.
// expected-error @+1 {{qtrain-autodiff: parameter #1 of @forward follows an input; parameters must come first}}
func.func @forward(%x: tensor<2x2xf32>, %w: tensor<2x2xf32> {qtrain.param}) -> tensor<2x2xf32> {
  return %w : tensor<2x2xf32>
}

// -----

// expected-error @+1 {{qtrain-autodiff: loss term #1 of @forward must be a 0-d tensor of the logits' element type, got 'tensor<2xf32>'}}
func.func @forward(%w: tensor<2x2xf32> {qtrain.param}, %t: tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2xf32> {qtrain.loss_term}) {
  return %w, %t : tensor<2x2xf32>, tensor<2xf32>
}
