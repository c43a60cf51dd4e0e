// RUN: qtrain-opt %s --split-input-file --qtrain-arguments-to-device | FileCheck %s

// An entry point's scalar arguments that kernels use (the Philox step and
// seed, the learning rate) go to one record of 64-bit slots (on the stack,
// made in the entry block), filled on the host before the first launch and
// copied to the device; each launch
// loads its slots and recomputes the host's arithmetic on them. The
// argument only the host uses (the precision, for the dispatch) and the
// buffer read before any launch keep their places.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:    %[[BITS:[^:]*]]: i32, %[[SEED:[^:]*]]: i64, %[[STEP:[^:]*]]: i32, %[[LR:[^:]*]]: f32, %[[W:[^:]*]]: memref<256xf32>, %[[FLAGS:[^:]*]]: memref<1xi8>)
// CHECK:         %[[HOST:.*]] = memref.alloca() : memref<3xi64>
// CHECK:         memref.load %[[FLAGS]]
// CHECK:         memref.store %[[SEED]], %[[HOST]][%c0{{.*}}]
// CHECK:         %[[S:.*]] = arith.extui %[[STEP]] : i32 to i64
// CHECK:         memref.store %[[S]], %[[HOST]][%c1{{.*}}]
// CHECK:         %[[LRBITS:.*]] = arith.bitcast %[[LR]] : f32 to i32
// CHECK:         %[[L:.*]] = arith.extui %[[LRBITS]] : i32 to i64
// CHECK:         memref.store %[[L]], %[[HOST]][%c2{{.*}}]
// CHECK:         %[[RECORD:.*]] = gpu.alloc () : memref<3xi64>
// CHECK:         gpu.memcpy %[[RECORD]], %[[HOST]]
// CHECK:         gpu.launch
// CHECK:           %[[SEEDBITS:.*]] = memref.load %[[RECORD]][%c0{{.*}}] : memref<3xi64>
// CHECK:           %[[HIGH:.*]] = arith.shrui %[[SEEDBITS]], %c32_i64
// CHECK:           %[[KEY:.*]] = arith.trunci %[[HIGH]] : i64 to i32
// CHECK:           %[[STEPBITS:.*]] = memref.load %[[RECORD]][%c1{{.*}}] : memref<3xi64>
// CHECK:           %[[STEPIN:.*]] = arith.trunci %[[STEPBITS]] : i64 to i32
// CHECK:           arith.xori %[[KEY]], %[[STEPIN]] : i32
// CHECK:         gpu.launch
// CHECK:           %[[LRSLOT:.*]] = memref.load %[[RECORD]][%c2{{.*}}] : memref<3xi64>
// CHECK:           %[[LR32:.*]] = arith.trunci %[[LRSLOT]] : i64 to i32
// CHECK:           %[[LRIN:.*]] = arith.bitcast %[[LR32]] : i32 to f32
// CHECK:           arith.mulf %[[LRIN]],
// CHECK:         arith.cmpi eq, %[[BITS]]
// CHECK:         call @weight_grad(%[[W]], %[[SEED]], %[[STEP]], %[[RECORD]])
// CHECK:         gpu.dealloc %[[RECORD]] : memref<3xi64>
// CHECK-NEXT:    return
func.func @train_step(%bits: i32, %seed: i64, %step: i32, %lr: f32,
                      %w: memref<256xf32>, %flags: memref<1xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c32 = arith.constant 32 : i64
  %flag = memref.load %flags[%c0] : memref<1xi8>
  %high = arith.shrui %seed, %c32 : i64
  %key = arith.trunci %high : i64 to i32
  %noise = gpu.alloc () : memref<256xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = arith.xori %key, %step : i32
    memref.store %x, %noise[%tx] : memref<256xi32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %w[%tx] : memref<256xf32>
    %u = arith.mulf %lr, %v : f32
    memref.store %u, %w[%tx] : memref<256xf32>
    gpu.terminator
  }
  %c0_i32 = arith.constant 0 : i32
  %fp32 = arith.cmpi eq, %bits, %c0_i32 : i32
  scf.if %fp32 {
    func.call @weight_grad(%w, %seed, %step) : (memref<256xf32>, i64, i32) -> ()
  }
  gpu.dealloc %noise : memref<256xi32>
  return
}

// A function every caller passes recorded values of the same slots takes
// its callers' record; its launches load from it. Between barriers, each
// part loads what it uses right before it, so nothing crosses a barrier.
// CHECK-LABEL: func.func private @weight_grad(
// CHECK-SAME:    %[[W:[^:]*]]: memref<256xf32>, %{{[^:]*}}: i64, %{{[^:]*}}: i32, %[[RECORD:[^:]*]]: memref<3xi64>)
// CHECK:         gpu.launch
// CHECK:           gpu.barrier
// CHECK-NEXT:      arith.cmpi
// CHECK:           %[[SLOT:.*]] = memref.load %[[RECORD]][%c1{{.*}}] : memref<3xi64>
// CHECK-NEXT:      %[[STEP:.*]] = arith.trunci %[[SLOT]] : i64 to i32
// CHECK-NEXT:      scf.if
// CHECK:             arith.sitofp %[[STEP]]
func.func private @weight_grad(%w: memref<256xf32>, %seed: i64, %step: i32) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c0 = arith.constant 0 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1)
             workgroup(%shared : memref<256xf32, #gpu.address_space<workgroup>>) {
    %v = memref.load %w[%tx] : memref<256xf32>
    memref.store %v, %shared[%tx] : memref<256xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %s = arith.sitofp %step : i32 to f32
      %a = memref.load %shared[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
      %b = arith.addf %a, %s : f32
      memref.store %b, %w[%c0] : memref<256xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// Two entry points with records of their own call one function: it takes
// the first caller's record type; the other caller, whose record differs,
// makes one for the call from the call's operands (zeros elsewhere), its
// host record made in the caller's entry block.
// CHECK-LABEL: func.func @first(
// CHECK:         %[[RECORD:.*]] = gpu.alloc () : memref<2xi64>
// CHECK:         call @scale(%{{.*}}, %{{.*}}, %[[RECORD]])
// CHECK-LABEL: func.func @second(
// CHECK-SAME:    %[[LR:[^:]*]]: f32,
// CHECK:         %[[HOST:.*]] = memref.alloca() : memref<2xi64>
// CHECK:         %[[OWN:.*]] = gpu.alloc () : memref<1xi64>
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         memref.store %[[ZERO]], %[[HOST]][%c0{{.*}}]
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[LR]] : f32 to i32
// CHECK:         %[[SLOT:.*]] = arith.extui %[[BITS]] : i32 to i64
// CHECK:         memref.store %[[SLOT]], %[[HOST]][%c1{{.*}}]
// CHECK:         %[[CALL:.*]] = gpu.alloc () : memref<2xi64>
// CHECK:         gpu.memcpy %[[CALL]], %[[HOST]]
// CHECK:         call @scale(%{{.*}}, %[[LR]], %[[CALL]])
// CHECK-NEXT:    gpu.dealloc %[[CALL]]
// CHECK-LABEL: func.func private @scale(
// CHECK-SAME:    %{{[^:]*}}: memref<8xf32>, %{{[^:]*}}: f32, %[[R:[^:]*]]: memref<2xi64>)
// CHECK:           memref.load %[[R]][%c1{{.*}}] : memref<2xi64>
func.func @first(%step: i32, %lr: f32, %x: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %s = arith.sitofp %step : i32 to f32
    memref.store %s, %x[%tx] : memref<8xf32>
    gpu.terminator
  }
  func.call @scale(%x, %lr) : (memref<8xf32>, f32) -> ()
  return
}
func.func @second(%lr: f32, %x: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    memref.store %lr, %x[%tx] : memref<8xf32>
    gpu.terminator
  }
  func.call @scale(%x, %lr) : (memref<8xf32>, f32) -> ()
  return
}
func.func private @scale(%x: memref<8xf32>, %lr: f32) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<8xf32>
    %u = arith.mulf %v, %lr : f32
    memref.store %u, %x[%tx] : memref<8xf32>
    gpu.terminator
  }
  return
}

// -----

// Nothing a kernel uses: nothing changes.
// CHECK-LABEL: func.func @host_only(
// CHECK-NOT:     memref.alloca
// CHECK-NOT:     gpu.memcpy
func.func @host_only(%bits: i32, %x: memref<8xf32>) -> i1 {
  %c0_i32 = arith.constant 0 : i32
  %fp32 = arith.cmpi eq, %bits, %c0_i32 : i32
  return %fp32 : i1
}

// -----

// What a record cannot hold stays a kernel parameter: a scalar wider than
// 64 bits. (Nothing here is an error: the launch keeps reading it.)
// CHECK-LABEL: func.func @wide(
// CHECK-SAME:    %[[WIDE:[^:]*]]: i128
// CHECK-NOT:     memref.alloca
// CHECK:         gpu.launch
// CHECK:           arith.trunci %[[WIDE]] : i128 to i32
func.func @wide(%wide: i128, %x: memref<8xi32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = arith.trunci %wide : i128 to i32
    memref.store %v, %x[%tx] : memref<8xi32>
    gpu.terminator
  }
  return
}
