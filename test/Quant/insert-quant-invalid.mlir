// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --remarks-filter="qtrain-.*" --qtrain-insert-quant
// RUN: not qtrain-opt %s -split-input-file --qtrain-insert-quant="policy=fancy" 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not qtrain-opt %s -split-input-file --qtrain-insert-quant="schedule=cpt:3:99" 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not qtrain-opt %s -split-input-file --qtrain-insert-quant="policy=static schedule=cpt:3:8" 2>&1 | FileCheck %s --check-prefix=STATIC
// RUN: not qtrain-opt %s -split-input-file --qtrain-insert-quant="schedule=ldp:3:8" 2>&1 | FileCheck %s --check-prefix=LDP
// RUN: not qtrain-opt %s -split-input-file --qtrain-insert-quant="policy=ldp schedule=cpt:3:8" 2>&1 | FileCheck %s --check-prefix=LDPCYCLIC
// RUN: not qtrain-opt %s -split-input-file --qtrain-insert-quant="policy=ldp lambda=-1" 2>&1 | FileCheck %s --check-prefix=LAMBDA
// RUN: not qtrain-opt %s -split-input-file --qtrain-insert-quant="policy=ldp full-precision-layers=0" 2>&1 | FileCheck %s --check-prefix=NOLAYER
// RUN: not qtrain-opt %s -split-input-file --qtrain-insert-quant="grad-bits=17" 2>&1 | FileCheck %s --check-prefix=GRAD
// RUN: not qtrain-opt %s -split-input-file --qtrain-insert-quant="full-precision-layers=3" 2>&1 | FileCheck %s --check-prefix=LAYER
// RUN: not qtrain-opt %s -split-input-file --qtrain-insert-quant="policy=static bits=20" 2>&1 | FileCheck %s --check-prefix=BITS

// POLICY: error: qtrain-insert-quant: unknown policy 'fancy' (expected cpt, static, ldp or none)
// SCHEDULE: error: qtrain-insert-quant: invalid schedule 'cpt:3:99' at column 7: max bits '99' out of range [1, 16]
// STATIC: error: qtrain-insert-quant: policy=static needs a static schedule, got 'cpt:3:8'
// LDP: error: qtrain-insert-quant: a learned schedule needs policy=ldp, got policy=cpt with 'ldp:3:8'
// LDPCYCLIC: error: qtrain-insert-quant: policy=ldp needs a learned schedule (ldp:MIN:MAX), got 'cpt:3:8'
// NOLAYER: error: qtrain-insert-quant: policy=ldp: no layer of @forward is quantized, so there is no precision to learn
// LAMBDA: error: qtrain-insert-quant: lambda must be finite and non-negative and ldp-init finite, got lambda=-1
// GRAD: error: qtrain-insert-quant: grad-bits must be in [0, 16], got 17
// BITS: error: qtrain-insert-quant: invalid schedule 'static:20' at column 8
// LAYER: error: qtrain-insert-quant: full-precision layer 3 does not exist; @forward has 1 layers

// expected-error @+1 {{qtrain-insert-quant: no function @forward with a body in the module (set forward=<name>)}}
module {
  func.func private @forward(%x: tensor<2x2xf32>) -> tensor<2x2xf32>
}

// -----

// expected-error @+1 {{qtrain-insert-quant: @forward is already quantized}}
func.func @forward(%w: tensor<2x2xf32> {qtrain.param}, %x: tensor<2x2xf32>, %b: i32, %s: i64, %t: i32) -> tensor<2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<2x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%fill : tensor<2x2xf32>) -> tensor<2x2xf32>
  %e = qtrain.grad_quant %y, %b rounding stochastic seed(%s, %t) : tensor<2x2xf32>
  return %e : tensor<2x2xf32>
}

// -----

// A clean forward graph with one layer, for the option errors above.
func.func @forward(%w: tensor<2x2xf32> {qtrain.param}, %x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<2x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<2x2xf32>) -> tensor<2x2xf32>
  // expected-remark @below {{layer 0 quantized}}
  %y = linalg.matmul ins(%x, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%fill : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
