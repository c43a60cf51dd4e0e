// RUN: qtrain-opt %s --qtrain-conv-to-gemm="max-gathered=1000" | FileCheck %s
// RUN: qtrain-opt %s --qtrain-conv-to-gemm="max-gathered=0" | FileCheck %s --check-prefix=WHOLE
// RUN: qtrain-opt %s --qtrain-conv-to-gemm="max-gathered=1000" --qtrain-lower-cpu -o /dev/null

// A weight gradient over a batch of 8: the gathered operands hold
// (4 + 27) x (8 * 36) = 8928 elements, over max-gathered=1000, so the batch
// is halved while a chunk does not fit, down to 1 image (1116 elements;
// halving stops at an odd size). Each chunk's patches are gathered inside
// an scf.for that accumulates into C; the last RUN line lowers it all.
// CHECK-LABEL: func.func @weight_grad
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//       CHECK:   scf.for %[[I:.*]] = %{{.*}} to %[[C8]] step %[[C1]] iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<4x27xf32>)
//       CHECK:     tensor.extract_slice %{{.*}}[%[[I]], 0, 0, 0] [1, 4, 6, 6] [1, 1, 1, 1] : tensor<8x4x6x6xf32> to tensor<1x4x6x6xf32>
//       CHECK:     tensor.extract_slice %{{.*}}[%[[I]], 0, 0, 0] [1, 3, 8, 8] [1, 1, 1, 1] : tensor<8x3x8x8xf32> to tensor<1x3x8x8xf32>
//       CHECK:     %[[G:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x36xf32>, tensor<27x36xf32>) outs(%[[ACC]] : tensor<4x27xf32>)
//       CHECK:     scf.yield %[[G]]
// WHOLE-LABEL: func.func @weight_grad
//   WHOLE-NOT:   scf.for
//       WHOLE:   linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x288xf32>, tensor<27x288xf32>) outs(%{{.*}} : tensor<4x27xf32>)
#x = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, c, oh + kh, ow + kw)>
#e = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, f, oh, ow)>
#dw = affine_map<(f, c, kh, kw, n, oh, ow) -> (f, c, kh, kw)>
func.func @weight_grad(%xin: tensor<8x3x8x8xf32>, %err: tensor<8x4x6x6xf32>, %init: tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32> {
  %dw = linalg.generic {indexing_maps = [#e, #x, #dw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%err, %xin : tensor<8x4x6x6xf32>, tensor<8x3x8x8xf32>) outs(%init : tensor<4x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3x3x3xf32>
  return %dw : tensor<4x3x3x3xf32>
}

// A convolution's input gradient: the output gradient padded by 2 on each
// side and convolved with the flipped filter. The padded input holds
// 8 * 4 * 10 * 10 = 3200 elements, over max-gathered=1000: the batch runs
// in chunks of 2 images (800 elements), each padding its own slice, so the
// padded copy of the whole batch never exists.
// CHECK-LABEL: func.func @input_grad
//   CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
//       CHECK:   %[[FILL:.*]] = linalg.fill
//       CHECK:   scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[C2]] iter_args(%[[ACC:.*]] = %[[FILL]]) -> (tensor<8x3x8x8xf32>)
//       CHECK:     %[[PART:.*]] = tensor.extract_slice %{{.*}}[%[[I]], 0, 0, 0] [2, 4, 6, 6] [1, 1, 1, 1]
//       CHECK:     %[[PAD:.*]] = tensor.pad %[[PART]] low[0, 0, 2, 2] high[0, 0, 2, 2]
//       CHECK:     } : tensor<2x4x6x6xf32> to tensor<2x4x10x10xf32>
//       CHECK:     %[[OUT:.*]] = tensor.extract_slice %[[ACC]][%[[I]], 0, 0, 0] [2, 3, 8, 8] [1, 1, 1, 1]
//       CHECK:     %[[Y:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[PAD]], %{{.*}} : tensor<2x4x10x10xf32>, tensor<3x4x3x3xf32>) outs(%[[OUT]] : tensor<2x3x8x8xf32>)
//       CHECK:     %[[NEW:.*]] = tensor.insert_slice %[[Y]] into %[[ACC]][%[[I]], 0, 0, 0] [2, 3, 8, 8] [1, 1, 1, 1]
//       CHECK:     scf.yield %[[NEW]]
// WHOLE-LABEL: func.func @input_grad
//   WHOLE-NOT:   scf.for
//       WHOLE:   tensor.pad
//       WHOLE:   linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x4x10x10xf32>
func.func @input_grad(%g: tensor<8x4x6x6xf32>, %w: tensor<3x4x3x3xf32>) -> tensor<8x3x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %g low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<8x4x6x6xf32> to tensor<8x4x10x10xf32>
  %e = tensor.empty() : tensor<8x3x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x3x8x8xf32>) -> tensor<8x3x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%p, %w : tensor<8x4x10x10xf32>, tensor<3x4x3x3xf32>) outs(%init : tensor<8x3x8x8xf32>) -> tensor<8x3x8x8xf32>
  return %y : tensor<8x3x8x8xf32>
}

// Left as they are: a padding with a non-zero value, and one that pads the
// channels.
// CHECK-LABEL: func.func @not_chunked
//   CHECK-NOT:   scf.for
// CHECK-COUNT-2: linalg.conv_2d_nchw_fchw {{.*}} tensor<8x
func.func @not_chunked(%g: tensor<8x4x6x6xf32>, %w: tensor<3x4x3x3xf32>, %w6: tensor<3x6x3x3xf32>) -> (tensor<8x3x8x8xf32>, tensor<8x3x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %p = tensor.pad %g low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %one : f32
  } : tensor<8x4x6x6xf32> to tensor<8x4x10x10xf32>
  %q = tensor.pad %g low[0, 1, 2, 2] high[0, 1, 2, 2] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<8x4x6x6xf32> to tensor<8x6x10x10xf32>
  %e = tensor.empty() : tensor<8x3x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x3x8x8xf32>) -> tensor<8x3x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%p, %w : tensor<8x4x10x10xf32>, tensor<3x4x3x3xf32>) outs(%init : tensor<8x3x8x8xf32>) -> tensor<8x3x8x8xf32>
  %z = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%q, %w6 : tensor<8x6x10x10xf32>, tensor<3x6x3x3xf32>) outs(%init : tensor<8x3x8x8xf32>) -> tensor<8x3x8x8xf32>
  return %y, %z : tensor<8x3x8x8xf32>, tensor<8x3x8x8xf32>
}
