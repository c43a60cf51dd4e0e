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

func.func @barrier_in_control_flow(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      // expected-error @+1 {{a barrier inside control flow cannot run in host loops}}
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// A value that crosses a barrier is recomputed after it; a load cannot be.
func.func @barrier_crossing_load(%a: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{a value that crosses a barrier must be recomputable (pure)}}
    %v = memref.load %a[%tx] : memref<4xf32>
    gpu.barrier
    memref.store %v, %a[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// Workgroup memory and barriers: the blocks one after the other, each with
// a host buffer for the workgroup's, and the parts between barriers each
// for every thread of the block before the next (here: each thread reads
// its neighbour's element after the barrier). A value from before the
// barrier (the neighbour's index) is recomputed after it.

// CHECK-LABEL: func.func @shared(
// CHECK-SAME:    %[[A:.*]]: memref<8xf32>)
// CHECK:         scf.for %[[BX:.*]] = %{{.*}} to %[[C2:.*]] step
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               %[[SH:.*]] = memref.alloc() : memref<4xf32>
// CHECK:               scf.parallel (%[[T1:.*]], %{{.*}}, %{{.*}}) =
// CHECK:                 memref.load %[[A]]
// CHECK:                 memref.store %{{.*}}, %[[SH]][%[[T1]]]
// CHECK:               scf.parallel (%[[T2:.*]], %{{.*}}, %{{.*}}) =
// CHECK:                 %[[NEXT:.*]] = arith.addi %[[T2]]
// CHECK:                 %[[WRAP:.*]] = arith.remui %[[NEXT]]
// CHECK:                 memref.load %[[SH]][%[[WRAP]]]
// CHECK:                 memref.store
// CHECK:               memref.dealloc %[[SH]]
// CHECK-NOT:     gpu.
func.func @shared(%a: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1)
             workgroup(%sh : memref<4xf32, #gpu.address_space<workgroup>>) {
    %base = arith.muli %bx, %c4 : index
    %i = arith.addi %base, %tx : index
    %next = arith.addi %tx, %c1 : index
    %wrap = arith.remui %next, %c4 : index
    %v = memref.load %a[%i] : memref<8xf32>
    memref.store %v, %sh[%tx] : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %w = memref.load %sh[%wrap] : memref<4xf32, #gpu.address_space<workgroup>>
    memref.store %w, %a[%i] : memref<8xf32>
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

// -----

// A GEMM kernel's launch (qtrain-gpu-gemms) runs what its qtrain.gemm
// description states, C[b, i, j] = sum over k in order of A[b, i, k] x
// B[b, j, k]: f32 with one fused multiply-add per term; the kernels'
// module goes once nothing launches it.

// CHECK-LABEL: func.func @gemm_f32(
// CHECK-SAME:    %[[A:.*]]: memref<96xf32>, %[[B:.*]]: memref<48xf32>, %[[C:.*]]: memref<72xf32>)
// CHECK:         scf.parallel ({{.*}}) = (%c0, %c0, %c0) to (%c2{{.*}}, %c6, %c3)
// CHECK:           %[[S:.*]] = scf.for %{{.*}} = %c0 to %c8 step %c1{{.*}} iter_args(%[[ACC:.*]] = %cst) -> (f32)
// CHECK:             %[[X:.*]] = memref.load %[[A]]
// CHECK:             %[[Y:.*]] = memref.load %[[B]]
// CHECK:             %[[F:.*]] = math.fma %[[X]], %[[Y]], %[[ACC]] : f32
// CHECK:             scf.yield %[[F]]
// CHECK:           memref.store %[[S]], %[[C]]
// CHECK-NOT:     gpu.
module attributes {gpu.container_module} {
  func.func @gemm_f32(%a: memref<96xf32>, %b: memref<48xf32>, %c: memref<72xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @k::@f32 blocks in (%c1, %c1, %c2) threads in (%c128, %c1, %c1)
      args(%a : memref<96xf32>, %b : memref<48xf32>, %c : memref<72xf32>)
    return
  }
  gpu.module @k {
    gpu.func @f32(%a: memref<96xf32>, %b: memref<48xf32>, %c: memref<72xf32>) kernel
        attributes {qtrain.gemm = {kind = "f32", a = "f32", b = "f32", c = "f32",
                                   batch = 2, m = 6, n = 3, k = 8, splits = 1, k_chunk = 8,
                                   grid = [1, 1, 2], block = [128, 1, 1]}} {
      gpu.return
    }
  }
}

// -----

// bf16 bits widened to f32 and 8-bit codes summed exactly in i32.

// CHECK-LABEL: func.func @gemm_narrow(
// CHECK:         scf.for
// CHECK:           arith.extui %{{.*}} : i16 to i32
// CHECK:           arith.shli %{{.*}}, %c16_i32
// CHECK:           arith.bitcast %{{.*}} : i32 to f32
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         scf.for
// CHECK:           arith.extsi %{{.*}} : i8 to i32
// CHECK:           arith.extsi %{{.*}} : i8 to i32
// CHECK:           arith.muli
// CHECK:           arith.addi
// CHECK-NOT:     gpu.
module attributes {gpu.container_module} {
  func.func @gemm_narrow(%a: memref<32xi16>, %c: memref<16xf32>,
                         %p: memref<32xi8>, %r: memref<16xi32>) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @k::@bf16 blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
      args(%a : memref<32xi16>, %a : memref<32xi16>, %c : memref<16xf32>)
    gpu.launch_func @k::@i8 blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
      args(%p : memref<32xi8>, %p : memref<32xi8>, %r : memref<16xi32>)
    return
  }
  gpu.module @k {
    gpu.func @bf16(%a: memref<32xi16>, %b: memref<32xi16>, %c: memref<16xf32>) kernel
        attributes {qtrain.gemm = {kind = "bf16", a = "bf16", b = "bf16", c = "f32",
                                   batch = 1, m = 4, n = 4, k = 8, splits = 1, k_chunk = 8,
                                   grid = [1, 1, 1], block = [128, 1, 1]}} {
      gpu.return
    }
    gpu.func @i8(%a: memref<32xi8>, %b: memref<32xi8>, %c: memref<16xi32>) kernel
        attributes {qtrain.gemm = {kind = "i8", a = "s8", b = "s8", c = "s32",
                                   batch = 1, m = 4, n = 4, k = 8, splits = 1, k_chunk = 8,
                                   grid = [1, 1, 1], block = [128, 1, 1]}} {
      gpu.return
    }
  }
}

// -----

// tf32 operands are rounded to nearest, ties away from zero (half an ulp
// added to the bits, then truncated), as cvt.rna.tf32.f32; a NaN stays NaN
// (the sum would carry it to inf or wrap it to zero).

// CHECK-LABEL: func.func @gemm_tf32(
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[RAW:.*]] : f32 to i32
// CHECK:         %[[UP:.*]] = arith.addi %[[BITS]], %c4096_i32
// CHECK:         %[[CUT:.*]] = arith.andi %[[UP]], %c-8192_i32
// CHECK:         %[[NAN:.*]] = arith.cmpf uno, %[[RAW]], %[[RAW]]
// CHECK:         %[[ROUNDED:.*]] = arith.bitcast %[[CUT]] : i32 to f32
// CHECK:         arith.select %[[NAN]], %[[RAW]], %[[ROUNDED]]
module attributes {gpu.container_module} {
  func.func @gemm_tf32(%a: memref<32xf32>, %c: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @k::@tf32 blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
      args(%a : memref<32xf32>, %a : memref<32xf32>, %c : memref<16xf32>)
    return
  }
  gpu.module @k {
    gpu.func @tf32(%a: memref<32xf32>, %b: memref<32xf32>, %c: memref<16xf32>) kernel
        attributes {qtrain.gemm = {kind = "tf32", a = "f32", b = "f32", c = "f32",
                                   batch = 1, m = 4, n = 4, k = 8, splits = 1, k_chunk = 8,
                                   grid = [1, 1, 1], block = [128, 1, 1]}} {
      gpu.return
    }
  }
}

// -----

// Any other kernel launch has no host form.

module attributes {gpu.container_module} {
  func.func @other(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{emulates only synchronous launches of GEMM kernels described by qtrain.gemm}}
    gpu.launch_func @k::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
      args(%a : memref<4xf32>)
    return
  }
  gpu.module @k {
    gpu.func @other(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// fp8 bytes decoded as the kernel reads them (e4m3: FP(4, 3, 0) codes but
// S.1111.111 is NaN; e5m2: FP(5, 2, 0) codes but S.11111.00 is +-inf and
// S.11111.xx NaN), their exact products summed in f32 in k order.

// CHECK-LABEL: func.func @fp8(
// CHECK:         scf.for
// CHECK:           arith.extui %{{.*}} : i8 to i32
// CHECK:           arith.andi %{{.*}}, %c124_i32
// CHECK:           arith.cmpi eq, %{{.*}}, %c124_i32
// CHECK:           arith.select %{{.*}}, %cst{{.*}}, %cst{{.*}} : f32
// CHECK:           arith.extui %{{.*}} : i8 to i32
// CHECK:           arith.andi %{{.*}}, %c127_i32
// CHECK:           arith.cmpi eq, %{{.*}}, %c127_i32
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK-NOT:     gpu.
module attributes {gpu.container_module} {
  func.func @fp8(%a: memref<32xi8>, %c: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@fp8 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
      args(%a : memref<32xi8>, %a : memref<32xi8>, %c : memref<16xf32>)
    return
  }
  gpu.module @k {
    gpu.func @fp8(%a: memref<32xi8>, %b: memref<32xi8>, %c: memref<16xf32>) kernel
        attributes {qtrain.gemm = {kind = "fp8", a = "e5m2", b = "e4m3", c = "f32",
                                   batch = 1, m = 4, n = 4, k = 8, splits = 1, k_chunk = 8,
                                   grid = [1, 1, 1], block = [128, 1, 1]}} {
      gpu.return
    }
  }
}

// -----

// The host has no GEMM library: the offer (qtrain_cuda_gemm) is declined,
// so the kernel's launch runs, as host loops.

// CHECK-LABEL: func.func @offered(
// CHECK-NOT:     qtrain_cuda_gemm
// CHECK:         %[[GO:.*]] = arith.cmpi eq, %c0_i32_{{[0-9]+}}, %c0_i32 : i32
// CHECK:         scf.if %[[GO]] {
// CHECK:           scf.parallel
// CHECK:             math.fma
// CHECK-NOT:     qtrain_cuda_gemm
module attributes {gpu.container_module} {
  func.func private @qtrain_cuda_gemm(index, index, index, i32, i32, i32, i64, i64, i64, i64) -> i32
  func.func @offered(%a: memref<96xf32>, %b: memref<48xf32>, %c: memref<72xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %zero = arith.constant 0 : i32
    %k0 = arith.constant 0 : i32
    %b1 = arith.constant 2 : i64
    %m = arith.constant 6 : i64
    %n = arith.constant 3 : i64
    %k = arith.constant 8 : i64
    %pa = memref.extract_aligned_pointer_as_index %a : memref<96xf32> -> index
    %pb = memref.extract_aligned_pointer_as_index %b : memref<48xf32> -> index
    %pc = memref.extract_aligned_pointer_as_index %c : memref<72xf32> -> index
    %ran = func.call @qtrain_cuda_gemm(%pa, %pb, %pc, %k0, %k0, %k0, %b1, %m, %n, %k)
        : (index, index, index, i32, i32, i32, i64, i64, i64, i64) -> i32
    %declined = arith.cmpi eq, %ran, %zero : i32
    scf.if %declined {
      gpu.launch_func @k::@f32 blocks in (%c1, %c1, %c2) threads in (%c128, %c1, %c1)
        args(%a : memref<96xf32>, %b : memref<48xf32>, %c : memref<72xf32>)
    }
    return
  }
  gpu.module @k {
    gpu.func @f32(%a: memref<96xf32>, %b: memref<48xf32>, %c: memref<72xf32>) kernel
        attributes {qtrain.gemm = {kind = "f32", a = "f32", b = "f32", c = "f32",
                                   batch = 2, m = 6, n = 3, k = 8, splits = 1, k_chunk = 8,
                                   grid = [1, 1, 2], block = [128, 1, 1]}} {
      gpu.return
    }
  }
}
