// A BERT-like encoder block as torch-mlir's standard output shares it
// (the f32 twin of test/Autodiff/gradcheck-rebatch-bert.mlir): exported at
// batch 1, the entry point @main, the unused ml_program.global
// @global_seed, token ids (tensor<1x3xi64>) as the only argument, and every
// weight elided (`dense_resource<__elided__>`, no resource section). Token
// embedding gather, a tanh dense layer, layer norm, Q/K/V
// projections, 2-head attention (batch_matmul over batch x heads, softmax),
// a residual, mean pooling and a classifier. Every linear layer folds
// batch x sequence into the rows of its matmul, as exports at batch 1 do.
// Written here after torch-mlir's output, not fetched.
//
// qtrain-compile bert_block_elided.mlir --lift-params --batch=8 -o bert.qtb
// rebatches the folds, gives the weights PyTorch's default initialization
// and makes every matmul and batch_matmul a kernel site
// (test/examples/bert-export.test).
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#u2 = affine_map<(d0, d1) -> (0, d1)>
#b2 = affine_map<(d0, d1) -> (d1)>
#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
#m3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#u3 = affine_map<(d0, d1, d2) -> (0, d1, d2)>
#k3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#uk3 = affine_map<(d0, d1, d2) -> (0, d1, 0)>
#c3 = affine_map<(d0, d1, d2) -> (d2)>
#pool = affine_map<(d0, d1, d2) -> (d0, d2)>
#m4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#u4 = affine_map<(d0, d1, d2, d3) -> (0, d1, d2, d3)>
#k4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#uk4 = affine_map<(d0, d1, d2, d3) -> (0, d1, d2, 0)>
module attributes {torch.debug_module_name = "BertBlock"} {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @main(%tokens: tensor<1x3xi64>) -> tensor<1x5xf32> {
    %table = arith.constant dense_resource<__elided__> : tensor<7x4xf32>
    %w1 = arith.constant dense_resource<__elided__> : tensor<4x4xf32>
    %b1 = arith.constant dense_resource<__elided__> : tensor<4xf32>
    %gamma = arith.constant dense_resource<__elided__> : tensor<4xf32>
    %beta = arith.constant dense_resource<__elided__> : tensor<4xf32>
    %wq = arith.constant dense_resource<__elided__> : tensor<4x4xf32>
    %bq = arith.constant dense_resource<__elided__> : tensor<4xf32>
    %wk = arith.constant dense_resource<__elided__> : tensor<4x4xf32>
    %bk = arith.constant dense_resource<__elided__> : tensor<4xf32>
    %wv = arith.constant dense_resource<__elided__> : tensor<4x4xf32>
    %bv = arith.constant dense_resource<__elided__> : tensor<4xf32>
    %wc = arith.constant dense_resource<__elided__> : tensor<5x4xf32>
    %bc = arith.constant dense_resource<__elided__> : tensor<5xf32>
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %hidden = arith.constant 4.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %scale = arith.constant 0.70710678118654757 : f32
    %seq = arith.constant 3.0 : f32

    // Embedding output [1, S, H].
    %e3 = tensor.empty() : tensor<1x3x4xf32>
    %emb = linalg.generic {indexing_maps = [#ids, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%tokens : tensor<1x3xi64>) outs(%e3 : tensor<1x3x4xf32>) {
    ^bb0(%id: i64, %o: f32):
      %row = arith.index_cast %id : i64 to index
      %col = linalg.index 2 : index
      %v = tensor.extract %table[%row, %col] : tensor<7x4xf32>
      linalg.yield %v : f32
    } -> tensor<1x3x4xf32>

    // Dense layer: [1, 3, 4] -> [3, 4], addmm, -> [1, 3, 4].
    %h_x2 = tensor.collapse_shape %emb [[0, 1], [2]] : tensor<1x3x4xf32> into tensor<3x4xf32>
    %wt0 = tensor.empty() : tensor<4x4xf32>
    %h_wt = linalg.transpose ins(%w1 : tensor<4x4xf32>) outs(%wt0 : tensor<4x4xf32>) permutation = [1, 0]
    %e2 = tensor.empty() : tensor<3x4xf32>
    %h_f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<3x4xf32>) -> tensor<3x4xf32>
    %h_mm = linalg.matmul ins(%h_x2, %h_wt : tensor<3x4xf32>, tensor<4x4xf32>) outs(%h_f : tensor<3x4xf32>) -> tensor<3x4xf32>
    %h_b = linalg.generic {indexing_maps = [#m2, #b2, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%h_mm, %b1 : tensor<3x4xf32>, tensor<4xf32>) outs(%e2 : tensor<3x4xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      %t = math.tanh %s : f32
      linalg.yield %t : f32
    } -> tensor<3x4xf32>
    %h = tensor.expand_shape %h_b [[0, 1], [2]] output_shape [1, 3, 4] : tensor<3x4xf32> into tensor<1x3x4xf32>

    // Layer norm over the hidden dimension, keep-dim [1, 3, 1] statistics.
    %s0 = tensor.empty() : tensor<1x3x1xf32>
    %sf = linalg.fill ins(%zero : f32) outs(%s0 : tensor<1x3x1xf32>) -> tensor<1x3x1xf32>
    %sum = linalg.generic {indexing_maps = [#m3, #k3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h : tensor<1x3x4xf32>) outs(%sf : tensor<1x3x1xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %a = arith.addf %acc, %v : f32
      linalg.yield %a : f32
    } -> tensor<1x3x1xf32>
    %mean = linalg.generic {indexing_maps = [#uk3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%sum : tensor<1x3x1xf32>) outs(%s0 : tensor<1x3x1xf32>) {
    ^bb0(%v: f32, %o: f32):
      %d = arith.divf %v, %hidden : f32
      linalg.yield %d : f32
    } -> tensor<1x3x1xf32>
    %cen = linalg.generic {indexing_maps = [#u3, #uk3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%h, %mean : tensor<1x3x4xf32>, tensor<1x3x1xf32>) outs(%e3 : tensor<1x3x4xf32>) {
    ^bb0(%v: f32, %m: f32, %o: f32):
      %d = arith.subf %v, %m : f32
      linalg.yield %d : f32
    } -> tensor<1x3x4xf32>
    %vsum = linalg.generic {indexing_maps = [#m3, #k3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%cen : tensor<1x3x4xf32>) outs(%sf : tensor<1x3x1xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %sq = arith.mulf %v, %v : f32
      %a = arith.addf %acc, %sq : f32
      linalg.yield %a : f32
    } -> tensor<1x3x1xf32>
    %rstd = linalg.generic {indexing_maps = [#uk3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%vsum : tensor<1x3x1xf32>) outs(%s0 : tensor<1x3x1xf32>) {
    ^bb0(%v: f32, %o: f32):
      %var = arith.divf %v, %hidden : f32
      %ve = arith.addf %var, %eps : f32
      %r = math.rsqrt %ve : f32
      linalg.yield %r : f32
    } -> tensor<1x3x1xf32>
    %ln = linalg.generic {indexing_maps = [#u3, #uk3, #c3, #c3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%cen, %rstd, %gamma, %beta : tensor<1x3x4xf32>, tensor<1x3x1xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e3 : tensor<1x3x4xf32>) {
    ^bb0(%v: f32, %r: f32, %g: f32, %b: f32, %o: f32):
      %n = arith.mulf %v, %r : f32
      %y = arith.mulf %n, %g : f32
      %z = arith.addf %y, %b : f32
      linalg.yield %z : f32
    } -> tensor<1x3x4xf32>

    // Q, K and V projections, each folded like the dense layer.
    %ln2 = tensor.collapse_shape %ln [[0, 1], [2]] : tensor<1x3x4xf32> into tensor<3x4xf32>
    %q_wt = linalg.transpose ins(%wq : tensor<4x4xf32>) outs(%wt0 : tensor<4x4xf32>) permutation = [1, 0]
    %q_mm = linalg.matmul ins(%ln2, %q_wt : tensor<3x4xf32>, tensor<4x4xf32>) outs(%h_f : tensor<3x4xf32>) -> tensor<3x4xf32>
    %q_b = linalg.generic {indexing_maps = [#m2, #b2, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%q_mm, %bq : tensor<3x4xf32>, tensor<4xf32>) outs(%e2 : tensor<3x4xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<3x4xf32>
    %q = tensor.expand_shape %q_b [[0, 1], [2]] output_shape [1, 3, 4] : tensor<3x4xf32> into tensor<1x3x4xf32>
    %k_wt = linalg.transpose ins(%wk : tensor<4x4xf32>) outs(%wt0 : tensor<4x4xf32>) permutation = [1, 0]
    %k_mm = linalg.matmul ins(%ln2, %k_wt : tensor<3x4xf32>, tensor<4x4xf32>) outs(%h_f : tensor<3x4xf32>) -> tensor<3x4xf32>
    %k_b = linalg.generic {indexing_maps = [#m2, #b2, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%k_mm, %bk : tensor<3x4xf32>, tensor<4xf32>) outs(%e2 : tensor<3x4xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<3x4xf32>
    %k = tensor.expand_shape %k_b [[0, 1], [2]] output_shape [1, 3, 4] : tensor<3x4xf32> into tensor<1x3x4xf32>
    %v_wt = linalg.transpose ins(%wv : tensor<4x4xf32>) outs(%wt0 : tensor<4x4xf32>) permutation = [1, 0]
    %v_mm = linalg.matmul ins(%ln2, %v_wt : tensor<3x4xf32>, tensor<4x4xf32>) outs(%h_f : tensor<3x4xf32>) -> tensor<3x4xf32>
    %v_b = linalg.generic {indexing_maps = [#m2, #b2, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%v_mm, %bv : tensor<3x4xf32>, tensor<4xf32>) outs(%e2 : tensor<3x4xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<3x4xf32>
    %v = tensor.expand_shape %v_b [[0, 1], [2]] output_shape [1, 3, 4] : tensor<3x4xf32> into tensor<1x3x4xf32>

    // Heads: view [1, 3, 2, 2], permute to [1, 2, 3, 2], fold batch x heads.
    %q4 = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, 3, 2, 2] : tensor<1x3x4xf32> into tensor<1x3x2x2xf32>
    %k4 = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [1, 3, 2, 2] : tensor<1x3x4xf32> into tensor<1x3x2x2xf32>
    %v4 = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [1, 3, 2, 2] : tensor<1x3x4xf32> into tensor<1x3x2x2xf32>
    %ht0 = tensor.empty() : tensor<1x2x3x2xf32>
    %qh = linalg.transpose ins(%q4 : tensor<1x3x2x2xf32>) outs(%ht0 : tensor<1x2x3x2xf32>) permutation = [0, 2, 1, 3]
    %kt0 = tensor.empty() : tensor<1x2x2x3xf32>
    %kh = linalg.transpose ins(%k4 : tensor<1x3x2x2xf32>) outs(%kt0 : tensor<1x2x2x3xf32>) permutation = [0, 2, 3, 1]
    %vh = linalg.transpose ins(%v4 : tensor<1x3x2x2xf32>) outs(%ht0 : tensor<1x2x3x2xf32>) permutation = [0, 2, 1, 3]
    %q3 = tensor.collapse_shape %qh [[0, 1], [2], [3]] : tensor<1x2x3x2xf32> into tensor<2x3x2xf32>
    %k3 = tensor.collapse_shape %kh [[0, 1], [2], [3]] : tensor<1x2x2x3xf32> into tensor<2x2x3xf32>
    %v3 = tensor.collapse_shape %vh [[0, 1], [2], [3]] : tensor<1x2x3x2xf32> into tensor<2x3x2xf32>

    // Scores, scaled by 1/sqrt(2), softmax over the keys.
    %se = tensor.empty() : tensor<2x3x3xf32>
    %sfl = linalg.fill ins(%zero : f32) outs(%se : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
    %scores = linalg.batch_matmul ins(%q3, %k3 : tensor<2x3x2xf32>, tensor<2x2x3xf32>) outs(%sfl : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
    %s4 = tensor.expand_shape %scores [[0, 1], [2], [3]] output_shape [1, 2, 3, 3] : tensor<2x3x3xf32> into tensor<1x2x3x3xf32>
    %e4 = tensor.empty() : tensor<1x2x3x3xf32>
    %scaled = linalg.generic {indexing_maps = [#u4, #m4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%s4 : tensor<1x2x3x3xf32>) outs(%e4 : tensor<1x2x3x3xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.mulf %x, %scale : f32
      linalg.yield %y : f32
    } -> tensor<1x2x3x3xf32>
    %r0 = tensor.empty() : tensor<1x2x3x1xf32>
    %mxf = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<1x2x3x1xf32>) -> tensor<1x2x3x1xf32>
    %mx = linalg.generic {indexing_maps = [#m4, #k4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%scaled : tensor<1x2x3x3xf32>) outs(%mxf : tensor<1x2x3x1xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %m = arith.maximumf %acc, %x : f32
      linalg.yield %m : f32
    } -> tensor<1x2x3x1xf32>
    %ex = linalg.generic {indexing_maps = [#u4, #uk4, #m4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%scaled, %mx : tensor<1x2x3x3xf32>, tensor<1x2x3x1xf32>) outs(%e4 : tensor<1x2x3x3xf32>) {
    ^bb0(%x: f32, %m: f32, %o: f32):
      %d = arith.subf %x, %m : f32
      %y = math.exp %d : f32
      linalg.yield %y : f32
    } -> tensor<1x2x3x3xf32>
    %smf = linalg.fill ins(%zero : f32) outs(%r0 : tensor<1x2x3x1xf32>) -> tensor<1x2x3x1xf32>
    %sm = linalg.generic {indexing_maps = [#m4, #k4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%ex : tensor<1x2x3x3xf32>) outs(%smf : tensor<1x2x3x1xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %a = arith.addf %acc, %x : f32
      linalg.yield %a : f32
    } -> tensor<1x2x3x1xf32>
    %probs = linalg.generic {indexing_maps = [#u4, #uk4, #m4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%ex, %sm : tensor<1x2x3x3xf32>, tensor<1x2x3x1xf32>) outs(%e4 : tensor<1x2x3x3xf32>) {
    ^bb0(%x: f32, %s: f32, %o: f32):
      %y = arith.divf %x, %s : f32
      linalg.yield %y : f32
    } -> tensor<1x2x3x3xf32>

    // Context: probs x V over heads, back to [1, 3, 4], residual.
    %p3 = tensor.collapse_shape %probs [[0, 1], [2], [3]] : tensor<1x2x3x3xf32> into tensor<2x3x3xf32>
    %ce = tensor.empty() : tensor<2x3x2xf32>
    %cf = linalg.fill ins(%zero : f32) outs(%ce : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
    %ctx = linalg.batch_matmul ins(%p3, %v3 : tensor<2x3x3xf32>, tensor<2x3x2xf32>) outs(%cf : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
    %c4 = tensor.expand_shape %ctx [[0, 1], [2], [3]] output_shape [1, 2, 3, 2] : tensor<2x3x2xf32> into tensor<1x2x3x2xf32>
    %cte = tensor.empty() : tensor<1x3x2x2xf32>
    %ct = linalg.transpose ins(%c4 : tensor<1x2x3x2xf32>) outs(%cte : tensor<1x3x2x2xf32>) permutation = [0, 2, 1, 3]
    %merged = tensor.collapse_shape %ct [[0], [1], [2, 3]] : tensor<1x3x2x2xf32> into tensor<1x3x4xf32>
    %res = linalg.generic {indexing_maps = [#u3, #u3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%merged, %ln : tensor<1x3x4xf32>, tensor<1x3x4xf32>) outs(%e3 : tensor<1x3x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    } -> tensor<1x3x4xf32>

    // Mean over the sequence, classifier.
    %pe = tensor.empty() : tensor<1x4xf32>
    %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x4xf32>) -> tensor<1x4xf32>
    %psum = linalg.generic {indexing_maps = [#m3, #pool], iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%res : tensor<1x3x4xf32>) outs(%pf : tensor<1x4xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %a = arith.addf %acc, %x : f32
      linalg.yield %a : f32
    } -> tensor<1x4xf32>
    %pooled = linalg.generic {indexing_maps = [#u2, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%psum : tensor<1x4xf32>) outs(%pe : tensor<1x4xf32>) {
    ^bb0(%x: f32, %o: f32):
      %d = arith.divf %x, %seq : f32
      linalg.yield %d : f32
    } -> tensor<1x4xf32>
    %cwt0 = tensor.empty() : tensor<4x5xf32>
    %cwt = linalg.transpose ins(%wc : tensor<5x4xf32>) outs(%cwt0 : tensor<4x5xf32>) permutation = [1, 0]
    %le = tensor.empty() : tensor<1x5xf32>
    %lf = linalg.fill ins(%zero : f32) outs(%le : tensor<1x5xf32>) -> tensor<1x5xf32>
    %lmm = linalg.matmul ins(%pooled, %cwt : tensor<1x4xf32>, tensor<4x5xf32>) outs(%lf : tensor<1x5xf32>) -> tensor<1x5xf32>
    %logits = linalg.generic {indexing_maps = [#u2, #b2, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%lmm, %bc : tensor<1x5xf32>, tensor<5xf32>) outs(%le : tensor<1x5xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<1x5xf32>
    return %logits : tensor<1x5xf32>
  }
}
