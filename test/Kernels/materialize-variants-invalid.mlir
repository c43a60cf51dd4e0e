// RUN: not qtrain-opt %s --qtrain-autodiff --qtrain-form-kernels --qtrain-materialize-variants="bits=3:8 grad-bits=8 max-variants=10" 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not qtrain-opt %s --qtrain-autodiff --qtrain-form-kernels --qtrain-materialize-variants="bits=9:3" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not qtrain-opt %s --qtrain-autodiff --qtrain-form-kernels --qtrain-materialize-variants="grad-bits=8,x" 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: echo 'func.func @forward() { return }' | not qtrain-opt --qtrain-materialize-variants 2>&1 | FileCheck %s --check-prefix=NOSITES

// BUDGET: error: qtrain-materialize-variants: 2 forward products x 7 + 1 backward products x 7 = 21 variant functions exceed max-variants=10
// RANGE: error: qtrain-materialize-variants: bits: invalid bit list '9:3': the range is empty (min > max)
// LIST: error: qtrain-materialize-variants: grad-bits: invalid bit list '8,x': 'x' is not a bitwidth in [1, 16] (write MIN:MAX or B,B,...)
// NOSITES: error: qtrain-materialize-variants: no kernel sites (qtrain.kernel ops); run qtrain-form-kernels first

func.func @forward(%w: tensor<3x5xf32> {qtrain.param}, %x: tensor<4x5xf32>, %bits: i32 {qtrain.control = "bits"}) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %wq = qtrain.fake_quant %w, %bits role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<3x5xf32>
  %init = tensor.empty() : tensor<4x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      {qtrain.layer = 0 : i64, qtrain.product = "forward"} ins(%x, %wq : tensor<4x5xf32>, tensor<3x5xf32>) outs(%fill : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
