// RUN: qtrain-opt %s --qtrain-unroll-short-loops | FileCheck %s
// RUN: qtrain-opt %s --qtrain-unroll-short-loops=max-trip-count=8 | FileCheck %s --check-prefix=EIGHT

// An innermost loop of 4 is unrolled (its four stores remain, the loop
// goes); one of 5, and a loop that holds another loop, are kept.
// CHECK-LABEL: func.func @short
//       CHECK:   scf.for %{{.*}} = %c0 to %c8 step %c1
//   CHECK-NOT:     scf.for
// CHECK-COUNT-4:     memref.store
//       CHECK:   }
//       CHECK:   scf.for %{{.*}} = %c0 to %c5 step %c1
// EIGHT-LABEL: func.func @short
//   EIGHT-NOT:   %c5 step
func.func @short(%m: memref<8x4xf32>, %v: memref<5xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      memref.store %x, %m[%i, %j] : memref<8x4xf32>
    }
  }
  scf.for %k = %c0 to %c5 step %c1 {
    memref.store %x, %v[%k] : memref<5xf32>
  }
  return
}

// A short loop that accumulates into memory stays a loop
// (qtrain-promote-accumulators keeps its sum in a register).
// CHECK-LABEL: func.func @accumulates
//       CHECK:   scf.for
func.func @accumulates(%v: memref<3xf32>, %acc: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %k = %c0 to %c3 step %c1 {
    %a = memref.load %acc[] : memref<f32>
    %x = memref.load %v[%k] : memref<3xf32>
    %s = arith.addf %a, %x : f32
    memref.store %s, %acc[] : memref<f32>
  }
  return
}
