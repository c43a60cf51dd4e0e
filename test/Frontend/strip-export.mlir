// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --remarks-filter="qtrain-.*" --qtrain-strip-export | FileCheck %s

// torch-mlir's output: the unused seed is dropped, the entry point @main
// becomes @forward, an assert that folds to true is erased with the
// comparison that computed it, and one on a value is erased with a remark.
// CHECK-LABEL: module attributes {torch.debug_module_name = "Net"}
//   CHECK-NOT:   ml_program
//       CHECK:   func.func @forward(%[[X:[a-z0-9]+]]: tensor<1x4xf32>) -> tensor<1x4xf32>
//   CHECK-NOT:     cf.assert
//   CHECK-NOT:     arith.cmpi
//       CHECK:     return %[[X]]
module attributes {torch.debug_module_name = "Net"} {
  // expected-remark @+1 {{dropped ml_program.global @global_seed, which nothing uses}}
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  // expected-remark @+1 {{renamed the entry point @main to @forward}}
  func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %c1 = arith.constant 1 : i64
    %c2 = arith.constant 2 : i64
    %lt = arith.cmpi slt, %c1, %c2 : i64
    cf.assert %lt, "mismatching contracting dimension"
    %c0 = arith.constant 0 : index
    %d = tensor.dim %arg0, %c0 : tensor<1x4xf32>
    %ok = arith.cmpi eq, %d, %c0 : index
    // expected-remark @+1 {{dropped cf.assert "dynamic size": its condition is not a constant, and a training step cannot raise}}
    cf.assert %ok, "dynamic size"
    return %arg0 : tensor<1x4xf32>
  }
}

// -----

// An immutable global read with global_load_const or global_load becomes a
// constant; a @forward that exists keeps its name and other functions theirs.
// CHECK-LABEL: module {
//       CHECK:   func.func @forward
//       CHECK:   %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
//       CHECK:   %[[D:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
//       CHECK:   linalg.add ins(%[[C]], %[[D]]
// CHECK-LABEL: func.func @main
module {
  // expected-remark @+1 {{folded ml_program.global @scale into 2 constants}}
  ml_program.global private @scale(dense<[1.0, 2.0]> : tensor<2xf32>) : tensor<2xf32>
  func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
    %a = ml_program.global_load_const @scale : tensor<2xf32>
    %b = ml_program.global_load @scale : tensor<2xf32>
    %e = tensor.empty() : tensor<2xf32>
    %0 = linalg.add ins(%a, %b : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}
