// RUN: qtrain-opt %s --qtrain-hoist-argument-reads | FileCheck %s

// Reads of an argument nothing writes (promotion flags; also read in a
// kernel) move before the first launch, their index constants with them.
// CHECK-LABEL: func.func @flags(
// CHECK-SAME:    %[[FLAGS:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<8xf32>, %[[I:.*]]: index
// CHECK-NEXT:    %[[C5:.*]] = arith.constant 5 : index
// CHECK-NEXT:    %[[F5:.*]] = memref.load %[[FLAGS]][%[[C5]]]
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[F2:.*]] = memref.load %[[FLAGS]][%[[C2]]]
// CHECK:         gpu.launch
// CHECK:         arith.cmpf one, %[[F2]]
// CHECK:         gpu.launch
// CHECK:         arith.cmpf one, %[[F5]]
// A read that is not at the top level, or at an index the entry does not
// know, stays.
// CHECK:         scf.if
// CHECK-NEXT:      memref.load %[[FLAGS]][%[[I]]]
func.func @flags(%flags: memref<8xf32>, %out: memref<8xf32>, %i: index) -> (i1, i1, f32) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %flags[%tx] : memref<8xf32>
    memref.store %v, %out[%tx] : memref<8xf32>
    gpu.terminator
  }
  %c2 = arith.constant 2 : index
  %f2 = memref.load %flags[%c2] : memref<8xf32>
  %p2 = arith.cmpf one, %f2, %zero : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  %c5 = arith.constant 5 : index
  %f5 = memref.load %flags[%c5] : memref<8xf32>
  %p5 = arith.cmpf one, %f5, %zero : f32
  %r = scf.if %p5 -> f32 {
    %x = memref.load %flags[%i] : memref<8xf32>
    scf.yield %x : f32
  } else {
    scf.yield %zero : f32
  }
  return %p2, %p5, %r : i1, i1, f32
}

// An argument the function writes (the host, or a kernel) keeps its reads
// where they are.
// CHECK-LABEL: func.func @written(
// CHECK:         memref.store
// CHECK-NEXT:    arith.constant 3 : index
// CHECK-NEXT:    memref.load
// CHECK:         gpu.launch
// CHECK:         arith.constant 4 : index
// CHECK-NEXT:    memref.load
func.func @written(%a: memref<8xf32>, %b: memref<8xf32>) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %a[%c0] : memref<8xf32>
  %c3 = arith.constant 3 : index
  %x = memref.load %a[%c3] : memref<8xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %one, %b[%tx] : memref<8xf32>
    gpu.terminator
  }
  %c4 = arith.constant 4 : index
  %y = memref.load %b[%c4] : memref<8xf32>
  return %x, %y : f32, f32
}
