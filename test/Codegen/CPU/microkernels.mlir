// RUN: qtrain-opt %s --qtrain-microkernels --split-input-file -verify-diagnostics | FileCheck %s

// An f32 GEMM whose B is a transposed view (N x K storage): the call gets
// B's strides swapped, C accumulates in place.
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (n, k)>
#mC = affine_map<(m, n, k) -> (m, n)>
// CHECK: func.func private @qtrain_mk_gemm_f32(i64, i64, i64, memref<f32>, i64, i64, i64, memref<f32>, i64, i64, i64, memref<f32>, i64, i64, i64)
// CHECK-LABEL: func.func @f32_transposed_b
func.func @f32_transposed_b(%a: memref<64x32xf32>, %w: memref<48x32xf32>, %c: memref<64x48xf32>) {
  // CHECK-DAG: %[[M:.*]] = arith.constant 64 : i64
  // CHECK-DAG: %[[N:.*]] = arith.constant 48 : i64
  // CHECK-DAG: %[[K:.*]] = arith.constant 32 : i64
  // CHECK: %[[BA:.*]], %[[OA:.*]], %{{.*}}:2, %[[SA:.*]]:2 = memref.extract_strided_metadata %arg0
  // CHECK: %[[BB:.*]], %[[OB:.*]], %{{.*}}:2, %[[SB:.*]]:2 = memref.extract_strided_metadata %arg1
  // CHECK: %[[SBK:.*]] = arith.index_cast %[[SB]]#1 : index to i64
  // CHECK: %[[SBN:.*]] = arith.index_cast %[[SB]]#0 : index to i64
  // CHECK: call @qtrain_mk_gemm_f32(%[[M]], %[[N]], %[[K]], %[[BA]], %{{.*}}, %{{.*}}, %{{.*}}, %[[BB]], %{{.*}}, %[[SBK]], %[[SBN]],
  // CHECK-NOT: linalg.generic
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<64x32xf32>, memref<48x32xf32>) outs(%c : memref<64x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Signed 8-bit codes into i32 sums: the s8 kernel; a subview operand keeps
// its offset and strides.
// CHECK-LABEL: func.func @s8_codes
// CHECK: call @qtrain_mk_gemm_s8s8s32
// CHECK-NOT: linalg.matmul
func.func @s8_codes(%a: memref<128x64xi8>, %b: memref<64x100xi8>, %c: memref<128x96xi32>) {
  %bv = memref.subview %b[0, 2] [64, 96] [1, 1] : memref<64x100xi8> to memref<64x96xi8, strided<[100, 1], offset: 2>>
  linalg.matmul ins(%a, %bv : memref<128x64xi8>, memref<64x96xi8, strided<[100, 1], offset: 2>>) outs(%c : memref<128x96xi32>)
  return
}

// -----

// 16-bit codes (9..16-bit grids) into i32 sums: the s16 kernel (vpdpwssd);
// an i16 x i16 product summed in i64 is not served.
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @s16_codes
// CHECK: call @qtrain_mk_gemm_s16s16s32
// CHECK-NOT: call
// CHECK: linalg.generic
func.func @s16_codes(%a: memref<128x64xi16>, %b: memref<64x96xi16>, %c: memref<128x96xi32>, %w: memref<128x96xi64>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<128x64xi16>, memref<64x96xi16>) outs(%c : memref<128x96xi32>) {
  ^bb0(%x: i16, %y: i16, %acc: i32):
    %xe = arith.extsi %x : i16 to i32
    %ye = arith.extsi %y : i16 to i32
    %p = arith.muli %xe, %ye : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<128x64xi16>, memref<64x96xi16>) outs(%w : memref<128x96xi64>) {
  ^bb0(%x: i16, %y: i16, %acc: i64):
    %xe = arith.extsi %x : i16 to i64
    %ye = arith.extsi %y : i16 to i64
    %p = arith.muli %xe, %ye : i64
    %s = arith.addi %acc, %p : i64
    linalg.yield %s : i64
  }
  return
}

// -----

// Not served: zero-extended codes (another product), a batch dimension,
// a product below min-flops, and tensors (not bufferized).
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: call
// CHECK: linalg.generic
// CHECK: arith.extui
// CHECK: linalg.batch_matmul
// CHECK: linalg.matmul
// CHECK: linalg.matmul
func.func @left_alone(%a: memref<64x64xi8>, %b: memref<64x64xi8>, %c: memref<64x64xi32>,
                      %ba: memref<2x64x64xf32>, %bb: memref<2x64x64xf32>, %bc: memref<2x64x64xf32>,
                      %sa: memref<4x4xf32>, %sb: memref<4x4xf32>, %sc: memref<4x4xf32>,
                      %ta: tensor<64x64xf32>, %tb: tensor<64x64xf32>, %tc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xi8>, memref<64x64xi8>) outs(%c : memref<64x64xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xe = arith.extui %x : i8 to i32
    %ye = arith.extui %y : i8 to i32
    %p = arith.muli %xe, %ye : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  linalg.batch_matmul ins(%ba, %bb : memref<2x64x64xf32>, memref<2x64x64xf32>) outs(%bc : memref<2x64x64xf32>)
  linalg.matmul ins(%sa, %sb : memref<4x4xf32>, memref<4x4xf32>) outs(%sc : memref<4x4xf32>)
  %r = linalg.matmul ins(%ta, %tb : tensor<64x64xf32>, tensor<64x64xf32>) outs(%tc : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// The W^T of a linear layer: a fresh buffer a transpose fills only for the
// GEMM is read from W in place (strides swapped); the copy and its buffer
// go away.
// CHECK-LABEL: func.func @folded_transpose
// CHECK-NOT: linalg.transpose
// CHECK-NOT: memref.alloc
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:2, %[[SW:.*]]:2 = memref.extract_strided_metadata %arg1
// CHECK: %[[SK:.*]] = arith.index_cast %[[SW]]#1 : index to i64
// CHECK: %[[SN:.*]] = arith.index_cast %[[SW]]#0 : index to i64
// CHECK: call @qtrain_mk_gemm_f32({{.*}}, %[[SK]], %[[SN]],
// CHECK-NOT: memref.dealloc
func.func @folded_transpose(%x: memref<64x32xf32>, %w: memref<48x32xf32>, %y: memref<64x48xf32>) {
  %wt = memref.alloc() : memref<32x48xf32>
  linalg.transpose ins(%w : memref<48x32xf32>) outs(%wt : memref<32x48xf32>) permutation = [1, 0]
  linalg.matmul ins(%x, %wt : memref<64x32xf32>, memref<32x48xf32>) outs(%y : memref<64x48xf32>)
  memref.dealloc %wt : memref<32x48xf32>
  return
}

// -----

// Not folded: W is written between the transpose and the GEMM.
// CHECK-LABEL: func.func @written_source
// CHECK: linalg.transpose
// CHECK: linalg.fill
// CHECK: call @qtrain_mk_gemm_f32
func.func @written_source(%x: memref<64x32xf32>, %w: memref<48x32xf32>, %y: memref<64x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %wt = memref.alloc() : memref<32x48xf32>
  linalg.transpose ins(%w : memref<48x32xf32>) outs(%wt : memref<32x48xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%w : memref<48x32xf32>)
  linalg.matmul ins(%x, %wt : memref<64x32xf32>, memref<32x48xf32>) outs(%y : memref<64x48xf32>)
  memref.dealloc %wt : memref<32x48xf32>
  return
}

// -----

// qtrain.code_bits (left by qtrain-integer-kernels): 2 x 2-bit codes run
// bit-serial, 3 x 3 (9 plane pairs) stay on VNNI; the hint is removed.
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @narrow_codes
// CHECK: %[[A:.*]] = arith.constant 2 : i32
// CHECK: %[[B:.*]] = arith.constant 2 : i32
// CHECK: call @qtrain_mk_gemm_bitserial({{.*}}, %[[A]], %[[B]])
// CHECK: call @qtrain_mk_gemm_s8s8s32
// CHECK-NOT: qtrain.code_bits
func.func @narrow_codes(%a: memref<64x64xi8>, %b: memref<64x64xi8>, %c: memref<64x64xi32>, %d: memref<64x64xi32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xi8>, memref<64x64xi8>) outs(%c : memref<64x64xi32>) attrs = {qtrain.code_bits = array<i32: 2, 2>} {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xe = arith.extsi %x : i8 to i32
    %ye = arith.extsi %y : i8 to i32
    %p = arith.muli %xe, %ye : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xi8>, memref<64x64xi8>) outs(%d : memref<64x64xi32>) attrs = {qtrain.code_bits = array<i32: 3, 3>} {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xe = arith.extsi %x : i8 to i32
    %ye = arith.extsi %y : i8 to i32
    %p = arith.muli %xe, %ye : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// One transposed copy read as both inputs: both read W, the copy goes once.
// CHECK-LABEL: func.func @same_copy_twice
// CHECK-NOT: linalg.transpose
// CHECK: call @qtrain_mk_gemm_f32
// CHECK-NOT: memref.alloc
func.func @same_copy_twice(%w: memref<32x32xf32>, %y: memref<32x32xf32>) {
  %wt = memref.alloc() : memref<32x32xf32>
  linalg.transpose ins(%w : memref<32x32xf32>) outs(%wt : memref<32x32xf32>) permutation = [1, 0]
  linalg.matmul ins(%wt, %wt : memref<32x32xf32>, memref<32x32xf32>) outs(%y : memref<32x32xf32>)
  memref.dealloc %wt : memref<32x32xf32>
  return
}

// -----

// Products wrapped to 8 bits before widening are another product: left
// alone.
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @narrow_product
// CHECK-NOT: call
// CHECK: arith.muli %{{.*}}, %{{.*}} : i8
func.func @narrow_product(%a: memref<64x64xi8>, %b: memref<64x64xi8>, %c: memref<64x64xi32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xi8>, memref<64x64xi8>) outs(%c : memref<64x64xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %p = arith.muli %x, %y : i8
    %e = arith.extsi %p : i8 to i32
    %s = arith.addi %acc, %e : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// Bad input is left alone without a diagnostic: dynamic shapes (no static
// size to pass or to weigh against min-flops).
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: call
// CHECK: linalg.matmul
func.func @dynamic(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// -----

// A malformed width hint is refused where it is written.
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
func.func @bad_code_bits(%a: memref<64x64xi8>, %b: memref<64x64xi8>, %c: memref<64x64xi32>) {
  // expected-error @+1 {{'qtrain.code_bits' must be array<i32: a, b> with 1 <= a, b <= 16}}
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xi8>, memref<64x64xi8>) outs(%c : memref<64x64xi32>) attrs = {qtrain.code_bits = array<i32: 0, 2>} {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xe = arith.extsi %x : i8 to i32
    %ye = arith.extsi %y : i8 to i32
    %p = arith.muli %xe, %ye : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// Convolutions run as implicit GEMMs: sizes (N, C, H, W, F, KH, KW, OH,
// OW), strides, dilations, then base, offset and four strides of the
// input, the filter and the output. f32, and i8 codes summed in i32.
// CHECK: func.func private @qtrain_mk_conv2d_nchw_s8s8s32(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, memref<i8>, i64, i64, i64, i64, i64, memref<i8>, i64, i64, i64, i64, i64, memref<i32>, i64, i64, i64, i64, i64)
// CHECK: func.func private @qtrain_mk_conv2d_nchw_f32(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, memref<f32>, i64, i64, i64, i64, i64, memref<f32>, i64, i64, i64, i64, i64, memref<f32>, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @convs
func.func @convs(%x: memref<2x16x18x18xf32>, %w: memref<6x16x5x5xf32>, %y: memref<2x6x14x14xf32>,
                 %xc: memref<4x8x12x12xi8>, %wc: memref<16x8x3x3xi8>, %yc: memref<4x16x5x5xi32>) {
  // CHECK: %[[BX:.*]], %[[OX:.*]], %{{.*}}:4, %[[SX:.*]]:4 = memref.extract_strided_metadata %arg0
  // CHECK: %[[BW:.*]], %{{.*}}, %{{.*}}:4, %{{.*}}:4 = memref.extract_strided_metadata %arg1
  // CHECK: %[[BY:.*]], %{{.*}}, %{{.*}}:4, %{{.*}}:4 = memref.extract_strided_metadata %arg2
  // CHECK: call @qtrain_mk_conv2d_nchw_f32(%c2_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c18_i64{{[_0-9]*}}, %c18_i64{{[_0-9]*}}, %c6_i64{{[_0-9]*}}, %c5_i64{{[_0-9]*}}, %c5_i64{{[_0-9]*}}, %c14_i64{{[_0-9]*}}, %c14_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %[[BX]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %[[BW]], {{.*}}, %[[BY]],
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : memref<2x16x18x18xf32>, memref<6x16x5x5xf32>) outs(%y : memref<2x6x14x14xf32>)
  // Stride 2, dilation 1 on i8 codes.
  // CHECK: call @qtrain_mk_conv2d_nchw_s8s8s32(%c4_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c12_i64{{[_0-9]*}}, %c12_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}}, %c5_i64{{[_0-9]*}}, %c5_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}},
  // CHECK-NOT: linalg.conv_2d_nchw_fchw
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%xc, %wc : memref<4x8x12x12xi8>, memref<16x8x3x3xi8>) outs(%yc : memref<4x16x5x5xi32>)
  return
}

// -----

// Not served: a convolution below min-flops, one on tensors, and mixed
// element types (i8 input into an f32 sum).
// CHECK-LABEL: func.func @convs_left_alone
// CHECK-NOT: call
// CHECK-COUNT-3: linalg.conv_2d_nchw_fchw
func.func @convs_left_alone(%x: memref<1x1x4x4xf32>, %w: memref<1x1x3x3xf32>, %y: memref<1x1x2x2xf32>,
                            %xt: tensor<2x16x18x18xf32>, %wt: tensor<6x16x5x5xf32>, %yt: tensor<2x6x14x14xf32>,
                            %xi: memref<2x16x18x18xi8>, %wi: memref<6x16x5x5xi8>, %yi: memref<2x6x14x14xf32>) -> tensor<2x6x14x14xf32> {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : memref<1x1x4x4xf32>, memref<1x1x3x3xf32>) outs(%y : memref<1x1x2x2xf32>)
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xt, %wt : tensor<2x16x18x18xf32>, tensor<6x16x5x5xf32>) outs(%yt : tensor<2x6x14x14xf32>) -> tensor<2x6x14x14xf32>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xi, %wi : memref<2x16x18x18xi8>, memref<6x16x5x5xi8>) outs(%yi : memref<2x6x14x14xf32>)
  return %r : tensor<2x6x14x14xf32>
}
