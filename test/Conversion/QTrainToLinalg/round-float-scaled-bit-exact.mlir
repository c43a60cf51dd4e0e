// The lowered qtrain.round_float with scaled(M) equals the runtime's
// reference (roundScaled) bit for bit: CPT's fp8 errors (e5m2 up to 57344,
// grad-format=e5m2) at several ranges, with the maximum exactly at M * 2^k
// and just above it, zeros, inf, NaN, maxima beyond both ends of k's clamp
// and a size the reduction cannot split into partial accumulators
// (test/lib/FloatCheck.cpp --scaled).
// RUN: qtrain-opt %s --convert-qtrain-to-linalg -o %t.lowered.mlir
// RUN: FileCheck %s --check-prefix=LOWERED < %t.lowered.mlir
// RUN: qtrain-opt %t.lowered.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: qtrain-float-check --scaled %t.so | FileCheck %s

// The largest magnitude (NaN propagating), then one elementwise loop.
// LOWERED-NOT: qtrain.round_float
// LOWERED: math.absf
// LOWERED: arith.maximumf
// CHECK: float-check: 29745 scaled values compared, 0 mismatches

func.func @round_scaled(%x0: tensor<4096xf32>, %x1: tensor<4096xf32>,
                        %x2: tensor<4096xf32>, %x3: tensor<4096xf32>,
                        %x4: tensor<4096xf32>, %x5: tensor<4096xf32>,
                        %x6: tensor<4096xf32>, %x7: tensor<37x29xf32>)
    -> (tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>,
        tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>,
        tensor<37x29xf32>) {
  %0 = qtrain.round_float %x0 to <5, 2, 0> scaled(57344.0) role error : tensor<4096xf32>
  %1 = qtrain.round_float %x1 to <5, 2, 0> scaled(57344.0) role error : tensor<4096xf32>
  %2 = qtrain.round_float %x2 to <5, 2, 0> scaled(57344.0) role error : tensor<4096xf32>
  %3 = qtrain.round_float %x3 to <5, 2, 0> scaled(57344.0) role error : tensor<4096xf32>
  %4 = qtrain.round_float %x4 to <5, 2, 0> scaled(57344.0) role error : tensor<4096xf32>
  %5 = qtrain.round_float %x5 to <5, 2, 0> scaled(57344.0) role error : tensor<4096xf32>
  %6 = qtrain.round_float %x6 to <5, 2, 0> scaled(57344.0) role error : tensor<4096xf32>
  %7 = qtrain.round_float %x7 to <5, 2, 0> scaled(57344.0) role error : tensor<37x29xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<37x29xf32>
}
