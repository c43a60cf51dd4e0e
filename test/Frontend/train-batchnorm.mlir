// RUN: qtrain-opt %s --split-input-file --qtrain-train-batchnorm \
// RUN:   --remarks-filter="qtrain-.*" 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks

// An eval-mode batch norm as torch-mlir fuses it into one generic
// (ConvertAtenBatchNormOp): x, weight, bias, running mean, running var.
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @forward(%w: tensor<3xf32> {qtrain.param}, %b: tensor<3xf32> {qtrain.param},
                   %x: tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> {
  %mean = arith.constant dense<[0.5, -1.0, 2.0]> : tensor<3xf32>
  %var = arith.constant dense<1.0> : tensor<3xf32>
  %cst = arith.constant 1.000000e-05 : f64
  %0 = tensor.empty() : tensor<2x3x4x4xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map1, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %w, %b, %mean, %var : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%0 : tensor<2x3x4x4xf32>) {
  ^bb0(%in: f32, %in_1: f32, %in_2: f32, %in_3: f32, %in_4: f32, %out: f32):
    %2 = arith.truncf %cst : f64 to f32
    %3 = arith.addf %in_4, %2 : f32
    %4 = math.rsqrt %3 : f32
    %5 = arith.subf %in, %in_3 : f32
    %6 = arith.mulf %5, %4 : f32
    %7 = arith.mulf %6, %in_1 : f32
    %8 = arith.addf %7, %in_2 : f32
    linalg.yield %8 : f32
  } -> tensor<2x3x4x4xf32>
  return %1 : tensor<2x3x4x4xf32>
}

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3x4x4xf32>,
// CHECK-SAME: %[[RM:.*]]: tensor<3xf32> {qtrain.init = dense<[5.000000e-01, -1.000000e+00, 2.000000e+00]> : tensor<3xf32>, qtrain.state = "bn_mean"},
// CHECK-SAME: %[[RV:.*]]: tensor<3xf32> {qtrain.init = dense<1.000000e+00> : tensor<3xf32>, qtrain.state = "bn_var"})
// CHECK-SAME: -> (tensor<2x3x4x4xf32>, tensor<3xf32> {qtrain.state = "bn_mean"}, tensor<3xf32> {qtrain.state = "bn_var"})
// The batch mean: a sum over n, h, w divided by 32.
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "reduction", "reduction"]{{.*}} ins(%[[X]] : tensor<2x3x4x4xf32>)
// CHECK: %[[BM:.*]] = linalg.generic {{.*}} ins(%[[SUM]] :
// CHECK: arith.constant 3.200000e+01 : f32
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "reduction", "reduction"]{{.*}} ins(%[[X]], %[[BM]] :
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: %[[BV:.*]] = linalg.generic {{.*}} ins(%[[SQ]] :
// CHECK: %[[M:.*]], %[[M2:.*]] = qtrain.running_stat %[[BM]], %[[RM]] : tensor<3xf32>
// 32 / 31: the running variance is unbiased.
// CHECK: %[[V:.*]], %[[V2:.*]] = qtrain.running_stat %[[BV]], %[[RV]] {correction = 1.032258064516129 : f64} : tensor<3xf32>
// CHECK: linalg.generic {{.*}} ins(%[[X]], %{{.*}}, %{{.*}}, %[[M]], %[[V]] :
// CHECK: return %{{.*}}, %[[M2]], %[[V2]]

// REMARK: Remark="batch norm #0 (3 channels, dim 1) trains with batch statistics; its running mean and variance are state (momentum 0.1), starting at the exported values

// -----

// The decomposed form (aten._native_batch_norm_legit_no_training through
// PyTorch's decompositions): the statistics are lifted parameters, reshaped
// to [C, 1, 1] and read with unit dims at index 0, var + eps and rsqrt in
// their own generics before the input exists; and an input normalization
// (x - mean) / std, with no variance, that is left alone.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bc = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @forward(%rm: tensor<2xf32> {qtrain.param}, %rv: tensor<2xf32> {qtrain.param},
                   %x: tensor<4x2x3x3xf32>) -> tensor<4x2x3x3xf32> {
  %eps = arith.constant 1.000000e-05 : f32
  %img_mean = arith.constant dense<[0.25, 0.75]> : tensor<2xf32>
  %v3 = tensor.expand_shape %rv [[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
  %e3 = tensor.empty() : tensor<2x1x1xf32>
  %ve = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v3 : tensor<2x1x1xf32>) outs(%e3 : tensor<2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %eps : f32
    linalg.yield %a : f32
  } -> tensor<2x1x1xf32>
  %rs = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ve : tensor<2x1x1xf32>) outs(%e3 : tensor<2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.rsqrt %in : f32
    linalg.yield %a : f32
  } -> tensor<2x1x1xf32>
  %e = tensor.empty() : tensor<4x2x3x3xf32>
  %im3 = tensor.expand_shape %img_mean [[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
  %xn = linalg.generic {indexing_maps = [#id4, #bc, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %im3 : tensor<4x2x3x3xf32>, tensor<2x1x1xf32>) outs(%e : tensor<4x2x3x3xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %a = arith.subf %in, %m : f32
    linalg.yield %a : f32
  } -> tensor<4x2x3x3xf32>
  %m3 = tensor.expand_shape %rm [[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
  %d = linalg.generic {indexing_maps = [#id4, #bc, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xn, %m3 : tensor<4x2x3x3xf32>, tensor<2x1x1xf32>) outs(%e : tensor<4x2x3x3xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %a = arith.subf %in, %m : f32
    linalg.yield %a : f32
  } -> tensor<4x2x3x3xf32>
  %y = linalg.generic {indexing_maps = [#id4, #bc, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%d, %rs : tensor<4x2x3x3xf32>, tensor<2x1x1xf32>) outs(%e : tensor<4x2x3x3xf32>) {
  ^bb0(%in: f32, %r: f32, %out: f32):
    %a = arith.mulf %in, %r : f32
    linalg.yield %a : f32
  } -> tensor<4x2x3x3xf32>
  return %y : tensor<4x2x3x3xf32>
}

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x2x3x3xf32>,
// CHECK-SAME: %[[RM:[a-z0-9]+]]: tensor<2xf32> {qtrain.init = dense<0.000000e+00> : tensor<2xf32>, qtrain.state = "bn_mean"},
// CHECK-SAME: %[[RV:[a-z0-9]+]]: tensor<2xf32> {qtrain.init = dense<1.000000e+00> : tensor<2xf32>, qtrain.state = "bn_var"})
// The input normalization stays, and the statistics are those of its result.
// CHECK: %[[IM:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2]] output_shape [2, 1, 1]
// CHECK: %[[XN:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[IM]] :
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[XN]] : tensor<4x2x3x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[S]] :
// CHECK: arith.constant 3.600000e+01 : f32
// CHECK: %[[M:.*]], %[[M2:.*]] = qtrain.running_stat %{{.*}}, %[[RM]] : tensor<2xf32>
// CHECK: %[[V:.*]], %[[V2:.*]] = qtrain.running_stat %{{.*}}, %[[RV]] {correction = 1.0285714285714285 : f64} : tensor<2xf32>
// CHECK: %[[M3:.*]] = tensor.expand_shape %[[M]] {{\[\[}}0, 1, 2]] output_shape [2, 1, 1]
// CHECK: %[[V3:.*]] = tensor.expand_shape %[[V]] {{\[\[}}0, 1, 2]] output_shape [2, 1, 1]
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%[[XN]], %[[M3]] :
// CHECK: %[[VE:.*]] = linalg.generic {{.*}} ins(%[[V3]] :
// CHECK: %[[RS:.*]] = linalg.generic {{.*}} ins(%[[VE]] :
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[D]], %[[RS]] :
// CHECK: return %[[Y]], %[[M2]], %[[V2]]

// REMARK: Remark="batch norm #0 (2 channels, dim 1) trains with batch statistics; its running mean and variance are state (momentum 0.1), starting at 0 and 1 (the export has none)

// -----

// Channels last (NHWC, as hand-written linalg and TOSA lower it) and a
// batch norm over features ([N, C], BatchNorm1d), with (x - m) / sqrt(v + eps).
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#last = affine_map<(d0, d1, d2, d3) -> (d3)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#feat = affine_map<(d0, d1) -> (d1)>
func.func @forward(%x: tensor<2x3x3x5xf32>, %f: tensor<8x6xf32>) -> (tensor<2x3x3x5xf32>, tensor<8x6xf32>) {
  %eps = arith.constant 1.000000e-05 : f32
  %m = arith.constant dense<0.0> : tensor<5xf32>
  %v = arith.constant dense<1.0> : tensor<5xf32>
  %m1 = arith.constant dense<0.0> : tensor<6xf32>
  %v1 = arith.constant dense<1.0> : tensor<6xf32>
  %e = tensor.empty() : tensor<2x3x3x5xf32>
  %y = linalg.generic {indexing_maps = [#id4, #last, #last, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %m, %v : tensor<2x3x3x5xf32>, tensor<5xf32>, tensor<5xf32>) outs(%e : tensor<2x3x3x5xf32>) {
  ^bb0(%in: f32, %mean: f32, %var: f32, %out: f32):
    %a = arith.subf %in, %mean : f32
    %b = arith.addf %var, %eps : f32
    %c = math.sqrt %b : f32
    %d = arith.divf %a, %c : f32
    linalg.yield %d : f32
  } -> tensor<2x3x3x5xf32>
  %e2 = tensor.empty() : tensor<8x6xf32>
  %z = linalg.generic {indexing_maps = [#id2, #feat, #feat, #id2], iterator_types = ["parallel", "parallel"]} ins(%f, %m1, %v1 : tensor<8x6xf32>, tensor<6xf32>, tensor<6xf32>) outs(%e2 : tensor<8x6xf32>) {
  ^bb0(%in: f32, %mean: f32, %var: f32, %out: f32):
    %a = arith.subf %in, %mean : f32
    %b = arith.addf %var, %eps : f32
    %c = math.sqrt %b : f32
    %d = arith.divf %a, %c : f32
    linalg.yield %d : f32
  } -> tensor<8x6xf32>
  return %y, %z : tensor<2x3x3x5xf32>, tensor<8x6xf32>
}

// CHECK-LABEL: func.func @forward(
// Both read arguments, so both sets of statistics start the body, the last
// layer's first.
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}} ins(%{{.*}} : tensor<8x6xf32>)
// CHECK: qtrain.running_stat {{.*}} {correction = 1.1428571428571428 : f64} : tensor<6xf32>
// CHECK: %[[S5:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "reduction", "parallel"]{{.*}} ins(%{{.*}} : tensor<2x3x3x5xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[S5]] :
// CHECK: arith.constant 1.800000e+01 : f32
// CHECK: qtrain.running_stat {{.*}} {correction = 1.0588235294117647 : f64} : tensor<5xf32>
// CHECK: return {{.*}} : tensor<2x3x3x5xf32>, tensor<8x6xf32>, tensor<5xf32>, tensor<5xf32>, tensor<6xf32>, tensor<6xf32>

// REMARK: Remark="batch norm #0 (5 channels, dim 3)
// REMARK: Remark="batch norm #1 (6 channels, dim 1)
