// RUN: qtrain-opt %s --qtrain-promote-accumulators -verify-diagnostics | FileCheck %s

// A row sum as convert-linalg-to-loops writes it, into a fresh buffer
// (which the argument it reads cannot alias): the accumulator is carried
// through the inner loop's iter_args, loaded before and stored after.
// CHECK-LABEL: func.func @row_sums
// CHECK: %[[OUT:.*]] = memref.alloc
// CHECK: scf.for %[[I:.*]] = {{.*}} {
// CHECK:   %[[INIT:.*]] = memref.load %[[OUT]][%[[I]]]
// CHECK:   %[[SUM:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (i32) {
// CHECK:     %[[V:.*]] = memref.load %arg0
// CHECK:     %[[E:.*]] = arith.extsi %[[V]]
// CHECK:     %[[N:.*]] = arith.addi %[[ACC]], %[[E]]
// CHECK:     scf.yield %[[N]]
// CHECK:   memref.store %[[SUM]], %[[OUT]][%[[I]]]
func.func @row_sums(%w: memref<64x128xi8>) -> memref<64xi32> {
  %out = memref.alloc() : memref<64xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %k = %c0 to %c128 step %c1 {
      %v = memref.load %w[%i, %k] : memref<64x128xi8>
      %acc = memref.load %out[%i] : memref<64xi32>
      %e = arith.extsi %v : i8 to i32
      %s = arith.addi %acc, %e : i32
      memref.store %s, %out[%i] : memref<64xi32>
    }
  }
  return %out : memref<64xi32>
}

// A total over both loops: promoted through the inner loop, then the outer.
// CHECK-LABEL: func.func @total
// CHECK: %[[INIT:.*]] = memref.load %[[T:.*]][] : memref<i32>
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]]) -> (i32)
// CHECK:   scf.for {{.*}} -> (i32)
// CHECK-NOT: memref.store
// CHECK: memref.store %[[R]], %[[T]][]
func.func @total(%w: memref<64x128xi32>) -> memref<i32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %t = memref.alloc() : memref<i32>
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %k = %c0 to %c128 step %c1 {
      %v = memref.load %w[%i, %k] : memref<64x128xi32>
      %acc = memref.load %t[] : memref<i32>
      %s = arith.addi %acc, %v : i32
      memref.store %s, %t[] : memref<i32>
    }
  }
  return %t : memref<i32>
}

// Not promoted: the loop also writes a buffer that may be the
// accumulator's (two function arguments may alias).
// CHECK-LABEL: func.func @may_alias
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: memref.store %{{.*}}, %arg1[]
func.func @may_alias(%w: memref<128xi32>, %out: memref<i32>, %other: memref<128xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  scf.for %k = %c0 to %c128 step %c1 {
    %v = memref.load %w[%k] : memref<128xi32>
    %acc = memref.load %out[] : memref<i32>
    %s = arith.addi %acc, %v : i32
    memref.store %s, %out[] : memref<i32>
    memref.store %s, %other[%k] : memref<128xi32>
  }
  return
}

// Not promoted: a loop-carried buffer (%b) may be the accumulator's
// allocation itself.
// CHECK-LABEL: func.func @loop_carried_buffer
// CHECK: scf.for {{.*}} iter_args(%[[B:.*]] = %{{.*}}) -> (memref<4xi32>)
// CHECK:   scf.for
// CHECK-NOT: iter_args
// CHECK:     memref.load %[[B]]
// CHECK:     memref.store
func.func @loop_carried_buffer() -> memref<4xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<4xi32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%b = %a) -> (memref<4xi32>) {
    scf.for %k = %c0 to %c4 step %c1 {
      %v = memref.load %a[%c0] : memref<4xi32>
      %w = memref.load %b[%c0] : memref<4xi32>
      %s = arith.addi %v, %w : i32
      memref.store %s, %a[%c0] : memref<4xi32>
    }
    scf.yield %b : memref<4xi32>
  }
  return %r : memref<4xi32>
}

// Left alone without a diagnostic: a call whose effects are unknown, and an
// element that moves with the loop.
// CHECK-LABEL: func.func @unknown_or_moving
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: call @opaque
// CHECK: scf.for
// CHECK-NOT: iter_args
func.func private @opaque()
func.func @unknown_or_moving(%w: memref<128xi32>) -> memref<128xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %t = memref.alloc() : memref<128xi32>
  scf.for %k = %c0 to %c128 step %c1 {
    %v = memref.load %w[%k] : memref<128xi32>
    %acc = memref.load %t[%c0] : memref<128xi32>
    %s = arith.addi %acc, %v : i32
    func.call @opaque() : () -> ()
    memref.store %s, %t[%c0] : memref<128xi32>
  }
  scf.for %k = %c0 to %c128 step %c1 {
    %v = memref.load %w[%k] : memref<128xi32>
    %acc = memref.load %t[%k] : memref<128xi32>
    %s = arith.addi %acc, %v : i32
    memref.store %s, %t[%k] : memref<128xi32>
  }
  return %t : memref<128xi32>
}

// In the CUDA step's kernels (qtrain-lower-cuda-step runs this pass after
// qtrain-map-step-to-gpu): a thread's sum over k into its element of a
// device buffer, reading another. Two gpu.alloc buffers never overlap, so
// the sum is carried in a register; the kernel stores once.
// CHECK-LABEL: func.func @kernel_row_sums
// CHECK: gpu.launch
// CHECK:   %[[INIT:.*]] = memref.load %[[OUT:.*]][%[[T:.*]]] : memref<256xf32>
// CHECK:   %[[SUM:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]]) -> (f32) {
// CHECK-NOT: memref.store
// CHECK:   memref.store %[[SUM]], %[[OUT]][%[[T]]]
// CHECK:   gpu.terminator
func.func @kernel_row_sums() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %in = gpu.alloc () : memref<256x128xf32>
  %out = gpu.alloc () : memref<256xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    scf.for %k = %c0 to %c128 step %c1 {
      %v = memref.load %in[%tx, %k] : memref<256x128xf32>
      %acc = memref.load %out[%tx] : memref<256xf32>
      %s = arith.addf %acc, %v : f32
      memref.store %s, %out[%tx] : memref<256xf32>
    }
    gpu.terminator
  }
  return
}

// The same kernel over two arguments of the function, which the caller may
// have given the same memory: left as it is.
// CHECK-LABEL: func.func @kernel_arguments
// CHECK: gpu.launch
// CHECK:   scf.for
// CHECK-NOT: iter_args
// CHECK:     memref.store
func.func @kernel_arguments(%in: memref<256x128xf32>, %out: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    scf.for %k = %c0 to %c128 step %c1 {
      %v = memref.load %in[%tx, %k] : memref<256x128xf32>
      %acc = memref.load %out[%tx] : memref<256xf32>
      %s = arith.addf %acc, %v : f32
      memref.store %s, %out[%tx] : memref<256xf32>
    }
    gpu.terminator
  }
  return
}
