// RUN: qtrain-opt %s --qtrain-conv-to-gemm -verify-diagnostics | FileCheck %s

// An f32 convolution stays a named op: qtrain-microkernels runs it as an
// implicit GEMM after bufferization (no patch buffer).
// CHECK-LABEL: func.func @conv
// CHECK-NEXT: %[[Y:.*]] = linalg.conv_2d_nchw_fchw
// CHECK-NEXT: return %[[Y]]
func.func @conv(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %init: tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32> {
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}

// A convolution's weight gradient (a windowed read of x): both operands
// gathered into (rows, K) order, one GEMM C[f, (c, kh, kw)] += E[f, k] X[(c, kh, kw), k].
#x = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, c, oh + kh, ow + kw)>
#e = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, f, oh, ow)>
#dw = affine_map<(f, c, kh, kw, n, oh, ow) -> (f, c, kh, kw)>
// CHECK-LABEL: func.func @weight_grad
// CHECK: %[[EG:.*]] = tensor.collapse_shape {{.*}} into tensor<4x72xf32>
// CHECK: %[[XG:.*]] = tensor.collapse_shape {{.*}} into tensor<27x72xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[EG]], %[[XG]] : tensor<4x72xf32>, tensor<27x72xf32>) outs(%{{.*}} : tensor<4x27xf32>)
// CHECK:   arith.mulf
// CHECK:   arith.addf
func.func @weight_grad(%xin: tensor<2x3x8x8xf32>, %err: tensor<2x4x6x6xf32>, %init: tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32> {
  %dw = linalg.generic {indexing_maps = [#e, #x, #dw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%err, %xin : tensor<2x4x6x6xf32>, tensor<2x3x8x8xf32>) outs(%init : tensor<4x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3x3x3xf32>
  return %dw : tensor<4x3x3x3xf32>
}

// Left alone: integer convolutions (qtrain-integer-kernels' business), and
// a plain GEMM (no windowed operand: the microkernels serve it directly).
// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: linalg.matmul ins(%arg3, %arg4
func.func @left_alone(%x: tensor<2x3x8x8xi32>, %w: tensor<4x3x3x3xi32>, %init: tensor<2x4x6x6xi32>,
                      %a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> (tensor<2x4x6x6xi32>, tensor<8x8xf32>) {
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<2x3x8x8xi32>, tensor<4x3x3x3xi32>) outs(%init : tensor<2x4x6x6xi32>) -> tensor<2x4x6x6xi32>
  %m = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y, %m : tensor<2x4x6x6xi32>, tensor<8x8xf32>
}

// Bad input is left alone without a diagnostic: a convolution with a
// dynamic batch (no static patch matrix).
// CHECK-LABEL: func.func @dynamic_batch
// CHECK: linalg.conv_2d_nchw_fchw
func.func @dynamic_batch(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %init: tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32> {
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  return %y : tensor<?x4x6x6xf32>
}
