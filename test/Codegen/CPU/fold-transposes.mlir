// RUN: qtrain-opt %s --qtrain-fold-transposes --canonicalize -verify-diagnostics | FileCheck %s

// CHECK-DAG: #[[$T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$P:.*]] = affine_map<(d0, d1, d2) -> (d2, d0, d1)>

// A sum over the rows of a transposed tensor reads the original through the
// permuted map (a sum along its rows); the copy goes away.
// CHECK-LABEL: func.func @column_sums
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[$T]], #[[$OUT]]], iterator_types = ["reduction", "parallel"]} ins(%arg0 : tensor<4x16xi8>)
#in = affine_map<(k, n) -> (k, n)>
#out = affine_map<(k, n) -> (n)>
func.func @column_sums(%w: tensor<4x16xi8>, %init: tensor<4xi32>) -> tensor<4xi32> {
  %e = tensor.empty() : tensor<16x4xi8>
  %t = linalg.transpose ins(%w : tensor<4x16xi8>) outs(%e : tensor<16x4xi8>) permutation = [1, 0]
  %s = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]}
      ins(%t : tensor<16x4xi8>) outs(%init : tensor<4xi32>) {
  ^bb0(%x: i8, %acc: i32):
    %xe = arith.extsi %x : i8 to i32
    %r = arith.addi %acc, %xe : i32
    linalg.yield %r : i32
  } -> tensor<4xi32>
  return %s : tensor<4xi32>
}

// A 3-D permutation, and a transpose that something else (a named op)
// still reads: it stays, the generic reads around it.
// CHECK-LABEL: func.func @kept_for_other_users
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[$P]], {{.*}}]} ins(%arg0 : tensor<4x2x3xf32>)
// CHECK: linalg.copy ins(%[[T]]
#id3 = affine_map<(a, b, c) -> (a, b, c)>
func.func @kept_for_other_users(%x: tensor<4x2x3xf32>, %o: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %e = tensor.empty() : tensor<2x3x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x2x3xf32>) outs(%e : tensor<2x3x4xf32>) permutation = [1, 2, 0]
  %n = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t : tensor<2x3x4xf32>) outs(%o : tensor<2x3x4xf32>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  } -> tensor<2x3x4xf32>
  %c = linalg.copy ins(%t : tensor<2x3x4xf32>) outs(%o : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %n, %c : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// Buffers are left alone without a diagnostic (the pass works on tensors;
// qtrain-microkernels folds bufferized transposes into its calls).
// CHECK-LABEL: func.func @buffers
// CHECK: linalg.transpose
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<16x4xf32>)
func.func @buffers(%w: memref<4x16xf32>, %out: memref<16x4xf32>) {
  %t = memref.alloc() : memref<16x4xf32>
  linalg.transpose ins(%w : memref<4x16xf32>) outs(%t : memref<16x4xf32>) permutation = [1, 0]
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<16x4xf32>) outs(%out : memref<16x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  }
  memref.dealloc %t : memref<16x4xf32>
  return
}
