// RUN: qtrain-opt %s -split-input-file --qtrain-form-kernels -verify-diagnostics

// expected-error @below {{qtrain-form-kernels: no kernel sites (ops with qtrain.layer and qtrain.product); run qtrain-insert-quant and qtrain-autodiff first}}
module {
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

func.func @not_linalg(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{qtrain-form-kernels: a product of site tags must be a linalg op with one result and an integer qtrain.layer}}
  %y = arith.addf %x, %x {qtrain.layer = 0 : i64, qtrain.product = "forward"} : tensor<4xf32>
  return %y : tensor<4xf32>
}
