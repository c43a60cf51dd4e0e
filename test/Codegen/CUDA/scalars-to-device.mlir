// RUN: qtrain-opt %s --split-input-file --qtrain-scalars-to-device | FileCheck %s

// A quantizer's EMA of its range (docs/passes/scalars-to-device.md): the
// batch's min and max, which a reduction left in step buffers, folded into
// the range argument. The two stores, the loads of the step buffers and the
// arithmetic run as one loop of one iteration at the last store; the read
// of the argument stays on the host (its value passed in), and the deallocs
// of the buffers it reads move after the loop.
// CHECK-LABEL: func.func @ema(
// CHECK-SAME:    %[[IN:.*]]: memref<2xf32>, %[[OUT:.*]]: memref<2xf32>, %[[X:.*]]: memref<128xf32>
// CHECK:         %[[MIN:.*]] = memref.alloc() : memref<f32>
// CHECK:         %[[MAX:.*]] = memref.alloc() : memref<f32>
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%[[MIN]], %[[MAX]]
// CHECK:         %[[OLD:.*]] = memref.load %[[IN]]
// CHECK-NOT:     memref.load
// CHECK:         scf.parallel
// CHECK-DAG:       %[[LO:.*]] = memref.load %[[MIN]][]
// CHECK-DAG:       %[[HI:.*]] = memref.load %[[MAX]][]
// CHECK:           %[[RANGE:.*]] = arith.subf %[[HI]], %[[LO]]
// CHECK:           arith.mulf %[[OLD]]
// CHECK:           memref.store %{{.*}}, %[[OUT]][%{{.*}}]
// CHECK:           memref.store %{{.*}}, %[[OUT]][%{{.*}}]
// CHECK:           scf.reduce
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[MIN]]
// CHECK-NEXT:    memref.dealloc %[[MAX]]
// CHECK-NEXT:    return
func.func @ema(%in: memref<2xf32>, %out: memref<2xf32>, %x: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %momentum = arith.constant 0.9 : f32
  %rate = arith.constant 0.1 : f32
  %min = memref.alloc() : memref<f32>
  %max = memref.alloc() : memref<f32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<128xf32>) outs(%min, %max : memref<f32>, memref<f32>) {
  ^bb0(%v: f32, %lo: f32, %hi: f32):
    %l = arith.minimumf %v, %lo : f32
    %h = arith.maximumf %v, %hi : f32
    linalg.yield %l, %h : f32, f32
  }
  %lo = memref.load %min[] : memref<f32>
  memref.dealloc %min : memref<f32>
  %hi = memref.load %max[] : memref<f32>
  memref.dealloc %max : memref<f32>
  %range = arith.subf %hi, %lo : f32
  %old = memref.load %in[%c0] : memref<2xf32>
  %a = arith.mulf %old, %momentum : f32
  %b = arith.mulf %lo, %rate : f32
  %newMin = arith.addf %a, %b : f32
  %c = arith.mulf %range, %rate : f32
  memref.store %newMin, %out[%c0] : memref<2xf32>
  memref.store %c, %out[%c1] : memref<2xf32>
  return
}

// -----

// A store of host values alone stays where no kernel can have run before
// it (it costs no wait), and so does one whose step buffer is written
// between its read and the store: the device would read the new value.
// CHECK-LABEL: func.func @stays(
// CHECK-NOT:     scf.parallel
// CHECK:         memref.store
// CHECK:         %[[V:.*]] = memref.load %[[B:.*]][]
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[B]]
// CHECK:         memref.store %[[V]]
// CHECK-NOT:     scf.parallel
func.func @stays(%flags: memref<2xi32>, %out: memref<2xf32>, %n: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1 : i32
  %m = arith.addi %n, %one : i32
  memref.store %m, %flags[%c0] : memref<2xi32>
  %b = memref.alloc() : memref<f32>
  linalg.fill ins(%zero : f32) outs(%b : memref<f32>)
  %v = memref.load %b[] : memref<f32>
  linalg.fill ins(%v : f32) outs(%b : memref<f32>)
  memref.store %v, %out[%c1] : memref<2xf32>
  memref.dealloc %b : memref<f32>
  return
}

// -----

// A call given the buffer between the read and the store may write it: the
// store stays. Stores in a branch of the slot dispatch move there.
// CHECK-LABEL: func.func @branches(
// CHECK:         memref.load
// CHECK-NEXT:    call @write
// CHECK-NEXT:    memref.store
// CHECK:         scf.index_switch
// CHECK:         case 0 {
// CHECK-NEXT:      %[[B:.*]] = memref.alloc()
// CHECK:           scf.parallel
// CHECK-NEXT:        memref.load %[[B]][]
// CHECK-NEXT:        memref.store
func.func private @write(memref<f32>)
func.func @branches(%out: memref<2xf32>, %slot: index) {
  %c0 = arith.constant 0 : index
  %b = memref.alloc() : memref<f32>
  %v = memref.load %b[] : memref<f32>
  call @write(%b) : (memref<f32>) -> ()
  memref.store %v, %out[%c0] : memref<2xf32>
  memref.dealloc %b : memref<f32>
  scf.index_switch %slot
  case 0 {
    %d = memref.alloc() : memref<f32>
    %w = memref.load %d[] : memref<f32>
    memref.store %w, %out[%c0] : memref<2xf32>
    memref.dealloc %d : memref<f32>
    scf.yield
  }
  default {
  }
  return
}

// -----

// Two stores with a host read of the first one's buffer between them move
// apart: the read still sees the first store.
// CHECK-LABEL: func.func @apart(
// CHECK:         scf.parallel
// CHECK:           memref.store %{{.*}}, %[[OUT:.*]][%c0
// CHECK:         memref.load %[[OUT]]
// CHECK:         scf.parallel
// CHECK:           memref.store
func.func @apart(%out: memref<2xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.alloc() : memref<2xf32>
  %v = memref.load %b[%c0] : memref<2xf32>
  memref.store %v, %out[%c0] : memref<2xf32>
  %r = memref.load %out[%c0] : memref<2xf32>
  %w = memref.load %b[%c1] : memref<2xf32>
  memref.store %w, %out[%c1] : memref<2xf32>
  memref.dealloc %b : memref<2xf32>
  return %r : f32
}

// -----

// A store of host values after a kernel (LDP's learned bits, after the
// first layer's loops) moves: on the host it would wait for that kernel.
// CHECK-LABEL: func.func @after_kernels(
// CHECK:         %[[V:.*]] = memref.load
// CHECK-NEXT:    linalg.fill
// CHECK:         scf.parallel
// CHECK:           %[[BITS:.*]] = arith.select %{{.*}}, %{{.*}}, %[[V]]
// CHECK-NEXT:      memref.store %[[BITS]]
func.func @after_kernels(%p: memref<2xf32>, %g: memref<128xf32>, %b: memref<f32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %eight = arith.constant 8.0 : f32
  %v = memref.load %p[%c0] : memref<2xf32>
  %big = arith.cmpf ogt, %v, %eight : f32
  %bits = arith.select %big, %eight, %v : f32
  linalg.fill ins(%zero : f32) outs(%g : memref<128xf32>)
  memref.store %bits, %b[] : memref<f32>
  return
}

// -----

// A store inside a host loop stays (straight host code only).
// CHECK-LABEL: func.func @in_loop(
// CHECK:         scf.for
// CHECK-NEXT:      memref.load
// CHECK-NEXT:      memref.store
// CHECK-NOT:     scf.parallel
func.func @in_loop(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %b[%i] : memref<4xf32>
    memref.store %v, %out[%i] : memref<4xf32>
  }
  memref.dealloc %b : memref<4xf32>
  return
}
