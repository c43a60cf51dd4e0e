// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --remarks-filter="qtrain-.*" --qtrain-assign-precision="budget=1028"
// RUN: split-file %s %t
// RUN: not qtrain-opt %t/options.mlir --qtrain-assign-precision 2>&1 | FileCheck %s --check-prefix=NEITHER
// RUN: not qtrain-opt %t/options.mlir --qtrain-assign-precision="ratio=0.5 budget=1KiB" 2>&1 | FileCheck %s --check-prefix=NEITHER
// RUN: not qtrain-opt %t/options.mlir --qtrain-assign-precision="ratio=1.5" 2>&1 | FileCheck %s --check-prefix=RATIO
// RUN: not qtrain-opt %t/options.mlir --qtrain-assign-precision="budget=4QiB" 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not qtrain-opt %t/options.mlir --qtrain-assign-precision="budget=-4" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not qtrain-opt %t/options.mlir --qtrain-assign-precision="ratio=0.5 order=biggest" 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not qtrain-opt %t/options.mlir --qtrain-assign-precision="ratio=0.5 order=scored scores=1,2,3" 2>&1 | FileCheck %s --check-prefix=SCORES
// RUN: not qtrain-opt %t/options.mlir --qtrain-assign-precision="ratio=0.5 order=scored" 2>&1 | FileCheck %s --check-prefix=NO-SCORES
// RUN: not qtrain-opt %t/options.mlir --qtrain-assign-precision="ratio=0.5 order=scored scores=nan,1" 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not qtrain-opt %t/options.mlir --qtrain-assign-precision="ratio=0.5 report=%t/no-such-dir/r.json" 2>&1 | FileCheck %s --check-prefix=REPORT

// NEITHER: error: qtrain-assign-precision: give exactly one of ratio=R (in [0, 1]) and budget=BYTES
// RATIO: error: qtrain-assign-precision: ratio 1.500000 is outside [0, 1]
// BUDGET: error: qtrain-assign-precision: budget '4QiB' is not a byte count (e.g. 1048576, 512KiB, 4MiB)
// NEGATIVE: error: qtrain-assign-precision: budget '-4' is not a byte count (e.g. 1048576, 512KiB, 4MiB)
// ORDER: error: qtrain-assign-precision: unknown search order 'biggest'; expected largest, smallest, random or scored
// SCORES: error: qtrain-assign-precision: the scored order needs one score per group: 3 scores for 2 groups
// NO-SCORES: error: qtrain-assign-precision: the scored order needs one score per group: 0 scores for 2 groups
// NAN: error: qtrain-assign-precision: the score of group 0 is NaN
// REPORT: error: qtrain-assign-precision: cannot write the report '{{.*}}no-such-dir/r.json':

// expected-error @+1 {{qtrain-assign-precision: no function @forward}}
module {
  func.func private @forward(%x: tensor<4x3xf32>) -> tensor<4x3xf32>
}

// -----

// expected-error @+1 {{qtrain-assign-precision: input #0 has a dynamic shape}}
func.func @forward(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  return %x : tensor<?x3xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
// expected-error @+1 {{qtrain-assign-precision: parameter #0 has a dynamic shape}}
func.func @forward(%b: tensor<?xf32> {qtrain.param}, %x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x3xf32>, tensor<?xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

func.func @forward(%x: tensor<4x3xf32>, %n: index) -> tensor<?x3xf32> {
  // expected-error @+1 {{qtrain-assign-precision: the output is not a statically shaped tensor: 'tensor<?x3xf32>'}}
  %y = tensor.extract_slice %x[0, 0] [%n, 3] [1, 1] : tensor<4x3xf32> to tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

// Every module has one output Y.
#id = affine_map<(i, j) -> (i, j)>
func.func @forward(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %e = tensor.empty() : tensor<4x3xf32>
  // expected-error @+1 {{qtrain-assign-precision: an op with 2 results reads data; the memory model needs one output tensor per module}}
  %y:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x3xf32>) outs(%e, %e : tensor<4x3xf32>, tensor<4x3xf32>) {
  ^bb0(%v: f32, %o: f32, %p: f32):
    linalg.yield %v, %v : f32, f32
  } -> (tensor<4x3xf32>, tensor<4x3xf32>)
  return %y#0, %y#1 : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// No input argument: nothing starts the first group.
// expected-error @+1 {{qtrain-assign-precision: @forward has no input tensor}}
func.func @forward(%w: tensor<4x3xf32> {qtrain.param}) -> tensor<4x3xf32> {
  return %w : tensor<4x3xf32>
}

// -----

// The conv -> relu -> pool -> linear graph of assign-precision.mlir: all
// high is 1964 bytes, all low (the smallest footprint) 1029 bytes.
#bias4 = affine_map<(n, c, h, w) -> (c)>
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#bias2 = affine_map<(n, f) -> (f)>
#id2 = affine_map<(n, f) -> (n, f)>
// expected-error @+1 {{qtrain-assign-precision: budget 1028 bytes is below the smallest footprint this search reaches, 1029 bytes (all groups low; all high: 1964 bytes)}}
func.func @forward(
    %w1: tensor<2x1x3x3xf32> {qtrain.param}, %b1: tensor<2xf32> {qtrain.param},
    %w2: tensor<3x8xf32> {qtrain.param}, %b2: tensor<3xf32> {qtrain.param},
    %x: tensor<4x1x6x6xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c_init = tensor.empty() : tensor<4x2x4x4xf32>
  %c_bias = linalg.generic {indexing_maps = [#bias4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b1 : tensor<2xf32>) outs(%c_init : tensor<4x2x4x4xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<4x2x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w1 : tensor<4x1x6x6xf32>, tensor<2x1x3x3xf32>) outs(%c_bias : tensor<4x2x4x4xf32>) -> tensor<4x2x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<4x2x4x4xf32>) outs(%c_init : tensor<4x2x4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x2x4x4xf32>
  %p_init = tensor.empty() : tensor<4x2x2x2xf32>
  %p_fill = linalg.fill ins(%ninf : f32) outs(%p_init : tensor<4x2x2x2xf32>) -> tensor<4x2x2x2xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%r, %win : tensor<4x2x4x4xf32>, tensor<2x2xf32>) outs(%p_fill : tensor<4x2x2x2xf32>) -> tensor<4x2x2x2xf32>
  %flat = tensor.collapse_shape %p [[0], [1, 2, 3]] : tensor<4x2x2x2xf32> into tensor<4x8xf32>
  %w2t_init = tensor.empty() : tensor<8x3xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<3x8xf32>) outs(%w2t_init : tensor<8x3xf32>) permutation = [1, 0]
  %h_init = tensor.empty() : tensor<4x3xf32>
  %h_bias = linalg.generic {indexing_maps = [#bias2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b2 : tensor<3xf32>) outs(%h_init : tensor<4x3xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<4x3xf32>
  %h = linalg.matmul ins(%flat, %w2t : tensor<4x8xf32>, tensor<8x3xf32>) outs(%h_bias : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %h : tensor<4x3xf32>
}

// -----

//--- options.mlir
// A linear layer for the option errors above (which come before any
// remark), with the budget of the first RUN line: 1028 bytes hold it all
// high. G0 = Y, GY of the input (2 * 20) + P, GP of the matmul (2 * 15) = 70
// elements, G1 = Y, GY of the matmul (2 * 12) = 24; 94 * 2 bytes = 188 bytes.
// expected-remark @+1 {{qtrain-assign-precision: order largest, r = 0: 0 of 2 groups low (covering 0.0000 of the elements); tensor memory 188 B -> 188 B (1.000x)}}
func.func @forward(%w: tensor<5x3xf32> {qtrain.param},
    // expected-remark @+1 {{group 0 (input 1): 70 elements (0.745 of all), 140 B -> 140 B, high}}
    %x: tensor<4x5xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x3xf32>) -> tensor<4x3xf32>
  // expected-remark-re @+1 {{group 1 (matmul at {{.*}}.mlir:{{[0-9]+}}): 24 elements (0.255 of all), 48 B -> 48 B, high}}
  %y = linalg.matmul ins(%x, %w : tensor<4x5xf32>, tensor<5x3xf32>) outs(%fill : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
