// A linear classifier whose parameters carry qtrain.name (as
// qtrain-import-torch writes them), for param-names.test; NAME2 is
// replaced by the test to make the names collide.
#id2 = affine_map<(n, f) -> (n, f)>
#bias2 = affine_map<(n, f) -> (f)>
func.func @forward(%w: tensor<10x16xf32> {qtrain.param, qtrain.name = "fc.weight"},
                   %b: tensor<10xf32> {qtrain.param, qtrain.name = "NAME2"},
                   %x: tensor<4x16xf32>) -> tensor<4x10xf32> {
  %e = tensor.empty() : tensor<4x10xf32>
  %bias = linalg.generic {indexing_maps = [#bias2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<10xf32>) outs(%e : tensor<4x10xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<4x10xf32>
  %et = tensor.empty() : tensor<16x10xf32>
  %wt = linalg.transpose ins(%w : tensor<10x16xf32>) outs(%et : tensor<16x10xf32>) permutation = [1, 0]
  %y = linalg.matmul ins(%x, %wt : tensor<4x16xf32>, tensor<16x10xf32>) outs(%bias : tensor<4x10xf32>) -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}
