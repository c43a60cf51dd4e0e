// RUN: qtrain-opt %s -split-input-file --qtrain-elide-result-copies | FileCheck %s

// A public variant that calls its shared body into a fresh buffer and copies
// that into its out-parameter: the call writes the out-parameter itself.
// CHECK-LABEL: func.func @site0_forward_b3
//  CHECK-SAME:   %[[X:.*]]: memref<8x16xf32>, %[[OUT:.*]]: memref<8x16xf32>
//   CHECK-NOT:   memref.alloc
//       CHECK:   call @site0_forward_shared(%[[X]], %{{.*}}, %[[OUT]])
//   CHECK-NOT:   memref.copy
//       CHECK:   return
func.func private @site0_forward_shared(memref<8x16xf32>, f32, memref<8x16xf32>)
func.func @site0_forward_b3(%x: memref<8x16xf32>, %out: memref<8x16xf32>) {
  %cst = arith.constant 7.0 : f32
  %alloc = memref.alloc() : memref<8x16xf32>
  call @site0_forward_shared(%x, %cst, %alloc) : (memref<8x16xf32>, f32, memref<8x16xf32>) -> ()
  memref.copy %alloc, %out : memref<8x16xf32> to memref<8x16xf32>
  return
}

// -----

// The buffer is read after the copy: the copy stays.
// CHECK-LABEL: func.func @used_after
//       CHECK:   %[[A:.*]] = memref.alloc
//       CHECK:   call @f(%[[A]])
//       CHECK:   memref.copy %[[A]]
//       CHECK:   memref.load %[[A]]
func.func private @f(memref<4xf32>)
func.func @used_after(%out: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %alloc = memref.alloc() : memref<4xf32>
  call @f(%alloc) : (memref<4xf32>) -> ()
  memref.copy %alloc, %out : memref<4xf32> to memref<4xf32>
  %v = memref.load %alloc[%c0] : memref<4xf32>
  return %v : f32
}

// -----

// The out-parameter has another use (it is read before the copy): the copy
// stays.
// CHECK-LABEL: func.func @target_read
//       CHECK:   memref.alloc
//       CHECK:   memref.copy
func.func private @g(memref<4xf32>, memref<4xf32>)
func.func @target_read(%out: memref<4xf32>) {
  %alloc = memref.alloc() : memref<4xf32>
  call @g(%out, %alloc) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.copy %alloc, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A view of the buffer escapes (a subview is a memref result): the copy
// stays.
// CHECK-LABEL: func.func @aliased
//       CHECK:   memref.alloc
//       CHECK:   memref.subview
//       CHECK:   memref.copy
func.func private @h(memref<2xf32, strided<[1]>>)
func.func @aliased(%out: memref<4xf32>) {
  %alloc = memref.alloc() : memref<4xf32>
  %view = memref.subview %alloc[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  call @h(%view) : (memref<2xf32, strided<[1]>>) -> ()
  memref.copy %alloc, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// The copy's target is not an argument, or the types differ: the copy stays.
// CHECK-LABEL: func.func @local_target
//       CHECK:   memref.copy
// CHECK-LABEL: func.func @layout
//       CHECK:   memref.copy
func.func private @f(memref<4xf32>)
func.func @local_target() {
  %alloc = memref.alloc() : memref<4xf32>
  %other = memref.alloc() : memref<4xf32>
  call @f(%alloc) : (memref<4xf32>) -> ()
  memref.copy %alloc, %other : memref<4xf32> to memref<4xf32>
  return
}
func.func @layout(%out: memref<4xf32, strided<[2]>>) {
  %alloc = memref.alloc() : memref<4xf32>
  call @f(%alloc) : (memref<4xf32>) -> ()
  memref.copy %alloc, %out : memref<4xf32> to memref<4xf32, strided<[2]>>
  return
}

// -----

// Code of the function itself writes the buffer (a bias gradient's sum):
// the copy stays, so that the sum keeps a fresh allocation that LLVM knows
// aliases nothing (writing the argument would change how the reassociated
// sum is vectorized, and so its rounding).
// CHECK-LABEL: func.func @own_code
//       CHECK:   %[[A:.*]] = memref.alloc
//       CHECK:   linalg.fill {{.*}} outs(%[[A]]
//       CHECK:   memref.copy %[[A]]
func.func @own_code(%out: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %alloc = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%alloc : memref<4xf32>)
  memref.copy %alloc, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// The step's entry points: the step ABI never lets buffers overlap where
// written, so their buffer arguments become llvm.noalias, and their own code
// may write an out-parameter (LLVM treats it as a fresh allocation).
// CHECK-LABEL: func.func @train_step
//  CHECK-SAME:   %[[IN:.*]]: memref<4xf32> {llvm.noalias}, %[[OUT:.*]]: memref<4xf32> {llvm.noalias}
//   CHECK-NOT:   memref.alloc
//       CHECK:   linalg.fill {{.*}} outs(%[[OUT]]
//   CHECK-NOT:   memref.copy
func.func @train_step(%in: memref<4xf32>, %out: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %alloc = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%alloc : memref<4xf32>)
  memref.copy %alloc, %out : memref<4xf32> to memref<4xf32>
  return
}
