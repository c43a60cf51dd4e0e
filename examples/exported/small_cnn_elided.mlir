// The CNN of small_cnn.mlir as torch-mlir's standard output shares it, with
// what that output carries around the graph: the module attribute
// torch.debug_module_name, the unused ml_program.global @global_seed, the
// entry point @main, a cf.assert of an eval-mode export that holds, an
// integer constant (class ids), and the weights elided
// (`dense_resource<__elided__>`, printed with
// --mlir-elide-resource-strings-if-larger: no resource section). Written
// here after torch-mlir's output, not fetched.
//
// qtrain-compile small_cnn_elided.mlir --lift-params --batch=8 -o cnn.qtb
// gives a bundle whose parameters start from PyTorch's default
// initialization (docs/passes/import.md, "Elided and splat weights").
#map = affine_map<(d0, d1, d2, d3) -> (d1)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3) -> (0, d1, d2, d3)>
#map3 = affine_map<(d0, d1) -> (0, d1)>
#map4 = affine_map<(d0, d1) -> (d1)>
#map5 = affine_map<(d0, d1) -> (d0, d1)>
module attributes {torch.debug_module_name = "SmallCNN"} {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @main(%arg0: tensor<1x1x28x28xf32>) -> tensor<1x10xf32> {
    %true = arith.constant true
    cf.assert %true, "training is not supported for now"
    %ids = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]> : tensor<10xi64>
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant dense_resource<__elided__> : tensor<4x1x3x3xf32>
    %cst_2 = arith.constant dense_resource<__elided__> : tensor<4xf32>
    %cst_3 = arith.constant dense_resource<__elided__> : tensor<10x784xf32>
    %cst_4 = arith.constant dense_resource<__elided__> : tensor<10xf32>
    %padded = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
      tensor.yield %cst : f32
    } : tensor<1x1x28x28xf32> to tensor<1x1x30x30xf32>
    %0 = tensor.empty() : tensor<1x4x28x28xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cst_2 : tensor<4xf32>) outs(%0 : tensor<1x4x28x28xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x28x28xf32>
    %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded, %cst_1 : tensor<1x1x30x30xf32>, tensor<4x1x3x3xf32>) outs(%1 : tensor<1x4x28x28xf32>) -> tensor<1x4x28x28xf32>
    %3 = linalg.generic {indexing_maps = [#map2, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2 : tensor<1x4x28x28xf32>) outs(%0 : tensor<1x4x28x28xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = arith.cmpf ugt, %in, %cst : f32
      %14 = arith.select %13, %in, %cst : f32
      linalg.yield %14 : f32
    } -> tensor<1x4x28x28xf32>
    %4 = tensor.empty() : tensor<1x4x14x14xf32>
    %5 = linalg.fill ins(%cst_0 : f32) outs(%4 : tensor<1x4x14x14xf32>) -> tensor<1x4x14x14xf32>
    %6 = tensor.empty() : tensor<2x2xf32>
    %7 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%3, %6 : tensor<1x4x28x28xf32>, tensor<2x2xf32>) outs(%5 : tensor<1x4x14x14xf32>) -> tensor<1x4x14x14xf32>
    %collapsed = tensor.collapse_shape %7 [[0], [1, 2, 3]] : tensor<1x4x14x14xf32> into tensor<1x784xf32>
    %8 = tensor.empty() : tensor<784x10xf32>
    %transposed = linalg.transpose ins(%cst_3 : tensor<10x784xf32>) outs(%8 : tensor<784x10xf32>) permutation = [1, 0]
    %9 = tensor.empty() : tensor<1x10xf32>
    %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<1x10xf32>) -> tensor<1x10xf32>
    %11 = linalg.matmul ins(%collapsed, %transposed : tensor<1x784xf32>, tensor<784x10xf32>) outs(%10 : tensor<1x10xf32>) -> tensor<1x10xf32>
    %12 = linalg.generic {indexing_maps = [#map3, #map4, #map5], iterator_types = ["parallel", "parallel"]} ins(%11, %cst_4 : tensor<1x10xf32>, tensor<10xf32>) outs(%9 : tensor<1x10xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %13 = arith.addf %in, %in_5 : f32
      linalg.yield %13 : f32
    } -> tensor<1x10xf32>
    return %12 : tensor<1x10xf32>
  }
}
