// RUN: qtrain-opt %s --qtrain-sink-views --gpu-kernel-outlining | FileCheck %s
// RUN: qtrain-opt %s --pass-pipeline='builtin.module(qtrain-cuda-step-kernels{chip=sm_90 format=ptx})' | FileCheck %s --check-prefix=PTX

// The kernel gets the buffer, not the strided view at an offset that the
// launch's body reads: the view is made again inside the kernel. Views
// taken from views come with their whole chain; a view the host still uses
// stays where it is too.

// The kernels' whole pipeline (bare pointers) takes them: one PTX module.
// PTX: gpu.binary @qtrain_step_kernels

// CHECK-LABEL: func.func @host(
// CHECK-SAME:      %[[BUF:.*]]: memref<4x8xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK:         %[[VIEW:.*]] = memref.subview %[[BUF]]
// CHECK:         gpu.launch_func @host_kernel::@host_kernel
// CHECK-SAME:      args(%[[BUF]] : memref<4x8xf32>, %[[OUT]] : memref<4xf32>)
// CHECK:         memref.load %[[VIEW]]
// CHECK-LABEL: gpu.func @host_kernel(
// CHECK-SAME:      %[[KBUF:.*]]: memref<4x8xf32>, %[[KOUT:.*]]: memref<4xf32>)
// CHECK:         %[[KVIEW:.*]] = memref.subview %[[KBUF]][1, 2] [2, 4] [1, 1]
// CHECK:         %[[KFLAT:.*]] = memref.subview %[[KVIEW]][0, 0] [1, 4] [1, 1]
// CHECK:         %[[KDENSE:.*]] = memref.collapse_shape %[[KOUT]]
// CHECK:         memref.load %[[KFLAT]]
// CHECK:         memref.store %{{.*}}, %[[KDENSE]]
func.func @host(%buffer: memref<4x8xf32>, %out: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %view = memref.subview %buffer[1, 2] [2, 4] [1, 1]
      : memref<4x8xf32> to memref<2x4xf32, strided<[8, 1], offset: 10>>
  %flat = memref.subview %view[0, 0] [1, 4] [1, 1]
      : memref<2x4xf32, strided<[8, 1], offset: 10>>
        to memref<4xf32, strided<[1], offset: 10>>
  %dense = memref.collapse_shape %out [[0]] : memref<4xf32> into memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %v0 = memref.load %flat[%tx] : memref<4xf32, strided<[1], offset: 10>>
    memref.store %v0, %dense[%tx] : memref<4xf32>
    gpu.terminator
  }
  %host = memref.load %view[%c0, %c0] : memref<2x4xf32, strided<[8, 1], offset: 10>>
  return %host : f32
}

// A choice between buffers (bufferization gives the scf.if the most general
// layout, and each branch a cast to it) yields the buffers themselves, and
// the cast after it is sunk like any view: the kernel takes a dense buffer.
// CHECK-LABEL: func.func @choice(
// CHECK:         %[[PICK:.*]] = scf.if %{{.*}} -> (memref<8xf32>) {
// CHECK-NEXT:      scf.yield %{{.*}} : memref<8xf32>
// CHECK:         } else {
// CHECK-NEXT:      scf.yield %{{.*}} : memref<8xf32>
// CHECK:         gpu.launch_func @choice_kernel::@choice_kernel
// CHECK-SAME:      args(%[[PICK]] : memref<8xf32>
// CHECK-LABEL: gpu.func @choice_kernel(
// CHECK-SAME:      %[[K:.*]]: memref<8xf32>,
// CHECK:         memref.cast %[[K]] : memref<8xf32> to memref<8xf32, strided<[?], offset: ?>>
func.func @choice(%flag: i1, %a: memref<8xf32>, %b: memref<8xf32>, %out: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %pick = scf.if %flag -> (memref<8xf32, strided<[?], offset: ?>>) {
    %ca = memref.cast %a : memref<8xf32> to memref<8xf32, strided<[?], offset: ?>>
    scf.yield %ca : memref<8xf32, strided<[?], offset: ?>>
  } else {
    %cb = memref.cast %b : memref<8xf32> to memref<8xf32, strided<[?], offset: ?>>
    scf.yield %cb : memref<8xf32, strided<[?], offset: ?>>
  }
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %v0 = memref.load %pick[%tx] : memref<8xf32, strided<[?], offset: ?>>
    memref.store %v0, %out[%tx] : memref<8xf32>
    gpu.terminator
  }
  return
}
