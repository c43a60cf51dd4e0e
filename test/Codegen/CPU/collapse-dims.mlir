// RUN: qtrain-opt %s --qtrain-collapse-dims --split-input-file -verify-diagnostics | FileCheck %s

// An elementwise op on NCHW tensors runs as one loop over all elements.
// CHECK-LABEL: func.func @relu
//       CHECK:   %[[IN:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1, 2, 3]] : tensor<4x3x5x5xf32> into tensor<300xf32>
//       CHECK:   %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[IN]] : tensor<300xf32>) outs(%{{.*}} : tensor<300xf32>)
//       CHECK:     arith.maximumf
//       CHECK:   tensor.expand_shape %[[R]] {{\[}}[0, 1, 2, 3]] output_shape [4, 3, 5, 5] : tensor<300xf32> into tensor<4x3x5x5xf32>
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @relu(%x: tensor<4x3x5x5xf32>) -> tensor<4x3x5x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3x5x5xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<4x3x5x5xf32>) outs(%e : tensor<4x3x5x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x3x5x5xf32>
  return %r : tensor<4x3x5x5xf32>
}

// -----

// A bias gradient: the reduction over (h, w) reads rows of 25; n stays on
// its own (the channel loop lies between n and h).
// CHECK-LABEL: func.func @bias_grad
//       CHECK:   %[[IN:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<4x3x5x5xf32> into tensor<4x3x25xf32>
//       CHECK:   linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[IN]] : tensor<4x3x25xf32>) outs(%{{.*}} : tensor<3xf32>)
#in = affine_map<(n, c, h, w) -> (n, c, h, w)>
#out = affine_map<(n, c, h, w) -> (c)>
func.func @bias_grad(%g: tensor<4x3x5x5xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%g : tensor<4x3x5x5xf32>) outs(%f : tensor<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// A transposed read keeps its loops apart: (d0, d1) is not contiguous in
// the input's map.
// CHECK-LABEL: func.func @transpose
//   CHECK-NOT:   tensor.collapse_shape
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
#t = affine_map<(i, j) -> (j, i)>
#i2 = affine_map<(i, j) -> (i, j)>
func.func @transpose(%x: tensor<4x6xf32>) -> tensor<6x4xf32> {
  %e = tensor.empty() : tensor<6x4xf32>
  %r = linalg.generic {indexing_maps = [#t, #i2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%e : tensor<6x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<6x4xf32>
  return %r : tensor<6x4xf32>
}

// -----

// linalg.index would have to be recomputed from the merged index: left
// alone, and so are maps with constant results.
// CHECK-LABEL: func.func @indexed
//   CHECK-NOT:   tensor.collapse_shape
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
#c = affine_map<(i, j) -> (0, j)>
#j2 = affine_map<(i, j) -> (i, j)>
func.func @indexed(%x: tensor<4x6xf32>, %y: tensor<1x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %e = tensor.empty() : tensor<4x6xf32>
  %r = linalg.generic {indexing_maps = [#j2, #j2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %s = arith.addf %in, %f : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  %r2 = linalg.generic {indexing_maps = [#c, #j2], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<1x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x6xf32>
  return %r, %r2 : tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// A batched integer contraction (b, t, f, k): b and t merge into the GEMM's
// rows, and the op keeps its discardable attributes (qtrain-microkernels
// picks the bit-serial kernel by qtrain.code_bits).
#x = affine_map<(b, t, f, k) -> (b, t, k)>
#w = affine_map<(b, t, f, k) -> (f, k)>
#y = affine_map<(b, t, f, k) -> (b, t, f)>
// CHECK-LABEL: func.func @keeps_attributes
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins({{.*}} : tensor<12x8xi8>, tensor<5x8xi8>) outs({{.*}} : tensor<12x5xi32>) attrs = {qtrain.code_bits = array<i32: 2, 2>}
func.func @keeps_attributes(%x: tensor<3x4x8xi8>, %w: tensor<5x8xi8>, %init: tensor<3x4x5xi32>) -> tensor<3x4x5xi32> {
  %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<3x4x8xi8>, tensor<5x8xi8>) outs(%init : tensor<3x4x5xi32>) attrs = {qtrain.code_bits = array<i32: 2, 2>} {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %ae = arith.extsi %a : i8 to i32
    %be = arith.extsi %b : i8 to i32
    %p = arith.muli %ae, %be : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<3x4x5xi32>
  return %r : tensor<3x4x5xi32>
}

// -----

// Bad input is left alone without a diagnostic: dynamic shapes (no static
// size to merge) and a generic on buffers.
#d = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @left_alone_dynamic
//   CHECK-NOT:   tensor.collapse_shape
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins({{.*}} : tensor<?x4xf32>)
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins({{.*}} : memref<3x4xf32>)
func.func @left_alone_dynamic(%x: tensor<?x4xf32>, %o: tensor<?x4xf32>, %m: memref<3x4xf32>, %mo: memref<3x4xf32>) -> tensor<?x4xf32> {
  %r = linalg.generic {indexing_maps = [#d, #d], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x4xf32>) outs(%o : tensor<?x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<?x4xf32>
  linalg.generic {indexing_maps = [#d, #d], iterator_types = ["parallel", "parallel"]} ins(%m : memref<3x4xf32>) outs(%mo : memref<3x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return %r : tensor<?x4xf32>
}

// -----

// Strided and partial slices (the windows of a max-pooling gradient, which
// update the gradient in place) are not one run of memory: collapsing them
// would make bufferization copy each slice out and back. A slice of whole
// rows (a batch chunk) still merges.
#e4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
// CHECK-LABEL: func.func @strided_window
//   CHECK-NOT:   tensor.collapse_shape
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
//       CHECK:   tensor.insert_slice
func.func @strided_window(%dy: tensor<2x3x4x4xf32>, %dx: tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32> {
  %win = tensor.extract_slice %dx[0, 0, 0, 1] [2, 3, 4, 4] [1, 1, 2, 2] : tensor<2x3x8x8xf32> to tensor<2x3x4x4xf32>
  %sum = linalg.generic {indexing_maps = [#e4, #e4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dy : tensor<2x3x4x4xf32>) outs(%win : tensor<2x3x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4x4xf32>
  %r = tensor.insert_slice %sum into %dx[0, 0, 0, 1] [2, 3, 4, 4] [1, 1, 2, 2] : tensor<2x3x4x4xf32> into tensor<2x3x8x8xf32>
  return %r : tensor<2x3x8x8xf32>
}
// CHECK-LABEL: func.func @batch_chunk
//       CHECK:   tensor.collapse_shape {{.*}} into tensor<96xf32>
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel"]}
func.func @batch_chunk(%x: tensor<8x3x4x4xf32>, %o: tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> {
  %part = tensor.extract_slice %x[2, 0, 0, 0] [2, 3, 4, 4] [1, 1, 1, 1] : tensor<8x3x4x4xf32> to tensor<2x3x4x4xf32>
  %r = linalg.generic {indexing_maps = [#e4, #e4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%part : tensor<2x3x4x4xf32>) outs(%o : tensor<2x3x4x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<2x3x4x4xf32>
  return %r : tensor<2x3x4x4xf32>
}
