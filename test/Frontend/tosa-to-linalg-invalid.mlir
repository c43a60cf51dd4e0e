// RUN: qtrain-opt %s --qtrain-tosa-to-linalg -verify-diagnostics

// TOSA control flow is not lowered by the pipeline (docs/models.md, "Not
// supported"): upstream's conversion reports the op it cannot legalize, at
// its location, and the pipeline fails.
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = tosa.while_loop (%a = %x) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
    %c = "tosa.const"() <{values = dense<true> : tensor<i1>}> : () -> tensor<i1>
    // expected-error @+1 {{failed to legalize operation 'tosa.yield'}}
    tosa.yield %c : tensor<i1>
  } do {
  ^bb0(%a: tensor<2x8xf32>):
    tosa.yield %a : tensor<2x8xf32>
  }
  return %w : tensor<2x8xf32>
}
