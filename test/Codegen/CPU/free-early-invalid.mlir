// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --qtrain-free-early | FileCheck %s

// Buffers whose uses the pass cannot see all of keep their dealloc where it
// is, without a diagnostic: one that a select may alias (arith.select has
// no view-flow model here), and one used after its block by the op that
// holds it.
// CHECK-LABEL: func.func @select_alias
//       CHECK:   linalg.copy
//  CHECK-NEXT:   memref.dealloc
//  CHECK-NEXT:   return
func.func @select_alias(%c: f32, %p: i1, %other: memref<4xf32>, %out: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  %s = arith.select %p, %a, %other : memref<4xf32>
  linalg.fill ins(%c : f32) outs(%out : memref<4xf32>)
  linalg.copy ins(%s : memref<4xf32>) outs(%out : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// CHECK-LABEL: func.func @used_after_the_region
//       CHECK:   scf.execute_region
//       CHECK:     memref.dealloc
//       CHECK:     scf.yield
func.func @used_after_the_region(%c: f32, %out: memref<4xf32>) {
  %r = scf.execute_region -> memref<4xf32> {
    %a = memref.alloc() : memref<4xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
    linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
    linalg.fill ins(%c : f32) outs(%out : memref<4xf32>)
    memref.dealloc %a : memref<4xf32>
    scf.yield %out : memref<4xf32>
  }
  return
}
