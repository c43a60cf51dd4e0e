// RUN: qtrain-opt %s --qtrain-merge-launches | FileCheck %s

// A quantizer's scalars (docs/passes/merge-launches.md): three
// one-thread launches with only device allocations, a dealloc and a view
// between them become one launch at the last, running the three bodies in
// their order; the dealloc moves after it. A launch of more blocks that
// reads what the run wrote, and a host access, end a run.
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
    %v = memref.load %s[] : memref<f32>
    memref.store %v, %x[%bx] : memref<128xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %z = arith.constant 0.0 : f32
    memref.store %z, %s[] : memref<f32>
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

// Launches of one block merge with a barrier between them, whether or not
// they depend on each other (the barrier orders the block's memory
// accesses): a block of 64 threads reducing with shared memory, then one
// thread using its result (which runs on thread 0, its ids 0 and its block
// size 1), then another block of 64 threads. Both launches' workgroup
// buffers are the merged launch's.
// CHECK-LABEL: func.func @one_block(
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads(%[[TX:[^,]*]], {{.*}}) in ({{.*}} = %c64, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-SAME:      workgroup(%[[S1:.*]] : memref<64xf32, #gpu.address_space<workgroup>>, %[[S2:.*]] : memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK:           memref.store {{.*}}, %[[S2]][%[[TX]]]
// CHECK:           gpu.barrier
// CHECK:           memref.store {{.*}}, %[[SUM:.*]][]
// CHECK:           gpu.barrier
// CHECK:           %[[LEAD:.*]] = arith.cmpi eq, %[[TX]], %c0
// CHECK-NEXT:      scf.if %[[LEAD]] {
// CHECK-NEXT:        memref.load %[[SUM]][]
// CHECK-NEXT:        arith.addi %c0{{.*}}, %c1
// CHECK:           }
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      memref.load
// CHECK-NEXT:      memref.store {{.*}}, %[[S1]][%[[TX]]]
// CHECK:           gpu.terminator
// CHECK-NOT:     gpu.launch
func.func @one_block(%in: memref<64xf32>, %out: memref<64xf32>, %ids: memref<index>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %sum = gpu.alloc () : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%shared : memref<64xf32, #gpu.address_space<workgroup>>) {
    %v = memref.load %in[%tx] : memref<64xf32>
    memref.store %v, %shared[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %lead = arith.cmpi eq, %tx, %c0 : index
    scf.if %lead {
      %s = memref.load %shared[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %s, %sum[] : memref<f32>
    }
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %s = memref.load %sum[] : memref<f32>
    %i = arith.addi %tx, %sx : index
    memref.store %i, %ids[] : memref<index>
    memref.store %s, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%shared : memref<64xf32, #gpu.address_space<workgroup>>) {
    %v = memref.load %out[%c0] : memref<64xf32>
    memref.store %v, %shared[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  gpu.dealloc %sum : memref<f32>
  return
}

// Independent launches of the same block and one-dimensional grids of
// different sizes merge into the larger grid: the smaller body runs on its
// first blocks, with its own grid size (here 2 of 8; the larger body keeps
// its own, either first or second). A smaller body with a barrier, or two
// that depend on each other, stay apart.
// CHECK-LABEL: func.func @grids(
// CHECK:         gpu.launch blocks(%[[BX:[^,]*]], {{.*}}) in (%[[GX:[^ ]*]] = %c8, {{.*}}) threads({{.*}}) in ({{.*}} = %c64,
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[BX]], %[[C2:.*]] : index
// CHECK-NEXT:      scf.if %[[IN]] {
// CHECK:             memref.store %{{.*}}, %{{.*}}[%[[BX]]] : memref<2xindex>
// CHECK:           }
// CHECK:           memref.store %[[GX]], %{{.*}}[%[[BX]]] : memref<8xindex>
// CHECK:           gpu.terminator
// CHECK-NEXT:    }
// CHECK-NEXT:    gpu.launch blocks
// CHECK:           gpu.barrier
// CHECK:         gpu.launch blocks
// CHECK:           memref.load %{{.*}} : memref<8xindex>
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @grids() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %small = gpu.alloc () : memref<2xindex>
  %large = gpu.alloc () : memref<8xindex>
  %other = gpu.alloc () : memref<2xindex>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %gx, %small[%bx] : memref<2xindex>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c8, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %gx, %large[%bx] : memref<8xindex>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    gpu.barrier
    memref.store %gx, %other[%bx] : memref<2xindex>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c8, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %large[%bx] : memref<8xindex>
    memref.store %v, %large[%bx] : memref<8xindex>
    gpu.terminator
  }
  return
}

// Kept apart: a smaller body that reads its thread id through
// gpu.thread_id (its guard could not replace it), and one-block launches
// whose workgroup buffers together pass 48 KiB. (That body merges with the
// next launch of its own size, which needs no guard.)
// CHECK-LABEL: func.func @unguardable(
// CHECK:         gpu.launch blocks({{.*}}) threads({{.*}}) in ({{.*}} = %c256,
// CHECK:         gpu.launch blocks({{.*}}) threads({{.*}}) in ({{.*}} = %c64,
// CHECK:           gpu.thread_id
// CHECK:           gpu.barrier
// CHECK:         gpu.launch blocks
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @unguardable(%out: memref<256xindex>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %a = gpu.alloc () : memref<256xindex>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %sx, %a[%tx] : memref<256xindex>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %t = gpu.thread_id x
    memref.store %t, %out[%t] : memref<256xindex>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%s1 : memref<8192xf32, #gpu.address_space<workgroup>>) {
    gpu.barrier
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%s2 : memref<8192xf32, #gpu.address_space<workgroup>>) {
    gpu.barrier
    gpu.terminator
  }
  return
}
