// RUN: qtrain-opt %s --qtrain-parallelize --canonicalize | FileCheck %s
// RUN: qtrain-opt %s --qtrain-parallelize=grain=1024 --canonicalize | FileCheck %s --check-prefix=FINE
// RUN: not qtrain-opt %s --qtrain-parallelize=max-chunks=1 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: qtrain-parallelize: grain must be at least 1 and max-chunks at least 2, got 32768 and 1

// An elementwise loop of 65536 is cut into chunks of grain 32768; the
// element index the body reads is offset by the chunk's start, so that
// Philox counters and the like see the same index as in one loop.
// CHECK-LABEL: func.func @elementwise
//   CHECK-DAG:   %[[C32768:.*]] = arith.constant 32768 : index
//   CHECK-DAG:   %[[C65536:.*]] = arith.constant 65536 : index
//       CHECK:   scf.parallel (%[[IV:.*]]) = (%{{.*}}) to (%[[C65536]]) step (%[[C32768]])
//       CHECK:     memref.subview %{{.*}}[%[[IV]]] [32768] [1]
//       CHECK:     linalg.generic
//       CHECK:       %[[I:.*]] = linalg.index 0
//       CHECK:       affine.apply #{{.*}}(%[[IV]])[%[[I]]]
// FINE-LABEL: func.func @elementwise
//       FINE:   arith.constant 1024 : index
//       FINE:   scf.parallel
#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @elementwise(%a: memref<65536xf32>, %b: memref<65536xf32>) {
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%a : memref<65536xf32>) outs(%b : memref<65536xf32>) {
  ^bb0(%x: f32, %y: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %s = arith.addf %x, %f : f32
    linalg.yield %s : f32
  }
  return
}

// Row sums split their rows: each sum stays whole, in its order.
// CHECK-LABEL: func.func @rowsum
//       CHECK:   scf.parallel
//       CHECK:     linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
//       CHECK:   return
func.func @rowsum(%a: memref<256x1024xf32>, %b: memref<256xf32>) {
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<256x1024xf32>) outs(%b : memref<256xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// A reduction outside the parallel loop: the parallel one is split, the
// reduction runs whole inside each chunk.
// CHECK-LABEL: func.func @colsum
//       CHECK:   scf.parallel
//       CHECK:     memref.subview %{{.*}}[0, %{{.*}}] [1024, 64] [1, 1]
func.func @colsum(%a: memref<1024x256xf32>, %b: memref<256xf32>) {
  linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<1024x256xf32>) outs(%b : memref<256xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// A full reduction has no parallel loop, and a small op not enough work:
// both stay as they are.
// CHECK-LABEL: func.func @total
//   CHECK-NOT:   scf.parallel
// CHECK-LABEL: func.func @small
//   CHECK-NOT:   scf.parallel
func.func @total(%a: memref<65536xf32>, %b: memref<f32>) {
  linalg.generic {indexing_maps = [#id1, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%a : memref<65536xf32>) outs(%b : memref<f32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}
func.func @small(%a: memref<1024xf32>, %b: memref<1024xf32>) {
  linalg.copy ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>)
  return
}

// An in-place transpose reads elements other chunks write: it stays
// sequential.
// CHECK-LABEL: func.func @transposed_in_place
//   CHECK-NOT:   scf.parallel
func.func @transposed_in_place(%a: memref<512x512xf32>) {
  linalg.generic {indexing_maps = [#t, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<512x512xf32>) outs(%a : memref<512x512xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}

// The same buffer written through two views (a shifted copy) also stays
// sequential.
// CHECK-LABEL: func.func @shifted_copy
//   CHECK-NOT:   scf.parallel
func.func @shifted_copy(%a: memref<65600xf32>) {
  %lo = memref.subview %a[0] [65536] [1] : memref<65600xf32> to memref<65536xf32, strided<[1]>>
  %hi = memref.subview %a[64] [65536] [1] : memref<65600xf32> to memref<65536xf32, strided<[1], offset: 64>>
  linalg.copy ins(%hi : memref<65536xf32, strided<[1], offset: 64>>) outs(%lo : memref<65536xf32, strided<[1]>>)
  return
}
