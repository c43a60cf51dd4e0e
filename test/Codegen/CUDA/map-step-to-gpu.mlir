// RUN: qtrain-opt %s --split-input-file --verify-diagnostics \
// RUN:   --qtrain-map-step-to-gpu="threads-per-block=128 reduction-fan-in=0" --canonicalize | FileCheck %s
// RUN: not qtrain-opt %s --qtrain-map-step-to-gpu="threads-per-block=2048" \
// RUN:   2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: error: qtrain-map-step-to-gpu: threads-per-block must be in [1, 1024], got 2048

// Each loop nest is one launch over a 1-D grid: 4 x 300 elements in blocks
// of 128 threads (10 blocks, the last one guarded); a reduction to a scalar
// runs on one thread. Buffers the step makes are device memory, except the
// one the host reads itself (host_shared); the argument the host reads is
// marked for the runtime.

#id = affine_map<(i, j) -> (i, j)>
#scalar = affine_map<(i, j) -> ()>

// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[A:.*]]: memref<4x300xf32>, %[[B:.*]]: memref<4x300xf32>,
// CHECK-SAME:    %[[LR:.*]]: memref<f32> {qtrain.host_visible})
// CHECK:         %[[T:.*]] = gpu.alloc  () : memref<4x300xf32>
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %[[C10:.*]], {{.*}} = %[[C1:.*]], {{.*}} = %[[C1]]) threads({{.*}}) in ({{.*}} = %[[C128:.*]], {{.*}} = %[[C1]], {{.*}} = %[[C1]])
// CHECK:           scf.if
// CHECK:             arith.mulf
// CHECK:           gpu.terminator
// CHECK:         %[[S:.*]] = gpu.alloc  host_shared () : memref<f32>
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %[[C1]], {{.*}} = %[[C1]], {{.*}} = %[[C1]]) threads({{.*}}) in ({{.*}} = %[[C1]], {{.*}} = %[[C1]], {{.*}} = %[[C1]])
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               arith.addf
// CHECK:         memref.load %[[S]][]
// CHECK:         memref.load %[[LR]][]
// CHECK:         gpu.launch
// CHECK:         gpu.dealloc  %[[S]]
// CHECK:         gpu.dealloc  %[[T]]
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @step(%a: memref<4x300xf32>, %b: memref<4x300xf32>,
                %lr: memref<f32>) {
  %t = memref.alloc() : memref<4x300xf32>
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x300xf32>) outs(%t : memref<4x300xf32>) {
  ^bb0(%x: f32, %y: f32):
    %sq = arith.mulf %x, %x : f32
    linalg.yield %sq : f32
  }
  %s = memref.alloc() : memref<f32>
  linalg.generic {indexing_maps = [#id, #scalar],
                  iterator_types = ["reduction", "reduction"]}
      ins(%t : memref<4x300xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %sum = arith.addf %acc, %x : f32
    linalg.yield %sum : f32
  }
  %total = memref.load %s[] : memref<f32>
  %rate = memref.load %lr[] : memref<f32>
  %step = arith.mulf %total, %rate : f32
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x300xf32>) outs(%b : memref<4x300xf32>) {
  ^bb0(%x: f32, %y: f32):
    %d = arith.subf %x, %step : f32
    linalg.yield %d : f32
  }
  memref.dealloc %s : memref<f32>
  memref.dealloc %t : memref<4x300xf32>
  return
}

// -----

// The host reads an argument of a private function: the public caller's
// argument is what the runtime places.

// CHECK-LABEL: func.func private @variant(
// CHECK-SAME:    %{{.*}}: memref<2xi32>)
// CHECK-LABEL: func.func @entry(
// CHECK-SAME:    %{{.*}}: memref<8xf32>, %{{.*}}: memref<2xi32> {qtrain.host_visible})
// CHECK:         call @variant
func.func private @variant(%x: memref<8xf32>, %slots: memref<2xi32>) {
  %c0 = arith.constant 0 : index
  %slot = memref.load %slots[%c0] : memref<2xi32>
  %index = arith.index_cast %slot : i32 to index
  scf.index_switch %index
  case 1 {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%x : memref<8xf32>)
    scf.yield
  }
  default {
  }
  return
}
func.func @entry(%x: memref<8xf32>, %slots: memref<2xi32>) {
  call @variant(%x, %slots) : (memref<8xf32>, memref<2xi32>) -> ()
  return
}

// -----

// A constant global the kernels read is copied to the device there, and
// freed at the end of its block.

// CHECK-LABEL: func.func @reads_global(
// CHECK:         %[[G:.*]] = memref.get_global @ones : memref<4xf32>
// CHECK:         %[[D:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK:         gpu.memcpy  %[[D]], %[[G]]
// CHECK:         gpu.launch
// CHECK:           memref.load %[[D]]
// CHECK:         gpu.dealloc  %[[D]]
// CHECK-NEXT:    return
memref.global "private" constant @ones : memref<4xf32> = dense<1.0>
func.func @reads_global(%out: memref<4xf32>) {
  %g = memref.get_global @ones : memref<4xf32>
  linalg.copy ins(%g : memref<4xf32>) outs(%out : memref<4xf32>)
  return
}

// -----

// A buffer the host code cannot share: it writes a constant global.

memref.global "private" constant @table : memref<4xf32> = dense<1.0>
func.func @writes_global(%v: f32) {
  %g = memref.get_global @table : memref<4xf32>
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{the host code of the CUDA step would access a buffer it cannot place here}}
  memref.store %v, %g[%c0] : memref<4xf32>
  return
}

// -----

func.func @tensors(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected a bufferized step (this op has tensor operands)}}
  %r = linalg.copy ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A fill of a reduction's init runs in the reduction's kernel: each thread
// stores the fill value to the element it owns, then sums into it. One
// launch, not two; the same values in the same order.

// CHECK-LABEL: func.func @fill_then_sum(
// CHECK-SAME:    %[[IN:.*]]: memref<64x32xf32>, %[[OUT:.*]]: memref<64xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-COUNT-1: gpu.launch
// CHECK:           memref.store %[[ZERO]], %[[OUT]][%[[I:.*]]]
// CHECK:           scf.for
// CHECK:             memref.load %[[OUT]][%[[I]]]
// CHECK:             arith.addf
// CHECK:             memref.store {{.*}}, %[[OUT]][%[[I]]]
// CHECK-NOT:     gpu.launch
func.func @fill_then_sum(%in: memref<64x32xf32>, %out: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<64xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<64x32xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Two inits, two fills (a range's minimum and maximum), and a reduction to
// a scalar: each fill in its consumer's kernel, the scalar's on its one
// thread.

// CHECK-LABEL: func.func @fills_of_two_inits(
// CHECK-SAME:    %{{.*}}: memref<16x8xi32>, %[[LO:.*]]: memref<8xi32>, %[[HI:.*]]: memref<8xi32>, %[[ALL:.*]]: memref<i32>)
// CHECK-DAG:     %[[MAX:.*]] = arith.constant 2147483647 : i32
// CHECK-DAG:     %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK:         gpu.launch
// CHECK-DAG:       memref.store %[[MAX]], %[[LO]][%[[J:.*]]]
// CHECK-DAG:       memref.store %[[MIN]], %[[HI]][%[[J]]]
// CHECK:           scf.for
// CHECK:         gpu.launch
// CHECK:           memref.store %[[MAX]], %[[ALL]][]
// CHECK:           scf.for
// CHECK-NOT:     gpu.launch
func.func @fills_of_two_inits(%in: memref<16x8xi32>, %lo: memref<8xi32>,
                              %hi: memref<8xi32>, %all: memref<i32>) {
  %max = arith.constant 2147483647 : i32
  %min = arith.constant -2147483648 : i32
  linalg.fill ins(%max : i32) outs(%lo : memref<8xi32>)
  linalg.fill ins(%min : i32) outs(%hi : memref<8xi32>)
  linalg.generic {indexing_maps = [affine_map<(k, j) -> (k, j)>, affine_map<(k, j) -> (j)>,
                                   affine_map<(k, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%in : memref<16x8xi32>) outs(%lo, %hi : memref<8xi32>, memref<8xi32>) {
  ^bb0(%x: i32, %a: i32, %b: i32):
    %l = arith.minsi %a, %x : i32
    %h = arith.maxsi %b, %x : i32
    linalg.yield %l, %h : i32, i32
  }
  linalg.fill ins(%max : i32) outs(%all : memref<i32>)
  linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%lo : memref<8xi32>) outs(%all : memref<i32>) {
  ^bb0(%x: i32, %acc: i32):
    %m = arith.minsi %acc, %x : i32
    linalg.yield %m : i32
  }
  return
}

// -----

// A fill stays a launch of its own when its consumer also reads the buffer
// as an input, when something in between touches the buffer, or when the
// consumer's threads do not each own their elements (an init map that is
// not a permutation of the parallel loops).

// CHECK-LABEL: func.func @fills_kept(
// CHECK-COUNT-7: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @fills_kept(%a: memref<64xf32>, %b: memref<64xf32>, %m: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  // Read as an input too: a thread could read an element another thread
  // has not filled yet.
  linalg.fill ins(%zero : f32) outs(%a : memref<64xf32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (63 - i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<64xf32>) outs(%a : memref<64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  // Read in between (by an op whose own init is another buffer).
  linalg.fill ins(%zero : f32) outs(%b : memref<64xf32>)
  linalg.copy ins(%b : memref<64xf32>) outs(%a : memref<64xf32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<64xf32>) outs(%b : memref<64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  // The init is not a permutation of the parallel loops.
  linalg.fill ins(%zero : f32) outs(%m : memref<64x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i, i)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<64xf32>) outs(%m : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}
