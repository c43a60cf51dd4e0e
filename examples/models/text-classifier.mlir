// A one-layer transformer encoder that classifies token sequences, at
// training batch 16 and sequence 8, written the way torch-mlir lowers
// torch.nn: the token embedding as a tensor.extract at an index_cast of the
// i64 id (aten.embedding), nn.Linear as a transpose of the weight and a
// matmul over batch x sequence rows, attention heads folded into the batch
// of linalg.batch_matmul, GELU in its erf form.
// ids 16x8 -> token embedding [64, 16] + position embedding [8, 16]
//   -> layer norm -> 2-head self-attention (+ residual)
//   -> MLP 16 -> 32 (GELU) -> 16 (+ residual)
//   -> mean over the sequence -> classifier 16 -> 4 (logits).

#m2 = affine_map<(r, c) -> (r, c)>
#b2 = affine_map<(r, c) -> (c)>
#ids = affine_map<(b, t, j) -> (b, t)>
#m3 = affine_map<(b, t, j) -> (b, t, j)>
#pos = affine_map<(b, t, j) -> (t, j)>
#k3 = affine_map<(b, t, j) -> (b, t, 0)>
#c3 = affine_map<(b, t, j) -> (j)>
#pool = affine_map<(b, t, j) -> (b, j)>

func.func @forward(
    %tok_emb: tensor<64x16xf32> {qtrain.param}, %pos_emb: tensor<8x16xf32> {qtrain.param},
    %ln_g: tensor<16xf32> {qtrain.param}, %ln_b: tensor<16xf32> {qtrain.param},
    %wq: tensor<16x16xf32> {qtrain.param}, %bq: tensor<16xf32> {qtrain.param},
    %wk: tensor<16x16xf32> {qtrain.param}, %bk: tensor<16xf32> {qtrain.param},
    %wv: tensor<16x16xf32> {qtrain.param}, %bv: tensor<16xf32> {qtrain.param},
    %wo: tensor<16x16xf32> {qtrain.param}, %bo: tensor<16xf32> {qtrain.param},
    %w1: tensor<32x16xf32> {qtrain.param}, %b1: tensor<32xf32> {qtrain.param},
    %w2: tensor<16x32xf32> {qtrain.param}, %b2: tensor<16xf32> {qtrain.param},
    %wc: tensor<4x16xf32> {qtrain.param}, %bc: tensor<4xf32> {qtrain.param},
    %x: tensor<16x8xi64>) -> tensor<16x4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %hidden = arith.constant 1.600000e+01 : f32
  %seq = arith.constant 8.000000e+00 : f32
  %eps = arith.constant 9.99999974E-6 : f32
  // 1 / sqrt(head size 8), 1 / sqrt(2).
  %scale = arith.constant 0.353553385 : f32
  %rsqrt2 = arith.constant 0.707106769 : f32

  // Token and position embeddings [16, 8, 16].
  %e3 = tensor.empty() : tensor<16x8x16xf32>
  %tok = linalg.generic {indexing_maps = [#ids, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<16x8xi64>) outs(%e3 : tensor<16x8x16xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %tok_emb[%row, %col] : tensor<64x16xf32>
    linalg.yield %v : f32
  } -> tensor<16x8x16xf32>
  %emb = linalg.generic {indexing_maps = [#m3, #pos, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%tok, %pos_emb : tensor<16x8x16xf32>, tensor<8x16xf32>) outs(%e3 : tensor<16x8x16xf32>) {
  ^bb0(%a: f32, %p: f32, %o: f32):
    %s = arith.addf %a, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x8x16xf32>

  // Layer norm over the hidden dimension, keep-dim [16, 8, 1] statistics.
  %s0 = tensor.empty() : tensor<16x8x1xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%s0 : tensor<16x8x1xf32>) -> tensor<16x8x1xf32>
  %sum = linalg.generic {indexing_maps = [#m3, #k3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%emb : tensor<16x8x16xf32>) outs(%sf : tensor<16x8x1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<16x8x1xf32>
  %cen = linalg.generic {indexing_maps = [#m3, #k3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb, %sum : tensor<16x8x16xf32>, tensor<16x8x1xf32>) outs(%e3 : tensor<16x8x16xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %m = arith.divf %s, %hidden : f32
    %d = arith.subf %v, %m : f32
    linalg.yield %d : f32
  } -> tensor<16x8x16xf32>
  %vsum = linalg.generic {indexing_maps = [#m3, #k3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%cen : tensor<16x8x16xf32>) outs(%sf : tensor<16x8x1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %a = arith.addf %acc, %sq : f32
    linalg.yield %a : f32
  } -> tensor<16x8x1xf32>
  %ln = linalg.generic {indexing_maps = [#m3, #k3, #c3, #c3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%cen, %vsum, %ln_g, %ln_b : tensor<16x8x16xf32>, tensor<16x8x1xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e3 : tensor<16x8x16xf32>) {
  ^bb0(%v: f32, %q: f32, %g: f32, %b: f32, %o: f32):
    %var = arith.divf %q, %hidden : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %n = arith.mulf %v, %r : f32
    %y = arith.mulf %n, %g : f32
    %z = arith.addf %y, %b : f32
    linalg.yield %z : f32
  } -> tensor<16x8x16xf32>

  // Q, K and V: linear layers over the 128 batch x sequence rows.
  %ln2 = tensor.collapse_shape %ln [[0, 1], [2]] : tensor<16x8x16xf32> into tensor<128x16xf32>
  %wt0 = tensor.empty() : tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<128x16xf32>
  %q_wt = linalg.transpose ins(%wq : tensor<16x16xf32>) outs(%wt0 : tensor<16x16xf32>) permutation = [1, 0]
  %q_in = linalg.generic {indexing_maps = [#b2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%bq : tensor<16xf32>) outs(%e2 : tensor<128x16xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x16xf32>
  %q2 = linalg.matmul ins(%ln2, %q_wt : tensor<128x16xf32>, tensor<16x16xf32>) outs(%q_in : tensor<128x16xf32>) -> tensor<128x16xf32>
  %k_wt = linalg.transpose ins(%wk : tensor<16x16xf32>) outs(%wt0 : tensor<16x16xf32>) permutation = [1, 0]
  %k_in = linalg.generic {indexing_maps = [#b2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%bk : tensor<16xf32>) outs(%e2 : tensor<128x16xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x16xf32>
  %k2 = linalg.matmul ins(%ln2, %k_wt : tensor<128x16xf32>, tensor<16x16xf32>) outs(%k_in : tensor<128x16xf32>) -> tensor<128x16xf32>
  %v_wt = linalg.transpose ins(%wv : tensor<16x16xf32>) outs(%wt0 : tensor<16x16xf32>) permutation = [1, 0]
  %v_in = linalg.generic {indexing_maps = [#b2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%bv : tensor<16xf32>) outs(%e2 : tensor<128x16xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x16xf32>
  %v2 = linalg.matmul ins(%ln2, %v_wt : tensor<128x16xf32>, tensor<16x16xf32>) outs(%v_in : tensor<128x16xf32>) -> tensor<128x16xf32>

  // Heads: view [16, 8, 2, 8], permute to [16, 2, 8, 8] (K to [16, 2, 8, 8]
  // with the head size before the keys), fold batch x heads.
  %q4 = tensor.expand_shape %q2 [[0, 1], [2, 3]] output_shape [16, 8, 2, 8] : tensor<128x16xf32> into tensor<16x8x2x8xf32>
  %k4 = tensor.expand_shape %k2 [[0, 1], [2, 3]] output_shape [16, 8, 2, 8] : tensor<128x16xf32> into tensor<16x8x2x8xf32>
  %v4 = tensor.expand_shape %v2 [[0, 1], [2, 3]] output_shape [16, 8, 2, 8] : tensor<128x16xf32> into tensor<16x8x2x8xf32>
  %h0 = tensor.empty() : tensor<16x2x8x8xf32>
  %qh = linalg.transpose ins(%q4 : tensor<16x8x2x8xf32>) outs(%h0 : tensor<16x2x8x8xf32>) permutation = [0, 2, 1, 3]
  %kh = linalg.transpose ins(%k4 : tensor<16x8x2x8xf32>) outs(%h0 : tensor<16x2x8x8xf32>) permutation = [0, 2, 3, 1]
  %vh = linalg.transpose ins(%v4 : tensor<16x8x2x8xf32>) outs(%h0 : tensor<16x2x8x8xf32>) permutation = [0, 2, 1, 3]
  %q3 = tensor.collapse_shape %qh [[0, 1], [2], [3]] : tensor<16x2x8x8xf32> into tensor<32x8x8xf32>
  %k3 = tensor.collapse_shape %kh [[0, 1], [2], [3]] : tensor<16x2x8x8xf32> into tensor<32x8x8xf32>
  %v3 = tensor.collapse_shape %vh [[0, 1], [2], [3]] : tensor<16x2x8x8xf32> into tensor<32x8x8xf32>

  // Scores scaled by 1/sqrt(8), softmax over the keys.
  %se = tensor.empty() : tensor<32x8x8xf32>
  %sfl = linalg.fill ins(%zero : f32) outs(%se : tensor<32x8x8xf32>) -> tensor<32x8x8xf32>
  %scores = linalg.batch_matmul ins(%q3, %k3 : tensor<32x8x8xf32>, tensor<32x8x8xf32>) outs(%sfl : tensor<32x8x8xf32>) -> tensor<32x8x8xf32>
  %scaled = linalg.generic {indexing_maps = [#m3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%scores : tensor<32x8x8xf32>) outs(%se : tensor<32x8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = arith.mulf %v, %scale : f32
    linalg.yield %y : f32
  } -> tensor<32x8x8xf32>
  %r0 = tensor.empty() : tensor<32x8x1xf32>
  %mxf = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<32x8x1xf32>) -> tensor<32x8x1xf32>
  %mx = linalg.generic {indexing_maps = [#m3, #k3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%scaled : tensor<32x8x8xf32>) outs(%mxf : tensor<32x8x1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.maximumf %acc, %v : f32
    linalg.yield %m : f32
  } -> tensor<32x8x1xf32>
  %ex = linalg.generic {indexing_maps = [#m3, #k3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%scaled, %mx : tensor<32x8x8xf32>, tensor<32x8x1xf32>) outs(%se : tensor<32x8x8xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<32x8x8xf32>
  %smf = linalg.fill ins(%zero : f32) outs(%r0 : tensor<32x8x1xf32>) -> tensor<32x8x1xf32>
  %sm = linalg.generic {indexing_maps = [#m3, #k3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ex : tensor<32x8x8xf32>) outs(%smf : tensor<32x8x1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<32x8x1xf32>
  %probs = linalg.generic {indexing_maps = [#m3, #k3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sm : tensor<32x8x8xf32>, tensor<32x8x1xf32>) outs(%se : tensor<32x8x8xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %y = arith.divf %v, %s : f32
    linalg.yield %y : f32
  } -> tensor<32x8x8xf32>

  // Context: probs x V, heads merged back to [128, 16], output projection,
  // residual.
  %cf = linalg.fill ins(%zero : f32) outs(%se : tensor<32x8x8xf32>) -> tensor<32x8x8xf32>
  %ctx = linalg.batch_matmul ins(%probs, %v3 : tensor<32x8x8xf32>, tensor<32x8x8xf32>) outs(%cf : tensor<32x8x8xf32>) -> tensor<32x8x8xf32>
  %c4 = tensor.expand_shape %ctx [[0, 1], [2], [3]] output_shape [16, 2, 8, 8] : tensor<32x8x8xf32> into tensor<16x2x8x8xf32>
  %ct0 = tensor.empty() : tensor<16x8x2x8xf32>
  %ct = linalg.transpose ins(%c4 : tensor<16x2x8x8xf32>) outs(%ct0 : tensor<16x8x2x8xf32>) permutation = [0, 2, 1, 3]
  %merged = tensor.collapse_shape %ct [[0, 1], [2, 3]] : tensor<16x8x2x8xf32> into tensor<128x16xf32>
  %o_wt = linalg.transpose ins(%wo : tensor<16x16xf32>) outs(%wt0 : tensor<16x16xf32>) permutation = [1, 0]
  %o_in = linalg.generic {indexing_maps = [#b2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%bo : tensor<16xf32>) outs(%e2 : tensor<128x16xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x16xf32>
  %attn = linalg.matmul ins(%merged, %o_wt : tensor<128x16xf32>, tensor<16x16xf32>) outs(%o_in : tensor<128x16xf32>) -> tensor<128x16xf32>
  %r1 = linalg.generic {indexing_maps = [#m2, #m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%attn, %ln2 : tensor<128x16xf32>, tensor<128x16xf32>) outs(%e2 : tensor<128x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<128x16xf32>

  // MLP: 16 -> 32, GELU 0.5 x (1 + erf(x / sqrt 2)), 32 -> 16, residual.
  %w1t0 = tensor.empty() : tensor<16x32xf32>
  %w1t = linalg.transpose ins(%w1 : tensor<32x16xf32>) outs(%w1t0 : tensor<16x32xf32>) permutation = [1, 0]
  %f0 = tensor.empty() : tensor<128x32xf32>
  %f_in = linalg.generic {indexing_maps = [#b2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%b1 : tensor<32xf32>) outs(%f0 : tensor<128x32xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x32xf32>
  %f = linalg.matmul ins(%r1, %w1t : tensor<128x16xf32>, tensor<16x32xf32>) outs(%f_in : tensor<128x32xf32>) -> tensor<128x32xf32>
  %gelu = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%f : tensor<128x32xf32>) outs(%f0 : tensor<128x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.mulf %v, %rsqrt2 : f32
    %e = math.erf %s : f32
    %p = arith.addf %e, %one : f32
    %h = arith.mulf %v, %half : f32
    %y = arith.mulf %h, %p : f32
    linalg.yield %y : f32
  } -> tensor<128x32xf32>
  %w2t0 = tensor.empty() : tensor<32x16xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<16x32xf32>) outs(%w2t0 : tensor<32x16xf32>) permutation = [1, 0]
  %g_in = linalg.generic {indexing_maps = [#b2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%b2 : tensor<16xf32>) outs(%e2 : tensor<128x16xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x16xf32>
  %g = linalg.matmul ins(%gelu, %w2t : tensor<128x32xf32>, tensor<32x16xf32>) outs(%g_in : tensor<128x16xf32>) -> tensor<128x16xf32>
  %r2 = linalg.generic {indexing_maps = [#m2, #m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%g, %r1 : tensor<128x16xf32>, tensor<128x16xf32>) outs(%e2 : tensor<128x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<128x16xf32>

  // Mean over the sequence, classifier.
  %r3 = tensor.expand_shape %r2 [[0, 1], [2]] output_shape [16, 8, 16] : tensor<128x16xf32> into tensor<16x8x16xf32>
  %pe = tensor.empty() : tensor<16x16xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<16x16xf32>) -> tensor<16x16xf32>
  %psum = linalg.generic {indexing_maps = [#m3, #pool], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%r3 : tensor<16x8x16xf32>) outs(%pf : tensor<16x16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<16x16xf32>
  %pooled = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%psum : tensor<16x16xf32>) outs(%pe : tensor<16x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %seq : f32
    linalg.yield %d : f32
  } -> tensor<16x16xf32>
  %cwt0 = tensor.empty() : tensor<16x4xf32>
  %cwt = linalg.transpose ins(%wc : tensor<4x16xf32>) outs(%cwt0 : tensor<16x4xf32>) permutation = [1, 0]
  %l0 = tensor.empty() : tensor<16x4xf32>
  %l_in = linalg.generic {indexing_maps = [#b2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%bc : tensor<4xf32>) outs(%l0 : tensor<16x4xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<16x4xf32>
  %logits = linalg.matmul ins(%pooled, %cwt : tensor<16x16xf32>, tensor<16x4xf32>) outs(%l_in : tensor<16x4xf32>) -> tensor<16x4xf32>
  return %logits : tensor<16x4xf32>
}
