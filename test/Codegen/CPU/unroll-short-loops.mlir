// RUN: qtrain-opt %s --qtrain-unroll-short-loops -verify-diagnostics | FileCheck %s
// RUN: qtrain-opt %s --qtrain-unroll-short-loops=max-trip-count=8 | FileCheck %s --check-prefix=EIGHT
// RUN: not qtrain-opt %s --qtrain-unroll-short-loops=max-trip-count=0 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: max-trip-count must be at least 1, got 0

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

// Bad input draws no diagnostic: a dynamic trip count and a loop that
// never runs are left alone.
// CHECK-LABEL: func.func @not_static
//       CHECK:   scf.for %{{.*}} = %c0 to %arg2
//       CHECK:   scf.for %{{.*}} = %c3 to %c3
func.func @not_static(%v: memref<?xf32>, %x: f32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %k = %c0 to %n step %c1 {
    memref.store %x, %v[%k] : memref<?xf32>
  }
  scf.for %k = %c3 to %c3 step %c1 {
    memref.store %x, %v[%k] : memref<?xf32>
  }
  return
}
