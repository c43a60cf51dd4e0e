// RUN: qtrain-opt %s --split-input-file --qtrain-fuse-elementwise | FileCheck %s

// A chain of elementwise ops whose links have one user each is one op: the
// same arithmetic per element, one launch in the CUDA step.

// CHECK-LABEL: func.func @chain(
// CHECK-COUNT-1: linalg.generic
// CHECK:           arith.mulf
// CHECK:           math.roundeven
// CHECK:           arith.minimumf
// CHECK-NOT:     linalg.generic
#id = affine_map<(i) -> (i)>
func.func @chain(%x: tensor<64xf32>, %s: f32, %hi: f32) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %rounded = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%scaled : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.roundeven %a : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %clamped = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%rounded : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.minimumf %a, %hi : f32
    linalg.yield %c : f32
  } -> tensor<64xf32>
  return %clamped : tensor<64xf32>
}

// -----

// A producer with two users stays (its values would be computed twice), and
// nothing is fused into a reduction (a product keeps its multiply-add body
// for qtrain-gpu-gemms).

// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-4: linalg.generic
#id2 = affine_map<(i, k) -> (i, k)>
#row = affine_map<(i, k) -> (i)>
#id1 = affine_map<(i) -> (i)>
func.func @kept(%x: tensor<8x16xf32>, %s: f32) -> (tensor<8xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %e2 = tensor.empty() : tensor<8x16xf32>
  %scaled = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  %neg = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%scaled : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<8x16xf32>
  %sq = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.mulf %a, %a : f32
    linalg.yield %q : f32
  } -> tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sq : tensor<8x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %acc, %a : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %sum, %scaled, %neg : tensor<8xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}
