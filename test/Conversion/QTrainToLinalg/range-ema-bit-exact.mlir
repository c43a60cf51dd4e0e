// The lowered activation EMA keeps [min, range] as the reference
// (rt::RangeEma) does, with the same f32 operations in the same order, and
// evaluation quantizes with that range's width as it is (fake_quant, and
// the quantize of the integer kernels): over 600 random batches the
// compiled state, the evaluation output and the 8-bit grid and codes equal
// the reference's bit for bit after every step. Regression: the compiled
// EMA tracked [min, max] (equal in exact arithmetic only), and every state
// differed from the first step on.
// RUN: qtrain-opt %s --convert-qtrain-to-linalg -o %t.lowered.mlir
// RUN: qtrain-opt %t.lowered.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: qtrain-quant-check --ema 600 %t.so | FileCheck %s
// RUN: not qtrain-quant-check --ema 0 %t.so 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: quant-check: ema: 600 steps, 2536800 values compared, 0 mismatches
// BAD: quant-check: --ema needs a positive step count, got '0'

func.func @ema(%x: tensor<64x33xf32>, %state: tensor<2xf32>, %bits: i32)
    -> (tensor<2xf32>, tensor<64x33xf32>, tensor<64x33xi8>, tensor<f32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %new = qtrain.range_ema %x, %state : tensor<64x33xf32>, tensor<2xf32>
  %mn = tensor.extract %state[%c0] : tensor<2xf32>
  %width = tensor.extract %state[%c1] : tensor<2xf32>
  %eval = qtrain.fake_quant %x, %bits role activation rounding nearest_even granularity<per_tensor> range(%mn, %width : f32, f32) width : tensor<64x33xf32>
  %codes, %scale, %low = qtrain.quantize %x, 8 role activation rounding nearest_even granularity<per_tensor> range(%mn, %width : f32, f32) width : tensor<64x33xf32> -> tensor<64x33xi8>, tensor<f32>
  return %new, %eval, %codes, %scale, %low : tensor<2xf32>, tensor<64x33xf32>, tensor<64x33xi8>, tensor<f32>, tensor<f32>
}
