// RUN: qtrain-opt %s --split-input-file --verify-diagnostics \
// RUN:   --qtrain-emulate-gpu | FileCheck %s

// A launch becomes a loop over blocks and threads, its ids the induction
// variables and its sizes the launch operands; device buffers become host
// ones.

// CHECK-LABEL: func.func @launch(
// CHECK-SAME:    %[[A:.*]]: memref<300xf32>)
// CHECK:         %[[T:.*]] = memref.alloc() : memref<300xf32>
// CHECK:         scf.parallel (%[[BX:.*]], %{{.*}}, %{{.*}}, %[[TX:.*]], %{{.*}}, %{{.*}}) = ({{.*}}) to (%c3, %c1, %c1, %c128, %c1, %c1)
// CHECK:           %[[BASE:.*]] = arith.muli %[[BX]], %c128
// CHECK:           %[[I:.*]] = arith.addi %[[TX]], %[[BASE]]
// CHECK:           memref.store %{{.*}}, %[[T]][%[[I]]]
// CHECK-NOT:       gpu.
// CHECK:         memref.copy %[[T]], %[[A]]
// CHECK:         memref.dealloc %[[T]]
// CHECK-NOT:     gpu.
func.func @launch(%a: memref<300xf32>) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c128 = arith.constant 128 : index
  %c300 = arith.constant 300 : index
  %one = arith.constant 1.0 : f32
  %t = gpu.alloc () : memref<300xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c3, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %sx : index
    %i = arith.addi %tx, %base : index
    %in = arith.cmpi ult, %i, %c300 : index
    scf.if %in {
      memref.store %one, %t[%i] : memref<300xf32>
    }
    gpu.terminator
  }
  gpu.memcpy %a, %t : memref<300xf32>, memref<300xf32>
  gpu.dealloc %t : memref<300xf32>
  return
}

// -----

func.func @blocks() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{only synchronous launches}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    cf.br ^next
  ^next:
    gpu.terminator
  }
  return
}

// -----

func.func @barrier() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{a barrier cannot run in host loops}}
    gpu.barrier
    gpu.terminator
  }
  return
}

// -----

func.func @async(%a: memref<4xf32>, %b: memref<4xf32>) {
  %t0 = gpu.wait async
  // expected-error @+1 {{emulates synchronous gpu.launch, alloc, dealloc and memcpy}}
  %t1 = gpu.memcpy async [%t0] %a, %b : memref<4xf32>, memref<4xf32>
  gpu.wait [%t1]
  return
}
