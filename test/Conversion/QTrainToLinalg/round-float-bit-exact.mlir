// The lowered qtrain.round_float equals the reference rounder of the runtime
// (roundToFormat) bit for bit: the formats of PAPERS.md section 4, bf16, a
// 23-bit mantissa with a narrower range, a tiny format, saturating f32 and a
// format without mantissa bits (ties go up),
// on every exponent field with the significands at and next to each rounding
// boundary, the formats' thresholds, NaN, +-inf, zeros, f32 subnormals and
// random bit patterns (test/lib/FloatCheck.cpp).
// RUN: qtrain-opt %s --convert-qtrain-to-linalg -o %t.lowered.mlir
// RUN: FileCheck %s --check-prefix=LOWERED < %t.lowered.mlir
// RUN: qtrain-opt %t.lowered.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: qtrain-float-check %t.so | FileCheck %s

// LOWERED-NOT: qtrain.round_float
// CHECK: float-check: 524288 values compared, 0 mismatches

func.func @round(%x: tensor<65536xf32>)
    -> (tensor<65536xf32>, tensor<65536xf32>, tensor<65536xf32>, tensor<65536xf32>,
        tensor<65536xf32>, tensor<65536xf32>, tensor<65536xf32>,
        tensor<65536xf32>) {
  %0 = qtrain.round_float %x to <6, 9, 0> : tensor<65536xf32>
  %1 = qtrain.round_float %x to <4, 3, 4, saturate> : tensor<65536xf32>
  %2 = qtrain.round_float %x to <5, 2, 0> : tensor<65536xf32>
  %3 = qtrain.round_float %x to <8, 7, 0> : tensor<65536xf32>
  %4 = qtrain.round_float %x to <7, 23, 0, saturate> : tensor<65536xf32>
  %5 = qtrain.round_float %x to <2, 1, -1, saturate> : tensor<65536xf32>
  %6 = qtrain.round_float %x to <8, 23, 0, saturate> : tensor<65536xf32>
  %7 = qtrain.round_float %x to <3, 0, 0, saturate> : tensor<65536xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<65536xf32>, tensor<65536xf32>, tensor<65536xf32>, tensor<65536xf32>, tensor<65536xf32>, tensor<65536xf32>, tensor<65536xf32>, tensor<65536xf32>
}
