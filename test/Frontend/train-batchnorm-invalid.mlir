// RUN: qtrain-opt %s --qtrain-train-batchnorm -verify-diagnostics
// RUN: not qtrain-opt %s --qtrain-train-batchnorm="momentum=0" 2>&1 | FileCheck %s
// CHECK: error: qtrain-train-batchnorm: momentum must be in (0, 1], got 0

// One value per channel (a batch-1 export that was not rebatched): the batch
// variance is undefined, as PyTorch says in training mode.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#feat = affine_map<(d0, d1) -> (d1)>
func.func @forward(%f: tensor<1x6xf32>) -> tensor<1x6xf32> {
  %eps = arith.constant 1.000000e-05 : f32
  %m = arith.constant dense<0.0> : tensor<6xf32>
  %v = arith.constant dense<1.0> : tensor<6xf32>
  %e = tensor.empty() : tensor<1x6xf32>
  // expected-error @+1 {{qtrain-train-batchnorm: batch norm of 'tensor<1x6xf32>' has 1 value per channel: training needs more than 1 (set a larger batch with qtrain-rebatch)}}
  %z = linalg.generic {indexing_maps = [#id2, #feat, #feat, #id2], iterator_types = ["parallel", "parallel"]} ins(%f, %m, %v : tensor<1x6xf32>, tensor<6xf32>, tensor<6xf32>) outs(%e : tensor<1x6xf32>) {
  ^bb0(%in: f32, %mean: f32, %var: f32, %out: f32):
    %a = arith.subf %in, %mean : f32
    %b = arith.addf %var, %eps : f32
    %c = math.rsqrt %b : f32
    %d = arith.mulf %a, %c : f32
    linalg.yield %d : f32
  } -> tensor<1x6xf32>
  return %z : tensor<1x6xf32>
}

