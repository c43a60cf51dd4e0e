// RUN: qtrain-opt %s --qtrain-reuse-dying-inputs | FileCheck %s
// RUN: qtrain-opt %s --qtrain-reuse-dying-inputs -verify-diagnostics -split-input-file | FileCheck %s --check-prefix=BAD

#id = affine_map<(i) -> (i)>

// A rounding of a value only it reads (through a reshape) writes into that
// value's buffer: the input becomes the init. A second elementwise op on a
// value that has another reader keeps its own init.
// CHECK-LABEL: func.func @dying
//       CHECK:   %[[X:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4xf32>)
//       CHECK:   %[[C:.*]] = tensor.collapse_shape %[[X]]
//       CHECK:   %[[R:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<8xf32>) outs(%[[C]] : tensor<8xf32>)
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<8xf32>
//       CHECK:   linalg.generic {{.*}} ins(%[[R]] : tensor<8xf32>) outs(%[[E]] : tensor<8xf32>)
#id2 = affine_map<(i, j) -> (i, j)>
func.func @dying(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %x = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<2x4xf32>) outs(%b : tensor<2x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %e0 = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%c : tensor<8xf32>) outs(%e0 : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%r : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %y = arith.maximumf %v, %z : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  return %r, %m : tensor<8xf32>, tensor<8xf32>
}

// Left alone: a function argument (its buffer belongs to the caller), an
// init the body reads (an accumulation), a transposed read, and another
// type.
// CHECK-LABEL: func.func @left_alone
//   CHECK-NOT:   outs(%arg0
//   CHECK-NOT:   ins(%[[V:.*]] : {{.*}}) outs(%[[V]]
#t = affine_map<(i, j) -> (j, i)>
func.func @left_alone(%a: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf16>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %r0 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %p = arith.negf %acc : tensor<4x4xf32>
  %r1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %q = arith.negf %acc : tensor<4x4xf32>
  %r2 = linalg.generic {indexing_maps = [#t, #id2], iterator_types = ["parallel", "parallel"]} ins(%q : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  %w = arith.negf %acc : tensor<4x4xf32>
  %e16 = tensor.empty() : tensor<4x4xf16>
  %r3 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<4x4xf32>) outs(%e16 : tensor<4x4xf16>) {
  ^bb0(%v: f32, %o: f16):
    %h = arith.truncf %v : f32 to f16
    linalg.yield %h : f16
  } -> tensor<4x4xf16>
  return %r0, %r1, %r2, %r3 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf16>
}

// -----

// Bad input is left alone without a diagnostic: a generic on buffers (no
// tensors to reuse) and one on dynamic shapes whose input has another user.
// BAD-LABEL: func.func @bad
//       BAD:   linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
//       BAD:   linalg.generic {{.*}} outs(%{{.*}} : tensor<?xf32>)
#b = affine_map<(i) -> (i)>
func.func @bad(%m: memref<4xf32>, %o: memref<4xf32>, %t: tensor<?xf32>, %n: index) -> (tensor<?xf32>, tensor<?xf32>) {
  linalg.generic {indexing_maps = [#b, #b], iterator_types = ["parallel"]} ins(%m : memref<4xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%v: f32, %w: f32):
    linalg.yield %v : f32
  }
  %x = arith.negf %t : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#b, #b], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%v: f32, %w: f32):
    %y = arith.negf %v : f32
    linalg.yield %y : f32
  } -> tensor<?xf32>
  return %r, %x : tensor<?xf32>, tensor<?xf32>
}
