// RUN: qtrain-opt %s --split-input-file --qtrain-defer-result-reads | FileCheck %s

// The loss (docs/passes/defer-result-reads.md): read where it is computed,
// it would make the host wait for the device between the forward and the
// backward. It moves to the end with its scaling and the dealloc of its
// buffer, past the backward's kernels, calls and launches.
// CHECK-LABEL: func.func @loss(
// CHECK:         %[[LOSS:.*]] = memref.alloc() : memref<f32>
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%[[LOSS]]
// CHECK-NOT:     memref.load
// CHECK:         call @backward
// CHECK:         linalg.fill
// CHECK-NEXT:    %[[V:.*]] = memref.load %[[LOSS]][]
// CHECK-NEXT:    %[[S:.*]] = arith.mulf %[[V]]
// CHECK-NEXT:    memref.dealloc %[[LOSS]]
// CHECK-NEXT:    return %[[S]]
func.func private @backward(memref<128xf32>)
func.func @loss(%x: memref<128xf32>, %g: memref<128xf32>) -> f32 {
  %scale = arith.constant 7.8125e-3 : f32
  %zero = arith.constant 0.0 : f32
  %loss = memref.alloc() : memref<f32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<128xf32>) outs(%loss : memref<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  %v = memref.load %loss[] : memref<f32>
  memref.dealloc %loss : memref<f32>
  %scaled = arith.mulf %v, %scale : f32
  call @backward(%g) : (memref<128xf32>) -> ()
  linalg.fill ins(%zero : f32) outs(%g : memref<128xf32>)
  return %scaled : f32
}

// -----

// A read whose value the host also uses otherwise (a store) stays; a read
// whose buffer is written later moves only up to that write.
// CHECK-LABEL: func.func @stays(
// CHECK:         %[[A:.*]] = memref.load %[[BA:.*]][]
// CHECK-NEXT:    memref.store %[[A]]
// CHECK:         linalg.fill ins(%{{.*}}) outs(%[[G:.*]] :
// CHECK-NEXT:    %[[B:.*]] = memref.load %[[BB:.*]][]
// CHECK-NEXT:    linalg.fill ins(%{{.*}}) outs(%[[BB]] :
// CHECK:         return %[[A]], %[[B]]
func.func @stays(%out: memref<f32>, %g: memref<128xf32>) -> (f32, f32) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<f32>
  %b = memref.alloc() : memref<f32>
  %va = memref.load %a[] : memref<f32>
  memref.store %va, %out[] : memref<f32>
  %vb = memref.load %b[] : memref<f32>
  linalg.fill ins(%zero : f32) outs(%g : memref<128xf32>)
  linalg.fill ins(%zero : f32) outs(%b : memref<f32>)
  memref.dealloc %a : memref<f32>
  memref.dealloc %b : memref<f32>
  return %va, %vb : f32, f32
}
