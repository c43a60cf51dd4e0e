// A bag of embeddings over token ids: an embedding table [64, 8] read at
// each id (tensor.extract at an arith.index_cast, as torch-mlir lowers
// aten.embedding), the mean over the sequence, a linear classifier.
// Batch 16, sequence 8, 4 classes.

#ids = affine_map<(b, t, j) -> (b, t)>
#m3 = affine_map<(b, t, j) -> (b, t, j)>
#pool = affine_map<(b, t, j) -> (b, j)>
#m2 = affine_map<(b, c) -> (b, c)>
#b2 = affine_map<(b, c) -> (c)>

func.func @forward(%table: tensor<64x8xf32> {qtrain.param},
                   %w: tensor<4x8xf32> {qtrain.param}, %bias: tensor<4xf32> {qtrain.param},
                   %x: tensor<16x8xi64>) -> tensor<16x4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %seq = arith.constant 8.000000e+00 : f32
  %e3 = tensor.empty() : tensor<16x8x8xf32>
  %emb = linalg.generic {indexing_maps = [#ids, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<16x8xi64>) outs(%e3 : tensor<16x8x8xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%row, %col] : tensor<64x8xf32>
    linalg.yield %v : f32
  } -> tensor<16x8x8xf32>
  %pe = tensor.empty() : tensor<16x8xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<16x8xf32>) -> tensor<16x8xf32>
  %sum = linalg.generic {indexing_maps = [#m3, #pool], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%emb : tensor<16x8x8xf32>) outs(%pf : tensor<16x8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<16x8xf32>
  %mean = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<16x8xf32>) outs(%pe : tensor<16x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %seq : f32
    linalg.yield %d : f32
  } -> tensor<16x8xf32>
  %wt0 = tensor.empty() : tensor<8x4xf32>
  %wt = linalg.transpose ins(%w : tensor<4x8xf32>) outs(%wt0 : tensor<8x4xf32>) permutation = [1, 0]
  %l0 = tensor.empty() : tensor<16x4xf32>
  %lb = linalg.generic {indexing_maps = [#b2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<4xf32>) outs(%l0 : tensor<16x4xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<16x4xf32>
  %logits = linalg.matmul ins(%mean, %wt : tensor<16x8xf32>, tensor<8x4xf32>) outs(%lb : tensor<16x4xf32>) -> tensor<16x4xf32>
  return %logits : tensor<16x4xf32>
}
