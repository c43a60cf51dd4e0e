// A promotable rounding lowers to one loop computing both roundings, its
// flag selecting, and qtrain.count_overflow to a reduction; compiled, the flag picks
// the format and the count is exact at the thresholds (31 for FP(4,3,4),
// 122880 for FP(5,2,0); inf counts, NaN does not): test/lib/promotion_check.py.
// RUN: qtrain-opt %s --convert-qtrain-to-linalg -o %t.lowered.mlir
// RUN: FileCheck %s < %t.lowered.mlir
// RUN: qtrain-opt %t.lowered.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: %python %qtrain_src_root/test/lib/promotion_check.py %t.so | FileCheck %s --check-prefix=RUNS

// CHECK-LABEL: func.func @round(
//  CHECK-SAME:   %{{.*}}: tensor<16xf32>, %[[P:.*]]: i1)
//   CHECK-NOT:   scf.if
//       CHECK:   linalg.generic
//       CHECK:     arith.select %[[P]], %{{.*}}, %{{.*}} : f32
//   CHECK-NOT:   qtrain.round_float
// CHECK-LABEL: func.func @count_py(
//   CHECK-NOT:   qtrain.count_overflow
// RUNS: promotion-check: PASS

func.func @round(%x: tensor<16xf32>, %promoted: i1) -> tensor<16xf32> {
  %0 = qtrain.round_float %x to <4, 3, 4, saturate> or <6, 9, 0, saturate> if %promoted : tensor<16xf32>
  return %0 : tensor<16xf32>
}

func.func @count_py(%x: tensor<16xf32>) -> i64 {
  %0 = qtrain.count_overflow %x for <4, 3, 4, saturate> : tensor<16xf32>
  return %0 : i64
}

func.func @count_gy(%x: tensor<16xf32>) -> i64 {
  %0 = qtrain.count_overflow %x for <5, 2, 0> : tensor<16xf32>
  return %0 : i64
}

func.func @count_long(%x: tensor<4096xf32>) -> i64 {
  %0 = qtrain.count_overflow %x for <4, 3, 4, saturate> : tensor<4096xf32>
  return %0 : i64
}
