// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --qtrain-strip-export

// torch-mlir's eval-mode export of a batch norm it cannot train.
func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %false = arith.constant false
  // expected-error @+1 {{qtrain-strip-export: this cf.assert always fails: "training is not supported for now"}}
  cf.assert %false, "training is not supported for now"
  return %x : tensor<1x4xf32>
}

// -----

// A condition that folds to false through a comparison.
func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %c3 = arith.constant 3 : i64
  %c4 = arith.constant 4 : i64
  %eq = arith.cmpi eq, %c3, %c4 : i64
  // expected-error @+1 {{qtrain-strip-export: this cf.assert always fails: "mismatched sizes"}}
  cf.assert %eq, "mismatched sizes"
  return %x : tensor<1x4xf32>
}

// -----

ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
func.func @forward(%x: tensor<1x4xf32>) -> tensor<i64> {
  // expected-error @+1 {{qtrain-strip-export: this reads the mutable ml_program.global @global_seed, which is not supported: a training step keeps no global state (only immutable globals are folded)}}
  %seed = ml_program.global_load @global_seed : tensor<i64>
  return %seed : tensor<i64>
}

// -----

ml_program.global private mutable @counter(dense<0> : tensor<i64>) : tensor<i64>
func.func @forward(%x: tensor<i64>) -> tensor<i64> {
  // expected-error @+1 {{qtrain-strip-export: 'ml_program.global_store' on ml_program.global @counter is not supported: a training step keeps no global state (only loads of an immutable global are folded)}}
  ml_program.global_store @counter = %x : tensor<i64>
  return %x : tensor<i64>
}

// -----

ml_program.global private @table(#ml_program.extern<tensor<4xf32>>) : tensor<4xf32>
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{qtrain-strip-export: ml_program.global @table has no value of type 'tensor<4xf32>' to fold this load into (an extern or undefined global)}}
  %t = ml_program.global_load_const @table : tensor<4xf32>
  return %t : tensor<4xf32>
}
