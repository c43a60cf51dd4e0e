// RUN: qtrain-opt %s -split-input-file --qtrain-copies-to-linalg -verify-diagnostics | FileCheck %s

// A strided copy (as bufferization makes for a dilated adjoint) becomes a
// linalg.copy, which lowers to loops instead of a runtime call.
// CHECK-LABEL: func.func @strided
//  CHECK-SAME:   %[[SRC:.*]]: memref<2x3xf32>, %[[DST:.*]]: memref<2x3xf32, strided<[10, 2]>>
//   CHECK-NOT:   memref.copy
//       CHECK:   linalg.copy ins(%[[SRC]] : memref<2x3xf32>) outs(%[[DST]] : memref<2x3xf32, strided<[10, 2]>>)
func.func @strided(%src: memref<2x3xf32>, %dst: memref<2x3xf32, strided<[10, 2]>>) {
  memref.copy %src, %dst : memref<2x3xf32> to memref<2x3xf32, strided<[10, 2]>>
  return
}

// -----

// Unranked copies have no linalg form and stay.
// CHECK-LABEL: func.func @unranked
//       CHECK:   memref.copy
func.func @unranked(%src: memref<*xf32>, %dst: memref<*xf32>) {
  memref.copy %src, %dst : memref<*xf32> to memref<*xf32>
  return
}
