// RUN: qtrain-opt %s --split-input-file --verify-diagnostics \
// RUN:   --qtrain-gpu-gemms | FileCheck %s
// RUN: qtrain-opt %s --split-input-file --qtrain-gpu-gemms="f32-kind=tf32" \
// RUN:   | FileCheck %s --check-prefix=TF32
// RUN: qtrain-opt %s --split-input-file --qtrain-gpu-gemms="f32-kind=bf16" \
// RUN:   | FileCheck %s --check-prefix=F32BF16
// RUN: qtrain-opt %s --split-input-file --qtrain-gpu-gemms="min-flops=1000000000" \
// RUN:   | FileCheck %s --check-prefix=SMALL
// RUN: qtrain-opt %s --split-input-file --qtrain-gpu-gemms="library-calls=false" \
// RUN:   | FileCheck %s --check-prefix=NOLIB
// RUN: not qtrain-opt %s --split-input-file --qtrain-gpu-gemms="f32-kind=f16" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=KIND
// RUN: qtrain-opt %s --split-input-file --qtrain-gpu-gemms="fp8-scale=exact" \
// RUN:   | FileCheck %s --check-prefix=EXACT
// RUN: not qtrain-opt %s --split-input-file --qtrain-gpu-gemms="fp8-scale=amax" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SCALE
// SCALE: fp8-scale must be fit or exact, got 'amax'
// RUN: qtrain-opt %s --split-input-file --qtrain-gpu-gemms="float-kind=bf16" \
// RUN:   | FileCheck %s --check-prefix=BF16
// RUN: qtrain-opt %s --split-input-file --qtrain-gpu-gemms="float-kind=f32" \
// RUN:   | FileCheck %s --check-prefix=FLOATF32
// RUN: not qtrain-opt %s --split-input-file --qtrain-gpu-gemms="float-kind=fp16" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FLOATKIND
// FLOATKIND: float-kind must be fp8, bf16 or f32, got 'fp16'

// KIND: f32-kind must be f32, tf32 or bf16, got 'f16'
// SMALL-NOT: gpu.launch_func
// NOLIB-NOT: qtrain_cuda_gemm
// NOLIB-NOT: scf.if
// NOLIB: gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_f32_f32xf32_b1_m128_n96_k64

// An f32 product on the f32 kernel. A is dense [m, k] already and is read
// as it is; B [k, n] is gathered K-contiguous into [n, k]; the epilogue adds
// C to the init, which the matmul accumulates into. The launch runs only
// when the runtime's GEMM library (cuBLASLt) declines the product: kind 0
// (f32), encodings 0 and 0 (f32), batch 1, m 128, n 96, k 64.

// CHECK:       func.func private @qtrain_cuda_gemm(index, index, index, i32, i32, i32, i64, i64, i64, i64) -> i32
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:    %[[A:.*]]: memref<128x64xf32>, %[[B:.*]]: memref<64x96xf32>, %[[C:.*]]: memref<128x96xf32>)
// CHECK:         %[[AF:.*]] = memref.collapse_shape %[[A]] {{\[\[}}0, 1]] : memref<128x64xf32> into memref<8192xf32>
// CHECK:         %[[BT:.*]] = memref.alloc() : memref<96x64xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[$T:.*]], #[[$ID:.*]]], {{.*}} ins(%[[B]] : memref<64x96xf32>) outs(%[[BT]] : memref<96x64xf32>)
// CHECK:         %[[BF:.*]] = memref.collapse_shape %[[BT]] {{.*}} into memref<6144xf32>
// CHECK:         %[[R:.*]] = memref.alloc() : memref<12288xf32>
// CHECK:         %[[PA:.*]] = memref.extract_aligned_pointer_as_index %[[AF]]
// CHECK:         %[[PB:.*]] = memref.extract_aligned_pointer_as_index %[[BF]]
// CHECK:         %[[PC:.*]] = memref.extract_aligned_pointer_as_index %[[R]]
// CHECK:         %[[RAN:.*]] = call @qtrain_cuda_gemm(%[[PA]], %[[PB]], %[[PC]], %c0_i32{{.*}}, %c0_i32{{.*}}, %c0_i32{{.*}}, %c1_i64, %c128_i64, %c96_i64, %c64_i64)
// CHECK:         %[[DECLINED:.*]] = arith.cmpi eq, %[[RAN]], %c0_i32
// CHECK:         scf.if %[[DECLINED]] {
// CHECK:           gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_f32_f32xf32_b1_m128_n96_k64 blocks in (%c3, %c2, %c1) threads in (%c128, %c1{{.*}}, %c1{{.*}}) args(%[[AF]] : memref<8192xf32>, %[[BF]] : memref<6144xf32>, %[[R]] : memref<12288xf32>)
// CHECK:         %[[RE:.*]] = memref.expand_shape %[[R]] {{\[\[}}0, 1]] output_shape [128, 96]
// CHECK:         linalg.generic {{.*}} ins(%[[RE]] : memref<128x96xf32>) outs(%[[C]] : memref<128x96xf32>)
// CHECK:           %[[S:.*]] = arith.addf %[[OUT:.*]], %[[IN:.*]] : f32
// CHECK:           linalg.yield %[[S]]
// CHECK-DAG:     memref.dealloc %[[BT]]
// CHECK-DAG:     memref.dealloc %[[R]]
// CHECK-NOT:     linalg.matmul
// CHECK:       gpu.module @qtrain_step_gemms
// CHECK:         gpu.func @qtrain_gemm_f32_f32xf32_b1_m128_n96_k64(%{{.*}}: memref<8192xf32>, %{{.*}}: memref<6144xf32>, %{{.*}}: memref<12288xf32>) kernel
// CHECK-SAME:      qtrain.gemm = {a = "f32", b = "f32", batch = 1 : i64, block = [128, 1, 1], c = "f32", grid = [3, 2, 1], k = 64 : i64, k_chunk = 64 : i64, kind = "f32", m = 128 : i64, n = 96 : i64, splits = 1 : i64}
// CHECK:           llvm.intr.fma
// TF32-LABEL: func.func @matmul(
// TF32:         gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_tf32_f32xf32_b1_m128_n96_k64
// TF32:       gpu.func @qtrain_gemm_tf32_f32xf32_b1_m128_n96_k64
// TF32:         nvvm.convert.float.to.tf32 {{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// TF32:         nvvm.mma.sync
func.func @matmul(%a: memref<128x64xf32>, %b: memref<64x96xf32>, %c: memref<128x96xf32>) {
  linalg.matmul ins(%a, %b : memref<128x64xf32>, memref<64x96xf32>)
                outs(%c : memref<128x96xf32>)
  return
}

// -----

// Sign-extended 8-bit codes (the 3- to 8-bit grids) on the i8 tensor-core
// kernel, exact s32 sums; operands already [m, k] and [n, k].

// CHECK-LABEL: func.func @codes(
// CHECK-NOT:     memref.alloc() : memref<{{.*}}xi8>
// CHECK:         call @qtrain_cuda_gemm({{.*}}, %c4_i32, %c4_i32{{.*}}, %c4_i32{{.*}}, %c1_i64, %c64_i64, %c32_i64, %c256_i64)
// CHECK:         gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_i8_s8xs8_b1_m64_n32_k256
// CHECK:         linalg.generic
// CHECK:           arith.addi
// CHECK:       gpu.func @qtrain_gemm_i8_s8xs8_b1_m64_n32_k256(%{{.*}}: memref<16384xi8>, %{{.*}}: memref<8192xi8>, %{{.*}}: memref<2048xi32>)
// CHECK:         nvvm.mma.sync {{.*}} {intOverflowBehavior = #nvvm.mma_int_overflow<wrapped>, layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<s8>, multiplicandBPtxType = #nvvm.mma_type<s8>, shape = #nvvm.shape<m = 16, n = 8, k = 32>}
#ak = affine_map<(i, j, k) -> (i, k)>
#bk = affine_map<(i, j, k) -> (j, k)>
#cij = affine_map<(i, j, k) -> (i, j)>
func.func @codes(%a: memref<64x256xi8>, %b: memref<32x256xi8>, %c: memref<64x32xi32>) {
  linalg.generic {indexing_maps = [#ak, #bk, #cij],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x256xi8>, memref<32x256xi8>) outs(%c : memref<64x32xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}

// -----

// f32 operands that hold bf16 values (qtrain.bf16_operands) are gathered
// as bf16 bits for the bf16 kernel, whatever f32-kind says.

// CHECK-LABEL: func.func @bf16(
// CHECK:         memref.alloc() : memref<64x128xi16>
// CHECK:         linalg.generic
// CHECK:           %[[T:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK:           %[[BITS:.*]] = arith.bitcast %[[T]] : bf16 to i16
// CHECK:           linalg.yield %[[BITS]] : i16
// CHECK:         call @qtrain_cuda_gemm({{.*}}, %c2_i32, %c1_i32, %c1_i32{{.*}}, %c1_i64, %c64_i64, %c64_i64{{.*}}, %c128_i64)
// CHECK:         gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_bf16_bf16xbf16_b1_m64_n64_k128
// CHECK:       gpu.func @qtrain_gemm_bf16_bf16xbf16_b1_m64_n64_k128(%{{.*}}: memref<8192xi16>, %{{.*}}: memref<8192xi16>, %{{.*}}: memref<4096xf32>)
// CHECK:         nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// f32-kind=bf16: f32 products round their operands to bf16 (the
// mixed-precision step).
// F32BF16-LABEL: func.func @matmul(
// F32BF16:         arith.truncf %{{.*}} : f32 to bf16
// F32BF16:         gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_bf16_bf16xbf16_b1_m128_n96_k64
// TF32-LABEL: func.func @bf16(
// TF32:         gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_bf16_
func.func @bf16(%a: memref<64x128xf32>, %b: memref<128x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul {qtrain.bf16_operands}
                ins(%a, %b : memref<64x128xf32>, memref<128x64xf32>)
                outs(%c : memref<64x64xf32>)
  return
}

// -----

// f32 operands that hold FP(5, 2, 0) and FP(4, 3, 4) values
// (qtrain.float_operands) run on the fp8 kernel, e5m2 x e4m3. The gathers
// scale each value into fp8's range (fit: FP(5, 2, 0) by 2^-1, FP(4, 3, 4)
// by 2^3), saturate what is beyond fp8's largest, round and encode it as a
// byte; e5m2 keeps +-inf (0x7C). The epilogue scales the sums back by
// 2^-(-1 + 3) = 0.25. With fp8-scale=exact the scales are 2^0 and 2^4.

// CHECK-LABEL: func.func @fp8(
// CHECK:         memref.alloc() : memref<64x128xi8>
// CHECK:         linalg.generic
// CHECK:           arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK:           arith.cmpi ugt, %{{.*}}, %c1197473792_i32 : i32
// CHECK:           arith.ori %{{.*}}, %c124_i32 : i32
// CHECK:           %[[B8:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK:           linalg.yield %[[B8]] : i8
// CHECK:         memref.alloc() : memref<64x128xi8>
// CHECK:           arith.cmpi ugt, %{{.*}}, %c1138753536_i32 : i32
// CHECK:         call @qtrain_cuda_gemm({{.*}}, %c3_i32, %c3_i32{{.*}}, %c2_i32, %c1_i64, %c64_i64, %c64_i64{{.*}}, %c128_i64)
// CHECK:         gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_fp8_e5m2xe4m3_b1_m64_n64_k128
// CHECK:         linalg.generic
// CHECK:           %[[S:.*]] = arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK:           arith.addf %{{.*}}, %[[S]] : f32
// CHECK:       gpu.func @qtrain_gemm_fp8_e5m2xe4m3_b1_m64_n64_k128(%{{.*}}: memref<8192xi8>, %{{.*}}: memref<8192xi8>, %{{.*}}: memref<4096xf32>)
// CHECK:         mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32
// With float-kind=bf16 the same product runs on bf16, exactly (both
// formats' values are bf16 values); with f32 on f32-kind.
// BF16-LABEL: func.func @fp8(
// BF16:         arith.truncf %{{.*}} : f32 to bf16
// BF16:         gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_bf16_bf16xbf16_b1_m64_n64_k128
// FLOATF32-LABEL: func.func @fp8(
// FLOATF32:       gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_f32_f32xf32_b1_m64_n64_k128
// EXACT-LABEL: func.func @fp8(
// EXACT-NOT:     arith.constant 5.000000e-01
// EXACT:         arith.constant 1.600000e+01 : f32
// EXACT:         gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_fp8_e5m2xe4m3_
// EXACT:         arith.constant 6.250000e-02 : f32
func.func @fp8(%a: memref<64x128xf32>, %b: memref<128x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul {qtrain.float_operands = [#qtrain.float<5, 2, 0>, #qtrain.float<4, 3, 4, saturate>]}
                ins(%a, %b : memref<64x128xf32>, memref<128x64xf32>)
                outs(%c : memref<64x64xf32>)
  return
}

// -----

// Formats without an fp8 form leave the product to f32-kind.

// CHECK-LABEL: func.func @no_fp8(
// CHECK:         gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_f32_f32xf32_b1_m64_n64_k128
func.func @no_fp8(%a: memref<64x128xf32>, %b: memref<128x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul {qtrain.float_operands = [#qtrain.float<6, 9, 0>, #qtrain.float<4, 3, 4, saturate>]}
                ins(%a, %b : memref<64x128xf32>, memref<128x64xf32>)
                outs(%c : memref<64x64xf32>)
  return
}

// -----

// A convolution's first operand is gathered as its patches (im2col): m is
// (image, oh, ow), n the filters, k (channel, kh, kw); the epilogue writes
// the result back through the NCHW map.

// CHECK-DAG:   #[[$PATCH:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>
// CHECK-DAG:   #[[$OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
// CHECK-LABEL: func.func @conv(
// CHECK-SAME:    %[[X:.*]]: memref<4x8x10x10xf32>, %[[W:.*]]: memref<16x8x3x3xf32>, %[[Y:.*]]: memref<4x16x8x8xf32>)
// CHECK:         %[[P:.*]] = memref.alloc() : memref<4x8x8x8x3x3xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[$PATCH]], #{{.*}}]{{.*}} ins(%[[X]] : {{.*}}) outs(%[[P]] :
// CHECK:         memref.collapse_shape %[[P]] {{.*}} into memref<18432xf32>
// CHECK:         memref.collapse_shape %[[W]] {{.*}} into memref<1152xf32>
// CHECK:         gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_f32_f32xf32_b1_m256_n16_k72
// CHECK:         %[[R:.*]] = memref.expand_shape {{.*}} output_shape [4, 8, 8, 16]
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[$OUT]]]{{.*}} ins(%[[R]] : {{.*}}) outs(%[[Y]] :
func.func @conv(%x: memref<4x8x10x10xf32>, %w: memref<16x8x3x3xf32>, %y: memref<4x16x8x8xf32>) {
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<4x8x10x10xf32>, memref<16x8x3x3xf32>)
                           outs(%y : memref<4x16x8x8xf32>)
  return
}

// -----

// A batch loop (read by all three operands) is the kernel's grid z.

// CHECK-LABEL: func.func @batched(
// CHECK:         gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_f32_f32xf32_b4_m64_n32_k48 blocks in (%c1, %c1{{.*}}, %c4)
func.func @batched(%a: memref<4x64x48xf32>, %b: memref<4x48x32xf32>, %c: memref<4x64x32xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x64x48xf32>, memref<4x48x32xf32>)
                      outs(%c : memref<4x64x32xf32>)
  return
}

// -----

// What no kernel computes exactly stays a loop nest: 16-bit codes,
// zero-extended codes, another body, a product below min-flops, dynamic
// loops.

// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     gpu.launch_func
// CHECK-COUNT-5: linalg.
// CHECK-NOT:     gpu.module
#ak = affine_map<(i, j, k) -> (i, k)>
#bk = affine_map<(i, j, k) -> (j, k)>
#cij = affine_map<(i, j, k) -> (i, j)>
func.func @left_alone(%a16: memref<64x256xi16>, %b16: memref<32x256xi16>,
                      %a8: memref<64x256xi8>, %b8: memref<32x256xi8>,
                      %c: memref<64x32xi32>, %f: memref<64x256xf32>,
                      %g: memref<32x256xf32>, %h: memref<64x32xf32>,
                      %s: memref<4x4xf32>, %d: memref<?x256xf32>,
                      %e: memref<?x32xf32>) {
  linalg.generic {indexing_maps = [#ak, #bk, #cij],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a16, %b16 : memref<64x256xi16>, memref<32x256xi16>) outs(%c : memref<64x32xi32>) {
  ^bb0(%x: i16, %y: i16, %acc: i32):
    %0 = arith.extsi %x : i16 to i32
    %1 = arith.extsi %y : i16 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  linalg.generic {indexing_maps = [#ak, #bk, #cij],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a8, %b8 : memref<64x256xi8>, memref<32x256xi8>) outs(%c : memref<64x32xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extui %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  linalg.generic {indexing_maps = [#ak, #bk, #cij],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%f, %g : memref<64x256xf32>, memref<32x256xf32>) outs(%h : memref<64x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.maximumf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.matmul ins(%s, %s : memref<4x4xf32>, memref<4x4xf32>) outs(%s : memref<4x4xf32>)
  linalg.generic {indexing_maps = [#ak, #bk, #cij],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%d, %g : memref<?x256xf32>, memref<32x256xf32>) outs(%e : memref<?x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A product whose init a fill writes just before it: the epilogue writes
// the fill's value plus the product (the same sum), and the fill goes (a
// launch over the whole result). When something between them may read the
// init (here a copy of it), or the product reads it itself, the fill stays.

// CHECK-LABEL: func.func @filled(
// CHECK-SAME:    %{{[^:]+}}: memref<128x64xi8>, %{{[^:]+}}: memref<64x96xi8>, %[[OUT:[^:]+]]: memref<128x96xi32>
// CHECK:         %[[INIT:.*]] = memref.alloc() : memref<128x96xi32>
// CHECK-NOT:     linalg.fill
// CHECK:         gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_i8_s8xs8_b1_m128_n96_k64
// CHECK:         linalg.generic {{.*}} outs(%[[INIT]] : memref<128x96xi32>)
// CHECK-NEXT:    ^bb0(%[[P:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT:      %[[S:.*]] = arith.addi %c7_i32, %[[P]] : i32
// CHECK-NEXT:      linalg.yield %[[S]]
// CHECK:         linalg.fill ins(%c7_i32 : i32) outs(%[[OUT]] : memref<128x96xi32>)
// CHECK-NEXT:    memref.copy %[[OUT]]
// CHECK:         gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_i8_s8xs8_b1_m128_n96_k64
// CHECK:           arith.addi %{{.*}}, %{{.*}} : i32
func.func @filled(%a: memref<128x64xi8>, %b: memref<64x96xi8>, %out: memref<128x96xi32>, %copy: memref<128x96xi32>) {
  %c7 = arith.constant 7 : i32
  %init = memref.alloc() : memref<128x96xi32>
  linalg.fill ins(%c7 : i32) outs(%init : memref<128x96xi32>)
  linalg.matmul ins(%a, %b : memref<128x64xi8>, memref<64x96xi8>) outs(%init : memref<128x96xi32>)
  linalg.fill ins(%c7 : i32) outs(%out : memref<128x96xi32>)
  memref.copy %out, %copy : memref<128x96xi32> to memref<128x96xi32>
  linalg.matmul ins(%a, %b : memref<128x64xi8>, memref<64x96xi8>) outs(%out : memref<128x96xi32>)
  memref.dealloc %init : memref<128x96xi32>
  return
}
