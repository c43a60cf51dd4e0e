// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --convert-qtrain-to-linalg --qtrain-fuse-decodes | FileCheck %s

// Left alone without a diagnostic: a rank-reducing slice of a decoded
// tensor (the codes are not sliced first), and a decode with two readers
// of which one is not elementwise (fused into the elementwise one only).
// CHECK-LABEL: func.func @rank_reducing
//       CHECK:   %[[D:.*]] = linalg.generic {{.*}} attrs = {qtrain.decode}
//       CHECK:   tensor.extract_slice %[[D]][0, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
func.func @rank_reducing(%codes: tensor<4x8xi8>) -> tensor<8xf32> {
  %x = qtrain.decode_float %codes from <4, 3, 4, saturate> : tensor<4x8xi8> -> tensor<4x8xf32>
  %row = tensor.extract_slice %x[0, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
  return %row : tensor<8xf32>
}

// -----

// A decode of a dynamic shape is not lowered: the conversion says so.
func.func @dynamic(%codes: tensor<?x8xi8>) -> tensor<?x8xf32> {
  // expected-error @below {{qtrain.decode_float could not be lowered (dynamic shapes are not supported)}}
  %x = qtrain.decode_float %codes from <4, 3, 4, saturate> : tensor<?x8xi8> -> tensor<?x8xf32>
  return %x : tensor<?x8xf32>
}
