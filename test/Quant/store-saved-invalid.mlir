// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --qtrain-store-saved | FileCheck %s

// No training step to work on.
// expected-error @below {{qtrain-store-saved: no function @train_step}}
module {
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Left alone without a diagnostic: roundings with no code (8 exponent
// bits, or no saturation: inf has no code), and one read by no backward op.
// CHECK-LABEL: func.func @train_step
//   CHECK-NOT:   encode_float
module {
  func.func @train_step(%x: tensor<4xf32>, %e: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %a = qtrain.round_float %x to <8, 7, 0, saturate> role activation : tensor<4xf32>
    %b = qtrain.round_float %x to <5, 2, 0> role activation : tensor<4xf32>
    %c = qtrain.round_float %x to <4, 3, 4, saturate> role activation : tensor<4xf32>
    %init = tensor.empty() : tensor<4xf32>
    %g = linalg.add {qtrain.role = #qtrain<role error>} ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<4xf32>) -> tensor<4xf32>
    return %g, %c, %e : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}
