// RUN: qtrain-opt %s --qtrain-sink-views --gpu-kernel-outlining | FileCheck %s
// RUN: not qtrain-opt %s --pass-pipeline='builtin.module(qtrain-cuda-step-kernels{chip=sm_90 format=ptx})' 2>&1 | FileCheck %s --check-prefix=REFUSED

// A view qtrain-sink-views cannot make inside the launch (here a choice
// between two views, not casts of dense buffers) stays a kernel parameter,
// and the kernels' bare-pointer conversion refuses it at compile time,
// rather than passing a pointer that drops the view's offset.
// CHECK-LABEL: gpu.func @pick_kernel(
// CHECK-SAME:      memref<4xf32, strided<[1], offset: ?>>
// REFUSED: sink-views-refused.mlir:[[@LINE+12]]:3: error: failed to legalize operation 'gpu.func'
func.func @pick(%flag: i1, %a: memref<8xf32>, %out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %view = scf.if %flag -> (memref<4xf32, strided<[1], offset: ?>>) {
    %low = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
    %cast = memref.cast %low : memref<4xf32, strided<[1]>> to memref<4xf32, strided<[1], offset: ?>>
    scf.yield %cast : memref<4xf32, strided<[1], offset: ?>>
  } else {
    %high = memref.subview %a[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
    %cast = memref.cast %high : memref<4xf32, strided<[1], offset: 4>> to memref<4xf32, strided<[1], offset: ?>>
    scf.yield %cast : memref<4xf32, strided<[1], offset: ?>>
  }
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %v0 = memref.load %view[%tx] : memref<4xf32, strided<[1], offset: ?>>
    memref.store %v0, %out[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}
