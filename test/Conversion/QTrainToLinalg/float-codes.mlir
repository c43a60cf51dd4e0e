// qtrain.encode_float / decode_float: codes are the formats' bit layouts
// (sign, exponent field, mantissa) in i8 or i16, and decoding a code gives
// back the rounded value bit for bit, for every format value (normals,
// subnormals, zeros of both signs, the saturated extremes) and with the
// promotion flag picking the format; NaN is stored as the largest finite
// magnitude of its sign (test/lib/codes_check.py).
// RUN: qtrain-opt %s --convert-qtrain-to-linalg -o %t.lowered.mlir
// RUN: FileCheck %s < %t.lowered.mlir
// RUN: qtrain-opt %t.lowered.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: %python %qtrain_src_root/test/lib/codes_check.py %t.so | FileCheck %s --check-prefix=RUNS

// CHECK-LABEL: func.func @codes(
//   CHECK-NOT:   qtrain.encode_float
//   CHECK-NOT:   qtrain.decode_float
// RUNS: codes-check: {{[0-9]+}} values, PASS

func.func @codes(%x: tensor<65536xf32>, %p: i1)
    -> (tensor<65536xf32>, tensor<65536xf32>, tensor<65536xi8>,
        tensor<65536xf32>, tensor<65536xf32>, tensor<65536xi16>,
        tensor<65536xf32>, tensor<65536xf32>) {
  // FP(4,3,4) in i8.
  %r8 = qtrain.round_float %x to <4, 3, 4, saturate> : tensor<65536xf32>
  %c8 = qtrain.encode_float %r8 to <4, 3, 4, saturate> : tensor<65536xf32> -> tensor<65536xi8>
  %d8 = qtrain.decode_float %c8 from <4, 3, 4, saturate> : tensor<65536xi8> -> tensor<65536xf32>
  // FP(6,9,0) in i16.
  %r16 = qtrain.round_float %x to <6, 9, 0, saturate> : tensor<65536xf32>
  %c16 = qtrain.encode_float %r16 to <6, 9, 0, saturate> : tensor<65536xf32> -> tensor<65536xi16>
  %d16 = qtrain.decode_float %c16 from <6, 9, 0, saturate> : tensor<65536xi16> -> tensor<65536xf32>
  // Promotable: FP(4,3,4) or FP(6,9,0) in i16, the flag picks.
  %rp = qtrain.round_float %x to <4, 3, 4, saturate> or <6, 9, 0, saturate> if %p : tensor<65536xf32>
  %cp = qtrain.encode_float %rp to <4, 3, 4, saturate> or <6, 9, 0, saturate> if %p : tensor<65536xf32> -> tensor<65536xi16>
  %dp = qtrain.decode_float %cp from <4, 3, 4, saturate> or <6, 9, 0, saturate> if %p : tensor<65536xi16> -> tensor<65536xf32>
  return %r8, %d8, %c8, %r16, %d16, %c16, %rp, %dp
      : tensor<65536xf32>, tensor<65536xf32>, tensor<65536xi8>,
        tensor<65536xf32>, tensor<65536xf32>, tensor<65536xi16>,
        tensor<65536xf32>, tensor<65536xf32>
}
