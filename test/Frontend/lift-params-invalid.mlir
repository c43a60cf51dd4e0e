// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --qtrain-lift-params

// expected-error @+1 {{qtrain-lift-params: no function @forward with a body in the module (set forward=<name>)}}
module {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> { return %x : tensor<2xf32> }
}

// -----

// A weight in a function @forward calls cannot become a parameter of
// @forward without changing the callee.
func.func private @layer(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{qtrain-lift-params: this constant of @layer, which @forward calls, would need lifting; only constants of @forward become parameters (inline the call first)}}
  %w = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %e = tensor.empty() : tensor<2xf32>
  %0 = linalg.add ins(%x, %w : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @layer(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Integer tensors are not weights either.
// expected-error @+1 {{qtrain-lift-params: @forward has no constant to lift (a float tensor constant with at least 2 elements, not a fill or padding splat) and no {qtrain.param} argument: nothing would be trained}}
func.func @forward(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %fill = arith.constant dense<0.0> : tensor<1x2xf32>
  %ids = arith.constant dense<[0, 1]> : tensor<2xi64>
  %small = arith.constant dense<3.0> : tensor<1xf32>
  %e = tensor.empty() : tensor<1x2xf32>
  %0 = linalg.add ins(%x, %fill : tensor<1x2xf32>, tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}
