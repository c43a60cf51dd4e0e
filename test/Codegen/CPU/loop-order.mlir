// RUN: qtrain-opt %s -split-input-file --qtrain-loop-order -verify-diagnostics | FileCheck %s

// A GEMM (m, n, k) becomes (m, k, n): n, the output's last dimension, is
// innermost, where the right operand and the output are unit-stride and the
// left operand is invariant.
// CHECK: #[[$A:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK: #[[$B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK: #[[$C:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @matmul
//       CHECK:   linalg.generic {indexing_maps = [#[[$A]], #[[$B]], #[[$C]]], iterator_types = ["parallel", "reduction", "parallel"]}
func.func @matmul(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %c: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// A convolution (n, f, oh, ow, c, kh, kw) runs ow innermost: the input's
// last index is ow + kw (here on integers; an f32 one is left alone, for
// qtrain-microkernels' implicit GEMM).
// A small f32 one (below qtrain-microkernels' default 4096 multiply-adds)
// is reordered too.
// CHECK-LABEL: func.func @conv
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]
//       CHECK:   linalg.conv_2d_nchw_fchw
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]
func.func @conv(%x: tensor<2x3x8x8xi32>, %w: tensor<4x3x3x3xi32>, %o: tensor<2x4x6x6xi32>,
                %xf: tensor<2x3x8x8xf32>, %wf: tensor<4x3x3x3xf32>, %of: tensor<2x4x6x6xf32>,
                %sx: tensor<1x1x4x4xf32>, %sw: tensor<1x1x3x3xf32>, %so: tensor<1x1x2x2xf32>)
    -> (tensor<2x4x6x6xi32>, tensor<2x4x6x6xf32>, tensor<1x1x2x2xf32>) {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<2x3x8x8xi32>, tensor<4x3x3x3xi32>) outs(%o : tensor<2x4x6x6xi32>) -> tensor<2x4x6x6xi32>
  %rf = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xf, %wf : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%of : tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  %small = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%sx, %sw : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) outs(%so : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %r, %rf, %small : tensor<2x4x6x6xi32>, tensor<2x4x6x6xf32>, tensor<1x1x2x2xf32>
}

// -----

// A row sum would stride its input in the inner loop: left alone.
// CHECK-LABEL: func.func @row_sum
//       CHECK:   iterator_types = ["parallel", "reduction"]
func.func @row_sum(%a: tensor<8x16xf32>, %c: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<8x16xf32>) outs(%c : tensor<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Elementwise ops and ops already in order are left alone (still named).
// CHECK-LABEL: func.func @unchanged
//       CHECK:   linalg.matmul indexing_maps
//       CHECK:   linalg.add
func.func @unchanged(%a: tensor<8x16xf32>, %b: tensor<4x16xf32>, %c: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // (m, n, k) with B transposed: n is not B's last dimension, so moving it
  // inward would stride B.
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<8x16xf32>, tensor<4x16xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = linalg.add ins(%r, %r : tensor<8x4xf32>, tensor<8x4xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}

// -----

// Ops on buffers and reductions with several outputs are left alone.
// CHECK-LABEL: func.func @buffers
//       CHECK:   linalg.matmul ins(%arg0, %arg1 : memref<8x16xf32>, memref<16x4xf32>)
func.func @buffers(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return
}

// -----

// An integer sum whose innermost loop would stride its input (the column
// sums of W^T read from W: w[n, k] summed over k, written (k, n)): the
// contiguous reduction goes innermost instead (integer sums reassociate
// exactly; qtrain-promote-accumulators then keeps the sum in a register).
// CHECK-DAG: #[[$W:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$O:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @integer_row_sum
//       CHECK:   linalg.generic {indexing_maps = [#[[$W]], #[[$O]]], iterator_types = ["parallel", "reduction"]}
func.func @integer_row_sum(%w: tensor<4x16xi8>, %init: tensor<4xi32>) -> tensor<4xi32> {
  %s = linalg.generic {indexing_maps = [affine_map<(k, n) -> (n, k)>, affine_map<(k, n) -> (n)>], iterator_types = ["reduction", "parallel"]}
      ins(%w : tensor<4x16xi8>) outs(%init : tensor<4xi32>) {
  ^bb0(%x: i8, %acc: i32):
    %xe = arith.extsi %x : i8 to i32
    %r = arith.addi %acc, %xe : i32
    linalg.yield %r : i32
  } -> tensor<4xi32>
  return %s : tensor<4xi32>
}

// -----

// Not reordered: the body is not one associative combine of the output
// (out * 3 + x depends on the order the elements come in).
// CHECK-LABEL: func.func @order_dependent_sum
//       CHECK:   iterator_types = ["reduction", "parallel"]
func.func @order_dependent_sum(%w: tensor<4x16xi32>, %init: tensor<4xi32>) -> tensor<4xi32> {
  %s = linalg.generic {indexing_maps = [affine_map<(k, n) -> (n, k)>, affine_map<(k, n) -> (n)>], iterator_types = ["reduction", "parallel"]}
      ins(%w : tensor<4x16xi32>) outs(%init : tensor<4xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %c3 = arith.constant 3 : i32
    %m = arith.muli %acc, %c3 : i32
    %r = arith.addi %m, %x : i32
    linalg.yield %r : i32
  } -> tensor<4xi32>
  return %s : tensor<4xi32>
}
