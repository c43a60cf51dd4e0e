// RUN: qtrain-opt %s --split-input-file --qtrain-map-step-to-gpu --canonicalize | FileCheck %s
// RUN: qtrain-opt %s --split-input-file --qtrain-map-step-to-gpu="reduction-fan-in=0" --canonicalize | FileCheck %s --check-prefix=OFF
// RUN: qtrain-opt %s --split-input-file --qtrain-map-step-to-gpu="last-block-combines=false" --canonicalize | FileCheck %s --check-prefix=LAUNCH
// RUN: not qtrain-opt %s --split-input-file --qtrain-map-step-to-gpu="reduction-fan-in=-1" 2>&1 | FileCheck %s --check-prefix=NEG
// Every kernel, the counters' global and the fences included, through NVVM
// to a cubin that ptxas assembles for sm_90:
// RUN: %if ptxas %{ qtrain-opt %s --split-input-file --qtrain-map-step-to-gpu --canonicalize -o %t.gpu.mlir %}
// RUN: %if ptxas %{ qtrain-opt %t.gpu.mlir --split-input-file --qtrain-cuda-step-kernels="chip=sm_90 toolkit=%cuda_path format=ptx" | FileCheck %s --check-prefix=PTX %}
// RUN: %if ptxas %{ qtrain-opt %t.gpu.mlir --split-input-file --qtrain-cuda-step-kernels="chip=sm_90 toolkit=%cuda_path format=cubin" | FileCheck %s --check-prefix=CUBIN %}
// PTX: .global .align 4 .b8 qtrain_reduction_counters[4];
// PTX: fence.acq_rel.sys;
// PTX: atom.global.add.u32
// PTX: fence.acq_rel.sys;
// CUBIN: gpu.binary @qtrain_step_kernels
// NEG: error: qtrain-map-step-to-gpu: reduction-fan-in and split-reductions-below must not be negative

// A reduction with few outputs and many elements each is split: blocks of
// threads-per-block threads (256), each thread combining at most
// reduction-fan-in values (32) a stride apart, then the block's threads'
// results in shared memory by halves. 1200 squares summed to a scalar are
// one block: thread t sums elements t, t + 256, ...; the block's leader adds
// the result to the output's initial value (the fill's zero: the fill runs
// there) and stores it. Without the split, one thread sums all 1200.

#id = affine_map<(i, j) -> (i, j)>
#scalar = affine_map<(i, j) -> ()>

// CHECK-LABEL: func.func @sum_of_squares(
// CHECK-SAME:    %[[A:.*]]: memref<4x300xf32>, %[[S:.*]]: memref<f32>)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : index
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %[[C1:.*]], {{.*}} = %[[C1]], {{.*}} = %[[C1]]) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[C256]], {{.*}}) workgroup(%[[SH:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK:           scf.if
// CHECK:             %[[FIRST:.*]] = memref.load %[[A]]
// CHECK:             %[[SQ:.*]] = arith.mulf %[[FIRST]], %[[FIRST]]
// CHECK:             %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C256]] iter_args(%[[ACC:.*]] = %[[SQ]])
// CHECK:               memref.load %[[A]]
// CHECK:               arith.mulf
// CHECK:               arith.addf %[[ACC]]
// CHECK:             memref.store %[[SUM]], %[[SH]][%[[T]]]
// CHECK:           gpu.barrier
// CHECK:           %[[PARTNER:.*]] = arith.addi %[[T]], %[[C128]]
// CHECK:           %[[LOWER:.*]] = arith.cmpi ult, %[[T]], %[[C128]]
// CHECK:           scf.if
// CHECK:             %[[MINE:.*]] = memref.load %[[SH]][%[[T]]]
// CHECK:             %[[THEIRS:.*]] = memref.load %[[SH]][%[[PARTNER]]]
// CHECK:             %[[BOTH:.*]] = arith.addf %[[MINE]], %[[THEIRS]]
// CHECK:             memref.store %[[BOTH]], %[[SH]][%[[T]]]
// CHECK-COUNT-7:   gpu.barrier
// CHECK:           scf.if
// CHECK:             %[[TOTAL:.*]] = memref.load %[[SH]][%{{.*}}]
// CHECK:             %[[OUT:.*]] = arith.addf %[[TOTAL]], %[[ZERO]]
// CHECK:             memref.store %[[OUT]], %[[S]][]
// CHECK:           gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         return

// OFF-LABEL: func.func @sum_of_squares(
// OFF:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %[[C1:.*]], {{.*}} = %[[C1]], {{.*}} = %[[C1]])
// OFF-NOT:       workgroup
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

// A bias gradient: one sum per channel over batch and pixels (800 each):
// a block per channel, whose leader adds the block's sum to the output's
// value.

#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#c = affine_map<(n, c, h, w) -> (c)>

// CHECK-LABEL: func.func @bias_gradient(
// CHECK-SAME:    %[[DY:.*]]: memref<8x6x10x10xf32>, %[[DB:.*]]: memref<6xf32>)
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[C6:.*]], {{.*}}, {{.*}}) threads({{.*}}) in ({{.*}}) workgroup(%[[SH:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK:           memref.load %[[DY]][%{{.*}}, %[[B]], %{{.*}}, %{{.*}}]
// CHECK:           scf.for
// CHECK:             memref.load %[[DY]][%{{.*}}, %[[B]], %{{.*}}, %{{.*}}]
// CHECK-COUNT-8:   gpu.barrier
// CHECK:           scf.if
// CHECK:             %[[TOTAL:.*]] = memref.load %[[SH]][%c0]
// CHECK:             %[[INIT:.*]] = memref.load %[[DB]][%[[B]]]
// CHECK:             %[[OUT:.*]] = arith.addf %[[TOTAL]], %[[INIT]]
// CHECK:             memref.store %[[OUT]], %[[DB]][%[[B]]]
// CHECK-NOT:     gpu.launch
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
// of one op, reduced side by side. 131072 elements are 16 blocks of 8192
// (each of 256 threads combining 32). The block that finishes last
// combines the 16 partial values with the outputs' values, in order: each
// block's leader stores its partial value, then counts itself in a
// zero-initialized global between two fences; the one that sees 15 is the
// last, and sets the counter back to zero. One launch.

#v = affine_map<(i) -> (i)>
#s = affine_map<(i) -> ()>

// CHECK:       memref.global "private" @qtrain_reduction_counters : memref<1xi32> = dense<0>
// CHECK-LABEL: func.func @range(
// CHECK-SAME:    %[[X:.*]]: memref<131072xf32>, %[[LO:.*]]: memref<f32>, %[[HI:.*]]: memref<f32>)
// CHECK:         %[[PLO:.*]] = gpu.alloc  () : memref<16xf32>
// CHECK:         %[[PHI:.*]] = gpu.alloc  () : memref<16xf32>
// CHECK:         gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in ({{.*}} = %[[C16:.*]], {{.*}}, {{.*}}) threads({{.*}}) in ({{.*}}) workgroup(%[[SLO:.*]] : memref<256xf32, #gpu.address_space<workgroup>>, %[[SHI:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C4096:.*]] iter_args
// CHECK:             arith.minimumf
// CHECK:             arith.maximumf
// CHECK-COUNT-8:   gpu.barrier
// CHECK:           scf.if
// CHECK:             %[[BLO:.*]] = memref.load %[[SLO]][%c0]
// CHECK:             %[[BHI:.*]] = memref.load %[[SHI]][%c0]
// CHECK:             memref.store %[[BLO]], %[[PLO]][%{{.*}}]
// CHECK:             memref.store %[[BHI]], %[[PHI]][%{{.*}}]
// CHECK:             %[[COUNTERS:.*]] = memref.get_global @qtrain_reduction_counters : memref<1xi32>
// CHECK-NEXT:        llvm.fence acq_rel
// CHECK-NEXT:        %[[SEEN:.*]] = memref.atomic_rmw addi %{{.*}}, %[[COUNTERS]][%{{.*}}] : (i32, memref<1xi32>) -> i32
// CHECK-NEXT:        llvm.fence acq_rel
// CHECK-NEXT:        %[[LAST:.*]] = arith.cmpi eq, %[[SEEN]], %c15_i32
// CHECK-NEXT:        scf.if %[[LAST]] {
// CHECK:               %[[L0:.*]] = memref.load %[[LO]][]
// CHECK:               %[[H0:.*]] = memref.load %[[HI]][]
// CHECK:               scf.for %{{.*}} = %{{.*}} to %[[C16]] step %{{.*}} iter_args(%{{.*}} = %[[L0]], %{{.*}} = %[[H0]])
// CHECK:                 memref.load %[[PLO]]
// CHECK:                 memref.load %[[PHI]]
// CHECK:                 arith.minimumf
// CHECK:                 arith.maximumf
// CHECK:               memref.store {{.*}}, %[[LO]][]
// CHECK:               memref.store {{.*}}, %[[HI]][]
// CHECK:               memref.store %c0_i32, %[[COUNTERS]][%{{.*}}]
// CHECK:           gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         gpu.dealloc  %[[PLO]]
// CHECK:         gpu.dealloc  %[[PHI]]

// Without last-block-combines: a launch of one thread combines them.
// LAUNCH-LABEL: func.func @range(
// LAUNCH-SAME:    %[[X:.*]]: memref<131072xf32>, %[[LO:.*]]: memref<f32>, %[[HI:.*]]: memref<f32>)
// LAUNCH:         %[[PLO:.*]] = gpu.alloc  () : memref<16xf32>
// LAUNCH:         %[[PHI:.*]] = gpu.alloc  () : memref<16xf32>
// LAUNCH:         gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in ({{.*}} = %[[C16:.*]], {{.*}}, {{.*}}) threads({{.*}}) in ({{.*}}) workgroup(
// LAUNCH-NOT:       atomic_rmw
// LAUNCH:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %[[C1:.*]], {{.*}} = %[[C1]], {{.*}} = %[[C1]])
// LAUNCH-NOT:       workgroup
// LAUNCH:           %[[L0:.*]] = memref.load %[[LO]][]
// LAUNCH:           %[[H0:.*]] = memref.load %[[HI]][]
// LAUNCH:           scf.for %{{.*}} = %{{.*}} to %[[C16]] step %[[C1]] iter_args(%{{.*}} = %[[L0]], %{{.*}} = %[[H0]])
// LAUNCH:             memref.load %[[PLO]]
// LAUNCH:             memref.load %[[PHI]]
// LAUNCH:           memref.store {{.*}}, %[[LO]][]
// LAUNCH:           memref.store {{.*}}, %[[HI]][]
// LAUNCH:         gpu.dealloc  %[[PLO]]
func.func @range(%x: memref<131072xf32>, %lo: memref<f32>, %hi: memref<f32>) {
  linalg.generic {indexing_maps = [#v, #s, #s], iterator_types = ["reduction"]}
      ins(%x : memref<131072xf32>) outs(%lo, %hi : memref<f32>, memref<f32>) {
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
func.func @left_alone(%x: memref<128xf32>, %y: memref<131072xf32>, %s: memref<f32>,
                      %best: memref<f32>, %at: memref<index>) {
  linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]}
      ins(%x : memref<128xf32>) outs(%s : memref<f32>) {
  ^bb0(%e: f32, %acc: f32):
    %0 = arith.addf %e, %acc : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#v, #s, #s], iterator_types = ["reduction"]}
      ins(%y : memref<131072xf32>) outs(%best, %at : memref<f32>, memref<index>) {
  ^bb0(%e: f32, %b: f32, %i: index):
    %k = linalg.index 0 : index
    %gt = arith.cmpf ogt, %e, %b : f32
    %nb = arith.select %gt, %e, %b : f32
    %ni = arith.select %gt, %k, %i : index
    linalg.yield %nb, %ni : f32, index
  }
  return
}
