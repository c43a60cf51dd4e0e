// RUN: qtrain-opt %s --qtrain-conv-to-gemm="max-gathered=1000" | FileCheck %s

// An empty batch is left alone (it used to divide by zero).
// CHECK-LABEL: func.func @empty_batch
//   CHECK-NOT:   scf.for
//       CHECK:   linalg.conv_2d_nchw_fchw
func.func @empty_batch(%g: tensor<0x4x6x6xf32>, %w: tensor<3x4x3x3xf32>, %init: tensor<0x3x8x8xf32>) -> tensor<0x3x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %g low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<0x4x6x6xf32> to tensor<0x4x10x10xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%p, %w : tensor<0x4x10x10xf32>, tensor<3x4x3x3xf32>) outs(%init : tensor<0x3x8x8xf32>) -> tensor<0x3x8x8xf32>
  return %y : tensor<0x3x8x8xf32>
}
