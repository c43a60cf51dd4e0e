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
