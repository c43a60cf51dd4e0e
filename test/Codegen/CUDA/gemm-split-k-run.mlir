// An f32 GEMM kernel that splits k, run on the host by its own code
// (qtrain-emulate-gpu gemms=kernel: blocks one after another, each block's
// parts between barriers for all its threads) and by its description: a
// batch of 2 of 70 x 40 x 2000 has 8 tiles of C, so k splits 7 ways (chunks
// of 286 terms). The blocks store their chunks' sums in the workspace, count
// themselves per tile, and the tile's last block adds them up. Twice in a
// row, so the counters must be back at zero after a launch. The operands
// are small integers, so every sum is exact in any order: a wrong chunk,
// tile or slot, or a missed or repeated split, is a mismatch against the
// host's own loops.
//
// RUN: qtrain-opt %s --qtrain-gpu-gemms="library-calls=false" \
// RUN:     --qtrain-emulate-gpu="gemms=kernel" \
// RUN:   | mlir-opt --convert-linalg-to-loops --expand-strided-metadata \
// RUN:       --lower-affine --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: qtrain-opt %s --qtrain-gpu-gemms="library-calls=false" \
// RUN:     --qtrain-emulate-gpu \
// RUN:   | mlir-opt --convert-linalg-to-loops --expand-strided-metadata \
// RUN:       --lower-affine --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_c_runner_utils | FileCheck %s
// The split is the one the kernel is named and described by:
// RUN: qtrain-opt %s --qtrain-gpu-gemms="library-calls=false" \
// RUN:   | FileCheck %s --check-prefix=KERNEL
// Tensor-core kernels have no host form:
// RUN: qtrain-opt %s --qtrain-gpu-gemms="library-calls=false f32-kind=bf16" \
// RUN:   | not qtrain-opt --qtrain-emulate-gpu="gemms=kernel" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TENSOR
// RUN: not qtrain-opt %s --qtrain-emulate-gpu="gemms=ptx" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OPTION

// Mismatches, then the sum of C.
// CHECK: 0
// CHECK-NEXT: 1282400

// KERNEL: gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_f32_f32xf32_b2_m70_n40_k2000_s7 blocks in (%c2, %c2{{.*}}, %c14)
// KERNEL: qtrain.gemm = {{{.*}}grid = [2, 2, 14], k = 2000 : i64, k_chunk = 286 : i64, {{.*}}splits = 7 : i64}

// TENSOR: error: qtrain-emulate-gpu: gemms=kernel runs the code of synchronous launches of f32 GEMM kernels only
// OPTION: error: qtrain-emulate-gpu: gemms must be description or kernel, got 'ptx'

func.func @product(%a: memref<2x70x2000xf32>, %b: memref<2x2000x40xf32>, %c: memref<2x70x40xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x70x2000xf32>, memref<2x2000x40xf32>) outs(%c : memref<2x70x40xf32>)
  return
}

func.func private @printI64(i64)
func.func private @printNewline()

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c70 = arith.constant 70 : index
  %c40 = arith.constant 40 : index
  %c2000 = arith.constant 2000 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %a = memref.alloc() : memref<2x70x2000xf32>
  %b = memref.alloc() : memref<2x2000x40xf32>
  %c = memref.alloc() : memref<2x70x40xf32>
  %ref = memref.alloc() : memref<2x70x40xf32>
  // Small integers: every sum is exact in f32, in any order.
  scf.for %x = %c0 to %c2 step %c1 {
    scf.for %i = %c0 to %c70 step %c1 {
      scf.for %k = %c0 to %c2000 step %c1 {
        %ik = arith.muli %i, %k : index
        %x5 = arith.muli %x, %c5 : index
        %t0 = arith.addi %ik, %k : index
        %t1 = arith.addi %t0, %x5 : index
        %s = arith.remui %t1, %c7 : index
        %si = arith.index_cast %s : index to i32
        %v = arith.sitofp %si : i32 to f32
        %m3 = arith.constant 3.0 : f32
        %w = arith.subf %v, %m3 : f32
        memref.store %w, %a[%x, %i, %k] : memref<2x70x2000xf32>
      }
    }
    scf.for %k = %c0 to %c2000 step %c1 {
      scf.for %j = %c0 to %c40 step %c1 {
        %jk = arith.muli %j, %k : index
        %j3 = arith.muli %j, %c3 : index
        %t0 = arith.addi %jk, %j3 : index
        %t1 = arith.addi %t0, %x : index
        %s = arith.remui %t1, %c5 : index
        %si = arith.index_cast %s : index to i32
        %v = arith.sitofp %si : i32 to f32
        %m2 = arith.constant 2.0 : f32
        %w = arith.subf %v, %m2 : f32
        memref.store %w, %b[%x, %k, %j] : memref<2x2000x40xf32>
      }
    }
  }
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  // C starts at 1 (the product accumulates into it); so does the reference.
  scf.for %x = %c0 to %c2 step %c1 {
    scf.for %i = %c0 to %c70 step %c1 {
      scf.for %j = %c0 to %c40 step %c1 {
        memref.store %one, %c[%x, %i, %j] : memref<2x70x40xf32>
        %sum = scf.for %k = %c0 to %c2000 step %c1 iter_args(%acc = %one) -> f32 {
          %av = memref.load %a[%x, %i, %k] : memref<2x70x2000xf32>
          %bv = memref.load %b[%x, %k, %j] : memref<2x2000x40xf32>
          %p = arith.mulf %av, %bv : f32
          %n = arith.addf %acc, %p : f32
          scf.yield %n : f32
        }
        memref.store %sum, %ref[%x, %i, %j] : memref<2x70x40xf32>
      }
    }
  }
  // Twice: the tiles' counters must be back at zero after a launch.
  call @product(%a, %b, %c) : (memref<2x70x2000xf32>, memref<2x2000x40xf32>, memref<2x70x40xf32>) -> ()
  call @product(%a, %b, %c) : (memref<2x70x2000xf32>, memref<2x2000x40xf32>, memref<2x70x40xf32>) -> ()
  // Mismatches against 2 x reference - 1, and the checksum.
  %r:2 = scf.for %x = %c0 to %c2 step %c1 iter_args(%bad0 = %c0, %sum0 = %zero) -> (index, f32) {
    %r1:2 = scf.for %i = %c0 to %c70 step %c1 iter_args(%bad1 = %bad0, %sum1 = %sum0) -> (index, f32) {
      %r2:2 = scf.for %j = %c0 to %c40 step %c1 iter_args(%bad2 = %bad1, %sum2 = %sum1) -> (index, f32) {
        %got = memref.load %c[%x, %i, %j] : memref<2x70x40xf32>
        %want1 = memref.load %ref[%x, %i, %j] : memref<2x70x40xf32>
        %twice = arith.addf %want1, %want1 : f32
        %want = arith.subf %twice, %one : f32
        %ne = arith.cmpf une, %got, %want : f32
        %inc = arith.select %ne, %c1, %c0 : index
        %bad3 = arith.addi %bad2, %inc : index
        %sum3 = arith.addf %sum2, %got : f32
        scf.yield %bad3, %sum3 : index, f32
      }
      scf.yield %r2#0, %r2#1 : index, f32
    }
    scf.yield %r1#0, %r1#1 : index, f32
  }
  %bad = arith.index_cast %r#0 : index to i64
  call @printI64(%bad) : (i64) -> ()
  call @printNewline() : () -> ()
  %sumi = arith.fptosi %r#1 : f32 to i64
  call @printI64(%sumi) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}
