// RUN: qtrain-opt %s -split-input-file --qtrain-free-early | FileCheck %s --enable-var-scope

// Each dealloc moves to right after the last use of its buffer, views
// included, and each alloc to right before its first use; the order of the
// rest is unchanged.
// CHECK-LABEL: func.func @chain
//       CHECK:   %[[A:.*]] = memref.alloc() : memref<4xf32>
//       CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<4xf32>)
//       CHECK:   %[[V:.*]] = memref.subview %[[A]][0] [2] [1]
//       CHECK:   linalg.copy ins(%[[V]] : {{.*}}) outs(%{{.*}} : memref<2xf32>)
//  CHECK-NEXT:   memref.dealloc %[[A]] : memref<4xf32>
//  CHECK-NEXT:   %[[B:.*]] = memref.alloc() : memref<4xf32>
//  CHECK-NEXT:   linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<4xf32>)
//  CHECK-NEXT:   linalg.copy ins(%[[B]] : memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
//  CHECK-NEXT:   memref.dealloc %[[B]] : memref<4xf32>
//  CHECK-NEXT:   return
func.func @chain(%c: f32, %out2: memref<2xf32>, %out4: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  %b = memref.alloc() : memref<4xf32>
  %v = memref.subview %a[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  linalg.copy ins(%v : memref<2xf32, strided<[1]>>) outs(%out2 : memref<2xf32>)
  linalg.fill ins(%c : f32) outs(%b : memref<4xf32>)
  linalg.copy ins(%b : memref<4xf32>) outs(%out4 : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

// A use inside a loop counts as a use by the loop.
// CHECK-LABEL: func.func @loop
//       CHECK:   scf.for
//       CHECK:     memref.load %[[A:.*]][
//       CHECK:   }
//  CHECK-NEXT:   memref.dealloc %[[A]]
//  CHECK-NEXT:   linalg.fill
func.func @loop(%c: f32, %n: index, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%c0] : memref<4xf32>
    memref.store %x, %out[%i] : memref<4xf32>
  }
  linalg.fill ins(%c : f32) outs(%out : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// A dealloc inside a guard, for a buffer defined outside it, stays.
// CHECK-LABEL: func.func @guarded
//       CHECK:   linalg.fill
//       CHECK:   scf.if
//  CHECK-NEXT:     memref.dealloc
func.func @guarded(%c: f32, %own: i1, %out: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
  linalg.fill ins(%c : f32) outs(%out : memref<4xf32>)
  scf.if %own {
    memref.dealloc %a : memref<4xf32>
  }
  return
}

// -----

// Allocate late: a buffer allocated before unrelated work (as bufferization
// places a tensor.empty's buffer) moves to right before its first user, so
// it is not alive while %a is; one allocated right before its user stays.
// CHECK-LABEL: func.func @allocate_late
//       CHECK:   %[[A:.*]] = memref.alloc() : memref<4xf32>
//  CHECK-NEXT:   linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<4xf32>)
//  CHECK-NEXT:   linalg.copy ins(%[[A]] : memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
//  CHECK-NEXT:   memref.dealloc %[[A]]
//  CHECK-NEXT:   %[[B:.*]] = memref.alloc() : memref<8xf32>
//  CHECK-NEXT:   memref.subview %[[B]]
func.func @allocate_late(%c: f32, %out: memref<4xf32>, %out8: memref<8xf32>) {
  %b = memref.alloc() : memref<8xf32>
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
  %v = memref.subview %b[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  linalg.fill ins(%c : f32) outs(%v : memref<4xf32, strided<[1]>>)
  linalg.copy ins(%b : memref<8xf32>) outs(%out8 : memref<8xf32>)
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<8xf32>
  return
}
