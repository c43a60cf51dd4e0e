// The GEMM kernels' own code run on the host (qtrain-emulate-gpu
// gemms=kernel): blocks one after another, each block's parts between
// barriers for all its threads, and each mma.sync per lane from the
// registers its warp's lanes hold, gathered by PTX's fragment layouts
// (EmulateTensorCores.h). Three products of a batch of 2 of 70 x 40 x 2000,
// each taken twice onto C = 1 (so the split kernels' tile counters must be
// back at zero after a launch): f32 values on the f32-kind's kernel, the
// same values as 8-bit codes on the i8 kernel, and as float-format values on
// the fp8 kernel (e4m3 x e5m2). 8 tiles of C: k splits 7 ways (chunks of 288
// terms: the f32 kernel's loads of four, the 8-bit kernels' steps of 32,
// whose last split ends in a tail of zeros). The operands are small integers, so every sum is exact in any
// order: a wrong fragment element, chunk, tile or workspace slot, or a
// missed or repeated split, is a mismatch against the host's own loops.
//
// RUN: qtrain-opt %s --qtrain-gpu-gemms="library-calls=false" \
// RUN:     --qtrain-emulate-gpu="gemms=kernel" \
// RUN:   | mlir-opt --convert-linalg-to-loops --expand-strided-metadata \
// RUN:       --lower-affine --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: qtrain-opt %s --qtrain-gpu-gemms="library-calls=false f32-kind=tf32" \
// RUN:     --qtrain-emulate-gpu="gemms=kernel" \
// RUN:   | mlir-opt --convert-linalg-to-loops --expand-strided-metadata \
// RUN:       --lower-affine --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: qtrain-opt %s --qtrain-gpu-gemms="library-calls=false f32-kind=bf16" \
// RUN:     --qtrain-emulate-gpu="gemms=kernel" \
// RUN:   | mlir-opt --convert-linalg-to-loops --expand-strided-metadata \
// RUN:       --lower-affine --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_c_runner_utils | FileCheck %s
// What the kernels' descriptions state (the emulated steps' mode), split the
// same way:
// RUN: qtrain-opt %s --qtrain-gpu-gemms="library-calls=false" \
// RUN:     --qtrain-emulate-gpu \
// RUN:   | mlir-opt --convert-linalg-to-loops --expand-strided-metadata \
// RUN:       --lower-affine --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_c_runner_utils | FileCheck %s
// k = 1999: the rows are not word-aligned (an element per load: f32, bf16,
// 8-bit) and every kind's last step has a tail:
// RUN: sed 's/2000/1999/g' %s \
// RUN:   | qtrain-opt --qtrain-gpu-gemms="library-calls=false" \
// RUN:       --qtrain-emulate-gpu="gemms=kernel" \
// RUN:   | mlir-opt --convert-linalg-to-loops --expand-strided-metadata \
// RUN:       --lower-affine --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OTHER
// RUN: sed 's/2000/1999/g' %s \
// RUN:   | qtrain-opt --qtrain-gpu-gemms="library-calls=false f32-kind=bf16" \
// RUN:       --qtrain-emulate-gpu="gemms=kernel" \
// RUN:   | mlir-opt --convert-linalg-to-loops --expand-strided-metadata \
// RUN:       --lower-affine --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OTHER
// n = 10, k = 200: narrow tiles (two 16 x 8 tiles a warp), k not split:
// RUN: sed 's/2000/200/g; s/40/10/g' %s \
// RUN:   | qtrain-opt --qtrain-gpu-gemms="library-calls=false f32-kind=tf32" \
// RUN:       --qtrain-emulate-gpu="gemms=kernel" \
// RUN:   | mlir-opt --convert-linalg-to-loops --expand-strided-metadata \
// RUN:       --lower-affine --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OTHER
// The kernels the products run on:
// RUN: qtrain-opt %s --qtrain-gpu-gemms="library-calls=false" \
// RUN:   | FileCheck %s --check-prefix=KERNEL
// RUN: sed 's/2000/200/g; s/40/10/g' %s \
// RUN:   | qtrain-opt --qtrain-gpu-gemms="library-calls=false f32-kind=tf32" \
// RUN:   | FileCheck %s --check-prefix=NARROW
// RUN: not qtrain-opt %s --qtrain-emulate-gpu="gemms=ptx" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OPTION

// For each product: the mismatches, then the sum of C.
// CHECK: {{^}}0{{$}}
// CHECK-NEXT: {{^}}1282400{{$}}
// CHECK-NEXT: {{^}}0{{$}}
// CHECK-NEXT: {{^}}1282400{{$}}
// CHECK-NEXT: {{^}}0{{$}}
// CHECK-NEXT: {{^}}1282400{{$}}

// OTHER: {{^}}0{{$}}
// OTHER-NEXT: {{^}}{{-?[0-9]+}}{{$}}
// OTHER-NEXT: {{^}}0{{$}}
// OTHER-NEXT: {{^}}{{-?[0-9]+}}{{$}}
// OTHER-NEXT: {{^}}0{{$}}
// OTHER-NEXT: {{^}}{{-?[0-9]+}}{{$}}

// KERNEL: gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_f32_f32xf32_b2_m70_n40_k2000_s7 blocks in (%c2, %c2{{.*}}, %c14)
// KERNEL: gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_i8_s8xs8_b2_m70_n40_k2000_s7 blocks in (%c2, %c2{{.*}}, %c14)
// KERNEL: gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_fp8_e4m3xe5m2_b2_m70_n40_k2000_s7
// KERNEL: qtrain.gemm = {{{.*}}grid = [2, 2, 14], k = 2000 : i64, k_chunk = 288 : i64, kind = "f32", {{.*}}splits = 7 : i64}
// KERNEL: qtrain.gemm = {{{.*}}grid = [2, 2, 14], k = 2000 : i64, k_chunk = 288 : i64, kind = "i8", {{.*}}splits = 7 : i64}
// NARROW: gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_tf32_f32xf32_b2_m70_n10_k200 blocks in (%c1, %c2, %c2{{.*}})

// OPTION: error: qtrain-emulate-gpu: gemms must be description or kernel, got 'ptx'

func.func @product(%a: memref<2x70x2000xf32>, %b: memref<2x2000x40xf32>, %c: memref<2x70x40xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x70x2000xf32>, memref<2x2000x40xf32>) outs(%c : memref<2x70x40xf32>)
  return
}

// 8-bit codes: the i8 kernel, exact s32 sums.
func.func @product_i8(%a: memref<2x70x2000xi8>, %b: memref<2x2000x40xi8>, %c: memref<2x70x40xi32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x70x2000xi8>, memref<2x2000x40xi8>) outs(%c : memref<2x70x40xi32>)
  return
}

// Float-format values: the fp8 kernel, e4m3 x e5m2 bytes (scaled by 2^3
// and 2^-1 on the way in, back on the way out; small integers stay exact).
func.func @product_fp8(%a: memref<2x70x2000xf32>, %b: memref<2x2000x40xf32>, %c: memref<2x70x40xf32>) {
  linalg.batch_matmul {qtrain.float_operands = [#qtrain.float<4, 3, 4, saturate>, #qtrain.float<5, 2, 0>]}
    ins(%a, %b : memref<2x70x2000xf32>, memref<2x2000x40xf32>) outs(%c : memref<2x70x40xf32>)
  return
}

func.func private @printI64(i64)
func.func private @printNewline()

func.func @fill(%a: memref<2x70x2000xf32>, %b: memref<2x2000x40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c40 = arith.constant 40 : index
  %c70 = arith.constant 70 : index
  %c2000 = arith.constant 2000 : index
  %three = arith.constant 3.0 : f32
  %two = arith.constant 2.0 : f32
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
        %w = arith.subf %v, %three : f32
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
        %w = arith.subf %v, %two : f32
        memref.store %w, %b[%x, %k, %j] : memref<2x2000x40xf32>
      }
    }
  }
  return
}

// ref = 1 + A B on the host, in k order.
func.func @reference(%a: memref<2x70x2000xf32>, %b: memref<2x2000x40xf32>, %ref: memref<2x70x40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c40 = arith.constant 40 : index
  %c70 = arith.constant 70 : index
  %c2000 = arith.constant 2000 : index
  %one = arith.constant 1.0 : f32
  scf.for %x = %c0 to %c2 step %c1 {
    scf.for %i = %c0 to %c70 step %c1 {
      scf.for %j = %c0 to %c40 step %c1 {
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
  return
}

// Prints the elements of C that are not 2 x ref - 1 (C started at 1 and
// took the product twice), then the sum of C.
func.func @report(%c: memref<2x70x40xf32>, %ref: memref<2x70x40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c40 = arith.constant 40 : index
  %c70 = arith.constant 70 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
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

func.func @main() {
  %a = memref.alloc() : memref<2x70x2000xf32>
  %b = memref.alloc() : memref<2x2000x40xf32>
  %ref = memref.alloc() : memref<2x70x40xf32>
  call @fill(%a, %b) : (memref<2x70x2000xf32>, memref<2x2000x40xf32>) -> ()
  call @reference(%a, %b, %ref) : (memref<2x70x2000xf32>, memref<2x2000x40xf32>, memref<2x70x40xf32>) -> ()
  %one = arith.constant 1.0 : f32
  %one_i = arith.constant 1 : i32

  // f32 products (on the f32-kind's kernel); twice: the tiles' counters
  // must be back at zero after a launch.
  %c = memref.alloc() : memref<2x70x40xf32>
  linalg.fill ins(%one : f32) outs(%c : memref<2x70x40xf32>)
  call @product(%a, %b, %c) : (memref<2x70x2000xf32>, memref<2x2000x40xf32>, memref<2x70x40xf32>) -> ()
  call @product(%a, %b, %c) : (memref<2x70x2000xf32>, memref<2x2000x40xf32>, memref<2x70x40xf32>) -> ()
  call @report(%c, %ref) : (memref<2x70x40xf32>, memref<2x70x40xf32>) -> ()

  // The same values as 8-bit codes.
  %a8 = memref.alloc() : memref<2x70x2000xi8>
  %b8 = memref.alloc() : memref<2x2000x40xi8>
  linalg.generic {indexing_maps = [affine_map<(x, i, k) -> (x, i, k)>, affine_map<(x, i, k) -> (x, i, k)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : memref<2x70x2000xf32>) outs(%a8 : memref<2x70x2000xi8>) {
  ^bb0(%v: f32, %o: i8):
    %q = arith.fptosi %v : f32 to i8
    linalg.yield %q : i8
  }
  linalg.generic {indexing_maps = [affine_map<(x, k, j) -> (x, k, j)>, affine_map<(x, k, j) -> (x, k, j)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : memref<2x2000x40xf32>) outs(%b8 : memref<2x2000x40xi8>) {
  ^bb0(%v: f32, %o: i8):
    %q = arith.fptosi %v : f32 to i8
    linalg.yield %q : i8
  }
  %ci = memref.alloc() : memref<2x70x40xi32>
  linalg.fill ins(%one_i : i32) outs(%ci : memref<2x70x40xi32>)
  call @product_i8(%a8, %b8, %ci) : (memref<2x70x2000xi8>, memref<2x2000x40xi8>, memref<2x70x40xi32>) -> ()
  call @product_i8(%a8, %b8, %ci) : (memref<2x70x2000xi8>, memref<2x2000x40xi8>, memref<2x70x40xi32>) -> ()
  %cf = memref.alloc() : memref<2x70x40xf32>
  linalg.generic {indexing_maps = [affine_map<(x, i, j) -> (x, i, j)>, affine_map<(x, i, j) -> (x, i, j)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ci : memref<2x70x40xi32>) outs(%cf : memref<2x70x40xf32>) {
  ^bb0(%v: i32, %o: f32):
    %f = arith.sitofp %v : i32 to f32
    linalg.yield %f : f32
  }
  call @report(%cf, %ref) : (memref<2x70x40xf32>, memref<2x70x40xf32>) -> ()

  // As float-format values on fp8.
  %c8 = memref.alloc() : memref<2x70x40xf32>
  linalg.fill ins(%one : f32) outs(%c8 : memref<2x70x40xf32>)
  call @product_fp8(%a, %b, %c8) : (memref<2x70x2000xf32>, memref<2x2000x40xf32>, memref<2x70x40xf32>) -> ()
  call @product_fp8(%a, %b, %c8) : (memref<2x70x2000xf32>, memref<2x2000x40xf32>, memref<2x70x40xf32>) -> ()
  call @report(%c8, %ref) : (memref<2x70x40xf32>, memref<2x70x40xf32>) -> ()
  return
}
