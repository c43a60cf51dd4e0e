// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --remarks-filter="qtrain-.*" -mlir-print-local-scope --qtrain-rebatch="batch=4" | FileCheck %s
// RUN: qtrain-opt %s -split-input-file -mlir-print-local-scope --qtrain-rebatch="batch=1" 2>/dev/null | FileCheck %s --check-prefix=SAME

// Rebatching through reshapes that fold the batch with other dimensions, in
// torch-mlir's export style at batch 1. A linear layer on a sequence: the
// batch is folded with the sequence into the matmul's rows
// ([1, 3, 4] -> [3, 4]), the bias added by a generic whose map does not
// read the rows, then expanded back with torch-mlir's output_shape. The fold
// scales by 4 (3 -> 12 rows), the expand's output_shape follows, the
// weight, its transpose and the bias keep their types.
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   (%[[W:.*]]: tensor<5x4xf32> {qtrain.param}, %[[B:.*]]: tensor<5xf32> {qtrain.param}, %[[X:.*]]: tensor<4x3x4xf32>) -> tensor<4x3x5xf32>
//       CHECK:   %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<4x3x4xf32> into tensor<12x4xf32>
//       CHECK:   %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<5x4xf32>) outs(%{{.*}} : tensor<4x5xf32>)
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<12x5xf32>
//       CHECK:   %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<12x5xf32>)
//       CHECK:   %[[MM:.*]] = linalg.matmul ins(%[[X2]], %[[WT]] : tensor<12x4xf32>, tensor<4x5xf32>) outs(%[[F]] : tensor<12x5xf32>)
//       CHECK:   %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]
//  CHECK-SAME:     ins(%[[MM]], %[[B]] : tensor<12x5xf32>, tensor<5xf32>) outs(%[[E]] : tensor<12x5xf32>)
//       CHECK:   %[[Y3:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [4, 3, 5] : tensor<12x5xf32> into tensor<4x3x5xf32>
//       CHECK:   return %[[Y3]] : tensor<4x3x5xf32>
// At the batch of the export nothing changes.
// SAME-LABEL: func.func @forward
//  SAME-SAME:   tensor<1x3x4xf32>) -> tensor<1x3x5xf32>
//       SAME:   output_shape [1, 3, 5]
// expected-remark @+1 {{rebatched @forward from batch 1 to 4 (6 ops rewritten)}}
func.func @forward(%w: tensor<5x4xf32> {qtrain.param}, %b: tensor<5xf32> {qtrain.param}, %x: tensor<1x3x4xf32>) -> tensor<1x3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x3x4xf32> into tensor<3x4xf32>
  %wt0 = tensor.empty() : tensor<4x5xf32>
  %wt = linalg.transpose ins(%w : tensor<5x4xf32>) outs(%wt0 : tensor<4x5xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<3x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %mm = linalg.matmul ins(%x2, %wt : tensor<3x4xf32>, tensor<4x5xf32>) outs(%f : tensor<3x5xf32>) -> tensor<3x5xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<3x5xf32>, tensor<5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %s = arith.addf %v, %c : f32
    linalg.yield %s : f32
  } -> tensor<3x5xf32>
  %y3 = tensor.expand_shape %y [[0, 1], [2]] output_shape [1, 3, 5] : tensor<3x5xf32> into tensor<1x3x5xf32>
  return %y3 : tensor<1x3x5xf32>
}

// -----

// Attention over heads: the view [1, 3, 4] -> [1, 3, 2, 2] keeps the batch
// as its own group; after the permutes, batch x heads is folded for
// batch_matmul ([1, 2, 3, 2] -> [2, 3, 2]), both operands along the same
// loop. The scores are expanded back ([2, 3, 3] -> [1, 2, 3, 3]) for the
// row max of a softmax, whose keep-dim init is read back with (0, d1, d2, 0):
// the unit batch becomes the batch loop, the kept unit dimension stays 0.
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   %[[Q:[^:]*]]: tensor<4x3x4xf32>, %[[K:[^:]*]]: tensor<4x3x4xf32>) -> tensor<4x2x3x3xf32>
//       CHECK:   tensor.expand_shape %[[Q]] {{\[}}[0], [1], [2, 3]] output_shape [4, 3, 2, 2] : tensor<4x3x4xf32> into tensor<4x3x2x2xf32>
//       CHECK:   tensor.expand_shape %[[K]] {{\[}}[0], [1], [2, 3]] output_shape [4, 3, 2, 2] : tensor<4x3x4xf32> into tensor<4x3x2x2xf32>
//       CHECK:   linalg.transpose ins(%{{.*}} : tensor<4x3x2x2xf32>) outs(%{{.*}} : tensor<4x2x3x2xf32>) permutation = [0, 2, 1, 3]
//       CHECK:   linalg.transpose ins(%{{.*}} : tensor<4x3x2x2xf32>) outs(%{{.*}} : tensor<4x2x2x3xf32>) permutation = [0, 2, 3, 1]
//       CHECK:   %[[Q3:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : tensor<4x2x3x2xf32> into tensor<8x3x2xf32>
//       CHECK:   %[[K3:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : tensor<4x2x2x3xf32> into tensor<8x2x3xf32>
//       CHECK:   %[[S:.*]] = linalg.batch_matmul ins(%[[Q3]], %[[K3]] : tensor<8x3x2xf32>, tensor<8x2x3xf32>) outs(%{{.*}} : tensor<8x3x3xf32>)
//       CHECK:   %[[S4:.*]] = tensor.expand_shape %[[S]] {{\[}}[0, 1], [2], [3]] output_shape [4, 2, 3, 3] : tensor<8x3x3xf32> into tensor<4x2x3x3xf32>
//       CHECK:   %[[MX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[S4]] : tensor<4x2x3x3xf32>) outs(%{{.*}} : tensor<4x2x3x1xf32>)
//       CHECK:   linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
//  CHECK-SAME:     ins(%[[S4]], %[[MX]] : tensor<4x2x3x3xf32>, tensor<4x2x3x1xf32>) outs(%{{.*}} : tensor<4x2x3x3xf32>)
// expected-remark @+1 {{rebatched @forward from batch 1 to 4 (17 ops rewritten)}}
func.func @forward(%q: tensor<1x3x4xf32>, %k: tensor<1x3x4xf32>) -> tensor<1x2x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %q4 = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, 3, 2, 2] : tensor<1x3x4xf32> into tensor<1x3x2x2xf32>
  %k4 = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [1, 3, 2, 2] : tensor<1x3x4xf32> into tensor<1x3x2x2xf32>
  %qe = tensor.empty() : tensor<1x2x3x2xf32>
  %qh = linalg.transpose ins(%q4 : tensor<1x3x2x2xf32>) outs(%qe : tensor<1x2x3x2xf32>) permutation = [0, 2, 1, 3]
  %ke = tensor.empty() : tensor<1x2x2x3xf32>
  %kh = linalg.transpose ins(%k4 : tensor<1x3x2x2xf32>) outs(%ke : tensor<1x2x2x3xf32>) permutation = [0, 2, 3, 1]
  %q3 = tensor.collapse_shape %qh [[0, 1], [2], [3]] : tensor<1x2x3x2xf32> into tensor<2x3x2xf32>
  %k3 = tensor.collapse_shape %kh [[0, 1], [2], [3]] : tensor<1x2x2x3xf32> into tensor<2x2x3xf32>
  %se = tensor.empty() : tensor<2x3x3xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<2x3x2xf32>, tensor<2x2x3xf32>) outs(%sf : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 3, 3] : tensor<2x3x3xf32> into tensor<1x2x3x3xf32>
  %me = tensor.empty() : tensor<1x2x3x1xf32>
  %mf = linalg.fill ins(%ninf : f32) outs(%me : tensor<1x2x3x1xf32>) -> tensor<1x2x3x1xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s4 : tensor<1x2x3x3xf32>) outs(%mf : tensor<1x2x3x1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.maximumf %v, %acc : f32
    linalg.yield %m : f32
  } -> tensor<1x2x3x1xf32>
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %sub = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s4, %mx : tensor<1x2x3x3xf32>, tensor<1x2x3x1xf32>) outs(%e : tensor<1x2x3x3xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    linalg.yield %d : f32
  } -> tensor<1x2x3x3xf32>
  return %sub : tensor<1x2x3x3xf32>
}

// -----

// Views torch-mlir writes without tensor.reshape: flatten through a rank-1
// fold of everything ([1, 3, 2, 2] -> [12] -> [1, 12]: the expand gives the
// batch back to the leading member of its group), and view
// [1, 12] -> [1, 3, 4], the batch its own group.
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   %[[X:[^:]*]]: tensor<4x3x2x2xf32>) -> tensor<4x3x4xf32>
//       CHECK:   %[[F:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2, 3]] : tensor<4x3x2x2xf32> into tensor<48xf32>
//       CHECK:   %[[U:.*]] = tensor.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [4, 12] : tensor<48xf32> into tensor<4x12xf32>
//       CHECK:   %[[V:.*]] = tensor.expand_shape %[[U]] {{\[}}[0], [1, 2]] output_shape [4, 3, 4] : tensor<4x12xf32> into tensor<4x3x4xf32>
//       CHECK:   return %[[V]]
// expected-remark @+1 {{rebatched @forward from batch 1 to 4 (3 ops rewritten)}}
func.func @forward(%x: tensor<1x3x2x2xf32>) -> tensor<1x3x4xf32> {
  %f = tensor.collapse_shape %x [[0, 1, 2, 3]] : tensor<1x3x2x2xf32> into tensor<12xf32>
  %u = tensor.expand_shape %f [[0, 1]] output_shape [1, 12] : tensor<12xf32> into tensor<1x12xf32>
  %v = tensor.expand_shape %u [[0], [1, 2]] output_shape [1, 3, 4] : tensor<1x12xf32> into tensor<1x3x4xf32>
  return %v : tensor<1x3x4xf32>
}

// -----

// Exported at batch 2, the fold is told by its size: [2, 3, 4] -> [6, 4]
// folds the batch with the sequence; a sum over the features (not the fold)
// gives [6], expanded back to [2, 3] with the batch leading. At batch 4:
// 12 rows, output_shape [4, 3].
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   %[[X:[^:]*]]: tensor<4x3x4xf32>) -> tensor<4x3xf32>
//       CHECK:   %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<4x3x4xf32> into tensor<12x4xf32>
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<12xf32>
//       CHECK:   %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<12xf32>)
//       CHECK:   %[[S:.*]] = linalg.generic {{.*}} ins(%[[X2]] : tensor<12x4xf32>) outs(%[[F]] : tensor<12xf32>)
//       CHECK:   tensor.expand_shape %[[S]] {{\[}}[0, 1]] output_shape [4, 3] : tensor<12xf32> into tensor<4x3xf32>
// expected-remark @+1 {{rebatched @forward from batch 2 to 4 (5 ops rewritten)}}
func.func @forward(%x: tensor<2x3x4xf32>) -> tensor<2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %e = tensor.empty() : tensor<6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x2 : tensor<6x4xf32>) outs(%f : tensor<6xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %v, %acc : f32
    linalg.yield %a : f32
  } -> tensor<6xf32>
  %y = tensor.expand_shape %s [[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
