// RUN: qtrain-opt %s --split-input-file --verify-diagnostics \
// RUN:   --qtrain-map-step-to-gpu="threads-per-block=128" --canonicalize | FileCheck %s
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
