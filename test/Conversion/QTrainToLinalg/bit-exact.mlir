// The lowered quantizers equal the reference quantizer of the runtime bit for
// bit: per channel and per tensor, nearest and stochastic (Philox), every
// bitwidth 0..16, with NaN, +-inf, constant rows, rows without a finite
// element and ranges wider than FLT_MAX.
// RUN: qtrain-opt %s --convert-qtrain-to-linalg -o %t.lowered.mlir
// RUN: qtrain-opt %t.lowered.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: qtrain-quant-check %t.so | FileCheck %s

// CHECK: quant-check: 800088 values compared, 0 mismatches

func.func @quant(%x: tensor<37x53xf32>, %bits: i32, %seed: i64, %step: i32)
    -> (tensor<37x53xf32>, tensor<37x53xf32>, tensor<37x53xf32>, tensor<37x53xf32>) {
  %0 = qtrain.fake_quant %x, %bits role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<37x53xf32>
  %1 = qtrain.fake_quant %x, %bits role activation rounding nearest_even granularity<per_tensor> : tensor<37x53xf32>
  %2 = qtrain.fake_quant %x, %bits role error rounding stochastic granularity<per_tensor> seed(%seed, %step) {stream = 5 : i64} : tensor<37x53xf32>
  %3 = qtrain.fake_quant %x, %bits role error rounding stochastic granularity<per_channel, axis = 1> seed(%seed, %step) {stream = 9 : i64} : tensor<37x53xf32>
  return %0, %1, %2, %3 : tensor<37x53xf32>, tensor<37x53xf32>, tensor<37x53xf32>, tensor<37x53xf32>
}
