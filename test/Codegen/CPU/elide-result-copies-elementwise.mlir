// RUN: qtrain-opt %s -split-input-file --qtrain-elide-result-copies="elementwise-writers=true" | FileCheck %s
// RUN: qtrain-opt %s -split-input-file --qtrain-elide-result-copies | FileCheck %s --check-prefix=OFF

// elementwise-writers (the CUDA step, where the copy is a kernel launch):
// an epilogue y = init + t, elementwise, right before the copy, writes the
// out-parameter itself. init is an argument, which may be the
// out-parameter's memory: it is read with the output's map, each element
// before that element is written; t is the function's own buffer.
// CHECK-LABEL: func.func @epilogue(
//  CHECK-SAME:   %[[INIT:[^:]*]]: memref<4x8xf32>, %[[OUT:[^:]*]]: memref<4x8xf32>)
//       CHECK:   %[[T:.*]] = memref.alloc() : memref<4x8xf32>
//       CHECK:   linalg.generic {{.*}} ins(%[[INIT]], %[[T]] : memref<4x8xf32>, memref<4x8xf32>) outs(%[[OUT]] : memref<4x8xf32>)
//   CHECK-NOT:   memref.copy
// OFF-LABEL: func.func @epilogue(
//       OFF:   memref.copy
#id = affine_map<(i, j) -> (i, j)>
func.func @epilogue(%init: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %one = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%one : f32) outs(%t : memref<4x8xf32>)
  %y = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%init, %t : memref<4x8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  %c0 = arith.constant 0 : index
  memref.copy %y, %out : memref<4x8xf32> to memref<4x8xf32>
  memref.dealloc %t : memref<4x8xf32>
  return
}

// -----

// Kept: an argument read through another map (a transpose: the iteration
// writing out[i, j] reads in[j, i], which another iteration may already
// have written if they are the same memory), a generic that reads its
// output, and a reduction.
// CHECK-LABEL: func.func @kept(
//   CHECK-COUNT-3:   memref.copy
#t = affine_map<(i, j) -> (j, i)>
#idk = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @kept(%in: memref<4x4xf32>, %out1: memref<4x4xf32>, %out2: memref<4x4xf32>, %out3: memref<4xf32>) {
  %a = memref.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [#t, #idk], iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<4x4xf32>) outs(%a : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  memref.copy %a, %out1 : memref<4x4xf32> to memref<4x4xf32>
  %b = memref.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [#idk, #idk], iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<4x4xf32>) outs(%b : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  memref.copy %b, %out2 : memref<4x4xf32> to memref<4x4xf32>
  %c = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#idk, #row], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<4x4xf32>) outs(%c : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  memref.copy %c, %out3 : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Kept: something with memory effects between the generic and the copy
// (a store into the argument the generic read).
// CHECK-LABEL: func.func @between(
//       CHECK:   memref.store
//       CHECK:   memref.copy
func.func @between(%in: memref<4xf32>, %out: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : memref<4xf32>) outs(%a : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  memref.store %z, %in[%c0] : memref<4xf32>
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  return
}
