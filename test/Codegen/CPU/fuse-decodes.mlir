// RUN: qtrain-opt %s --convert-qtrain-to-linalg --qtrain-fuse-decodes | FileCheck %s

// An elementwise reader of decoded codes (a ReLU's backward pass reading its
// saved input) decodes them inside its own loop: no f32 tensor of the codes
// remains.
// CHECK-LABEL: func.func @elementwise
//  CHECK-SAME:   (%[[CODES:.*]]: tensor<4x8xi8>, %[[E:.*]]: tensor<4x8xf32>)
//       CHECK:   %[[R:.*]] = linalg.generic
//  CHECK-SAME:     ins(%[[CODES]], %[[E]] : tensor<4x8xi8>, tensor<4x8xf32>)
//       CHECK:     arith.extui
//       CHECK:     arith.cmpf ogt
//       CHECK:   return %[[R]]
//   CHECK-NOT:   qtrain.decode
func.func @elementwise(%codes: tensor<4x8xi8>, %e: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %x = qtrain.decode_float %codes from <4, 3, 4, saturate> : tensor<4x8xi8> -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %e : tensor<4x8xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%v: f32, %d: f32, %o: f32):
    %pos = arith.cmpf ogt, %v, %z : f32
    %r = arith.select %pos, %d, %z : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}

// A strided window of decoded codes (a pooling gradient's) decodes only the
// window: the slice moves to the codes.
// CHECK-LABEL: func.func @window
//  CHECK-SAME:   (%[[CODES:.*]]: tensor<2x3x8x8xi8>)
//       CHECK:   %[[S:.*]] = tensor.extract_slice %[[CODES]][0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 2, 2] : tensor<2x3x8x8xi8> to tensor<2x3x4x4xi8>
//       CHECK:   %[[D:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<2x3x4x4xi8>) outs(%{{.*}} : tensor<2x3x4x4xf32>) attrs = {qtrain.decode}
//       CHECK:   return %[[D]]
func.func @window(%codes: tensor<2x3x8x8xi8>) -> tensor<2x3x4x4xf32> {
  %x = qtrain.decode_float %codes from <4, 3, 4, saturate> : tensor<2x3x8x8xi8> -> tensor<2x3x8x8xf32>
  %w = tensor.extract_slice %x[0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 2, 2] : tensor<2x3x8x8xf32> to tensor<2x3x4x4xf32>
  return %w : tensor<2x3x4x4xf32>
}

// A reader with a reduction (a weight gradient) keeps the decoded tensor.
// CHECK-LABEL: func.func @reduction
//       CHECK:   %[[D:.*]] = linalg.generic {{.*}} attrs = {qtrain.decode}
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[D]] :
func.func @reduction(%codes: tensor<4x8xi8>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %x = qtrain.decode_float %codes from <4, 3, 4, saturate> : tensor<4x8xi8> -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.addf %o, %v : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}
