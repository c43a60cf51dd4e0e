// RUN: qtrain-opt %s --qtrain-merge-launches | FileCheck %s

// A quantizer's scalars (docs/passes/merge-launches.md): three
// one-thread launches with only device allocations, a dealloc and a view
// between them become one launch at the last, running the three bodies in
// their order; the dealloc moves after it. A launch of many threads, and
// a host access, end a run.
// CHECK-LABEL: func.func @scalars(
// CHECK:         %[[LO:.*]] = gpu.alloc () : memref<f32>
// CHECK:         %[[HI:.*]] = gpu.alloc () : memref<f32>
// CHECK:         %[[S:.*]] = gpu.alloc () : memref<f32>
// CHECK:         gpu.launch blocks
// CHECK:           memref.store %{{.*}}, %[[LO]][]
// CHECK:           memref.store %{{.*}}, %[[HI]][]
// CHECK:           arith.subf
// CHECK:           memref.store %{{.*}}, %[[S]][]
// CHECK:           gpu.terminator
// CHECK-NEXT:    }
// CHECK-NEXT:    gpu.dealloc %[[HI]]
// CHECK-NEXT:    gpu.launch blocks
// CHECK-SAME:      in (%{{.*}} = %c4,
// CHECK:         gpu.launch blocks
// CHECK:         memref.load
// CHECK-NEXT:    gpu.launch blocks
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @scalars(%x: memref<128xf32>, %flag: memref<f32>) -> f32 {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lo = gpu.alloc () : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<128xf32>
    memref.store %v, %lo[] : memref<f32>
    gpu.terminator
  }
  %hi = gpu.alloc () : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<128xf32>
    memref.store %v, %hi[] : memref<f32>
    gpu.terminator
  }
  %s = gpu.alloc () : memref<f32>
  %view = memref.subview %x[0] [64] [1] : memref<128xf32> to memref<64xf32, strided<[1]>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %a = memref.load %lo[] : memref<f32>
    %b = memref.load %hi[] : memref<f32>
    %d = arith.subf %b, %a : f32
    memref.store %d, %s[] : memref<f32>
    gpu.terminator
  }
  gpu.dealloc %hi : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  %f = memref.load %flag[] : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %s[] : memref<f32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return %f : f32
}

// Launches of the same grid and block merge when neither touches what the
// other writes (distinct device buffers); one that reads what the other
// wrote (another thread's element), or writes an argument the other reads
// (arguments may be the same memory), stays apart.
// CHECK-LABEL: func.func @same_shape(
// CHECK:         gpu.launch blocks
// CHECK:           memref.load
// CHECK:           memref.store
// CHECK:           memref.load
// CHECK:           memref.store
// CHECK-NEXT:      gpu.terminator
// CHECK:         gpu.launch blocks
// CHECK:         gpu.launch blocks
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @same_shape(%in: memref<256xf32>, %out: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %x = gpu.alloc () : memref<256xf32>
  %y = gpu.alloc () : memref<256xf32>
  // Writes x, reads in.
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %i = arith.addi %tx, %bx : index
    %v = memref.load %in[%i] : memref<256xf32>
    memref.store %v, %x[%i] : memref<256xf32>
    gpu.terminator
  }
  // Writes y, reads in: independent of the first, merged into this one.
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %in[%tx] : memref<256xf32>
    memref.store %v, %y[%tx] : memref<256xf32>
    gpu.terminator
  }
  // Reads x, which the merged launch writes: apart.
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %j = arith.subi %c128, %tx : index
    %v = memref.load %x[%j] : memref<256xf32>
    memref.store %v, %y[%tx] : memref<256xf32>
    gpu.terminator
  }
  // Reads y, which the launch before writes: apart.
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %y[%tx] : memref<256xf32>
    memref.store %v, %out[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}

// Launches it cannot reason about stay apart: an asynchronous launch (a
// token), and launches of one shape, many threads each, one of which calls
// a function of unknown effects.
// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-3: gpu.launch
// CHECK-NOT:     gpu.launch
func.func private @opaque(memref<256xf32>)
func.func @left_alone(%in: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %t = gpu.wait async
  %done = gpu.launch async [%t] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  gpu.wait [%done]
  %x = gpu.alloc () : memref<256xf32>
  %y = gpu.alloc () : memref<256xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %in[%tx] : memref<256xf32>
    memref.store %v, %y[%tx] : memref<256xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    func.call @opaque(%x) : (memref<256xf32>) -> ()
    gpu.terminator
  }
  return
}
