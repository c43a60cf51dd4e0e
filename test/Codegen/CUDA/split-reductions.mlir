// RUN: qtrain-opt %s --split-input-file --qtrain-map-step-to-gpu --canonicalize | FileCheck %s
// RUN: qtrain-opt %s --split-input-file --qtrain-map-step-to-gpu="reduction-fan-in=0" --canonicalize | FileCheck %s --check-prefix=OFF
// RUN: not qtrain-opt %s --split-input-file --qtrain-map-step-to-gpu="reduction-fan-in=-1" 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: error: qtrain-map-step-to-gpu: reduction-fan-in and split-reductions-below must not be negative

// A reduction with few outputs and many elements each is split into levels
// (reduction-fan-in, 32 by default): 1200 squares summed to a scalar become
// 38 partial sums of at most 32 elements (thread g sums elements g, g + 38,
// ...), then 2 of at most 19, then the output's initial value (the fill's
// zero: the fill runs in the last level) plus the 2, in order. Without the
// split, one thread sums all 1200.

#id = affine_map<(i, j) -> (i, j)>
#scalar = affine_map<(i, j) -> ()>

// CHECK-LABEL: func.func @sum_of_squares(
// CHECK-SAME:    %[[A:.*]]: memref<4x300xf32>, %[[S:.*]]: memref<f32>)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[P1:.*]] = gpu.alloc  () : memref<38xf32>
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %[[C38:.*]], {{.*}}, {{.*}})
// CHECK:           %[[FIRST:.*]] = memref.load %[[A]]
// CHECK:           %[[SQ:.*]] = arith.mulf %[[FIRST]], %[[FIRST]]
// CHECK:           %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C38]] iter_args(%[[ACC:.*]] = %[[SQ]])
// CHECK:             memref.load %[[A]]
// CHECK:             arith.mulf
// CHECK:             arith.addf %[[ACC]]
// CHECK:           memref.store %[[SUM]], %[[P1]]
// CHECK:         %[[P2:.*]] = gpu.alloc  () : memref<2xf32>
// CHECK:         gpu.launch
// CHECK:           memref.load %[[P1]]
// CHECK:           scf.for
// CHECK:             memref.load %[[P1]]
// CHECK:           memref.store {{.*}}, %[[P2]]
// CHECK:         gpu.dealloc  %[[P1]]
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %[[C1:.*]], {{.*}} = %[[C1]], {{.*}} = %[[C1]])
// CHECK:           scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]])
// CHECK:             memref.load %[[P2]]
// CHECK:           memref.store {{.*}}, %[[S]][]
// CHECK:         gpu.dealloc  %[[P2]]
// CHECK-NOT:     gpu.launch
// CHECK:         return

// OFF-LABEL: func.func @sum_of_squares(
// OFF:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %[[C1:.*]], {{.*}} = %[[C1]], {{.*}} = %[[C1]])
// OFF:           scf.for
// OFF:             scf.for
// OFF-NOT:     gpu.launch
// OFF:         return
func.func @sum_of_squares(%a: memref<4x300xf32>, %s: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<f32>)
  linalg.generic {indexing_maps = [#id, #scalar],
                  iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<4x300xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %sum = arith.addf %acc, %sq : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A bias gradient: one sum per channel over batch and pixels (800 each).
// Each channel gets 25 partial sums, then its output's value plus the 25.

#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#c = affine_map<(n, c, h, w) -> (c)>

// CHECK-LABEL: func.func @bias_gradient(
// CHECK-SAME:    %[[DY:.*]]: memref<8x6x10x10xf32>, %[[DB:.*]]: memref<6xf32>)
// CHECK:         %[[P:.*]] = gpu.alloc  () : memref<6x25xf32>
// CHECK:         gpu.launch
// CHECK:           memref.load %[[DY]]
// CHECK:           scf.for
// CHECK:             memref.load %[[DY]]
// CHECK:           memref.store {{.*}}, %[[P]]
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %[[C6:.*]], {{.*}}, {{.*}})
// CHECK:           %[[INIT:.*]] = memref.load %[[DB]]
// CHECK:           %[[SUM:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]])
// CHECK:           memref.store %[[SUM]], %[[DB]]
// CHECK:         gpu.dealloc  %[[P]]
func.func @bias_gradient(%dy: memref<8x6x10x10xf32>, %db: memref<6xf32>) {
  linalg.generic {indexing_maps = [#nchw, #c],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy : memref<8x6x10x10xf32>) outs(%db : memref<6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sum = arith.addf %x, %acc : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A quantizer's range: the minimum and the maximum of a tensor, two outputs
// of one op, reduced side by side (4096 elements: 128, then 4, then 1).

#v = affine_map<(i) -> (i)>
#s = affine_map<(i) -> ()>

// CHECK-LABEL: func.func @range(
// CHECK:         %[[LO1:.*]] = gpu.alloc  () : memref<128xf32>
// CHECK:         %[[HI1:.*]] = gpu.alloc  () : memref<128xf32>
// CHECK:         gpu.launch
// CHECK:           scf.for
// CHECK:             arith.minimumf
// CHECK:             arith.maximumf
// CHECK:         %[[LO2:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK:         %[[HI2:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK:         gpu.launch
// CHECK:         gpu.dealloc  %[[LO1]]
// CHECK:         gpu.dealloc  %[[HI1]]
// CHECK:         gpu.launch
// CHECK:           arith.minimumf
// CHECK:           arith.maximumf
// CHECK:         gpu.dealloc  %[[LO2]]
// CHECK:         gpu.dealloc  %[[HI2]]
func.func @range(%x: memref<4096xf32>, %lo: memref<f32>, %hi: memref<f32>) {
  linalg.generic {indexing_maps = [#v, #s, #s], iterator_types = ["reduction"]}
      ins(%x : memref<4096xf32>) outs(%lo, %hi : memref<f32>, memref<f32>) {
  ^bb0(%e: f32, %l: f32, %h: f32):
    %0 = arith.minimumf %e, %l : f32
    %1 = arith.maximumf %h, %e : f32
    linalg.yield %0, %1 : f32, f32
  }
  return
}

// -----

// Left to one thread per output element: 128 elements (not more than 4 x
// the fan-in), and a reduction whose combination reads both outputs (an
// arg max), which is not one associative op per output.

#v = affine_map<(i) -> (i)>
#s = affine_map<(i) -> ()>

// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %[[C1:.*]], {{.*}} = %[[C1]], {{.*}} = %[[C1]])
// CHECK:           scf.for
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %[[C1]], {{.*}} = %[[C1]], {{.*}} = %[[C1]])
// CHECK:           scf.for
// CHECK-NOT:     gpu.launch
func.func @left_alone(%x: memref<128xf32>, %y: memref<4096xf32>, %s: memref<f32>,
                      %best: memref<f32>, %at: memref<index>) {
  linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]}
      ins(%x : memref<128xf32>) outs(%s : memref<f32>) {
  ^bb0(%e: f32, %acc: f32):
    %0 = arith.addf %e, %acc : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#v, #s, #s], iterator_types = ["reduction"]}
      ins(%y : memref<4096xf32>) outs(%best, %at : memref<f32>, memref<index>) {
  ^bb0(%e: f32, %b: f32, %i: index):
    %k = linalg.index 0 : index
    %gt = arith.cmpf ogt, %e, %b : f32
    %nb = arith.select %gt, %e, %b : f32
    %ni = arith.select %gt, %k, %i : index
    linalg.yield %nb, %ni : f32, index
  }
  return
}
