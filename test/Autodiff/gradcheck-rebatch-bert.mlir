// A BERT-like block exported at batch 1 in torch-mlir's style, rebatched to
// 4, differentiated and checked against central differences in f64. Every
// linear layer folds batch x sequence into the rows of a matmul
// ([1, 3, 4] -> [3, 4]) and expands back; attention folds batch x heads for
// batch_matmul ([1, 2, 3, 2] -> [2, 3, 2]). A rebatch that got any fold
// wrong would not verify, or would mix samples: each of the 4 samples must
// give the logits the export gives for it alone.
// RUN: qtrain-opt %s --qtrain-rebatch="batch=4" -o %t.fwd.mlir
// RUN: FileCheck %s --check-prefix=FWD < %t.fwd.mlir
// RUN: qtrain-opt %s --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.b1.ll
// RUN: %cc_step %t.b1.ll -o %t.b1.so
// RUN: qtrain-opt %t.fwd.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.b4.ll
// RUN: %cc_step %t.b4.ll -o %t.b4.so
// RUN: %python %qtrain_src_root/test/lib/rebatch_check.py %t.b1.so %t.b4.so %t.fwd.mlir --index-bound 7 | FileCheck %s --check-prefix=SAME
// RUN: qtrain-opt %t.fwd.mlir --qtrain-autodiff -o %t.step.mlir
// RUN: qtrain-opt %t.step.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: %gradcheck %t.so %t.step.mlir --samples 6 --index-bound 7 | FileCheck %s

// FWD-LABEL: func.func @forward
//  FWD-SAME:   %{{.*}}: tensor<4x3xi64>) -> tensor<4x5xf64>
//       FWD:   tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<4x3x4xf64> into tensor<12x4xf64>
//       FWD:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<12x4xf64>, tensor<4x4xf64>) outs(%{{.*}} : tensor<12x4xf64>)
//       FWD:   tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [4, 3, 4] : tensor<12x4xf64> into tensor<4x3x4xf64>
//       FWD:   tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [4, 3, 2, 2] : tensor<4x3x4xf64> into tensor<4x3x2x2xf64>
//       FWD:   tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : tensor<4x2x3x2xf64> into tensor<8x3x2xf64>
//       FWD:   linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<8x3x2xf64>, tensor<8x2x3xf64>) outs(%{{.*}} : tensor<8x3x3xf64>)
//       FWD:   tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2], [3]] output_shape [4, 2, 3, 3] : tensor<8x3x3xf64> into tensor<4x2x3x3xf64>
//       FWD:   linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<8x3x3xf64>, tensor<8x3x2xf64>) outs(%{{.*}} : tensor<8x3x2xf64>)
//       FWD:   tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<4x3x2x2xf64> into tensor<4x3x4xf64>
//       FWD:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf64>, tensor<4x5xf64>) outs(%{{.*}} : tensor<4x5xf64>)
//   FWD-NOT:   tensor<1x
//   FWD-NOT:   (0, d1

// SAME: rebatch_check: PASS (4 samples, max difference {{.*}}, samples differ)

// CHECK: gradcheck: PASS

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
func.func @forward(%table: tensor<7x4xf64> {qtrain.param},
                   %w1: tensor<4x4xf64> {qtrain.param}, %b1: tensor<4xf64> {qtrain.param},
                   %gamma: tensor<4xf64> {qtrain.param}, %beta: tensor<4xf64> {qtrain.param},
                   %wq: tensor<4x4xf64> {qtrain.param}, %bq: tensor<4xf64> {qtrain.param},
                   %wk: tensor<4x4xf64> {qtrain.param}, %bk: tensor<4xf64> {qtrain.param},
                   %wv: tensor<4x4xf64> {qtrain.param}, %bv: tensor<4xf64> {qtrain.param},
                   %wc: tensor<5x4xf64> {qtrain.param}, %bc: tensor<5xf64> {qtrain.param},
                   %tokens: tensor<1x3xi64>) -> tensor<1x5xf64> {
  %zero = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %hidden = arith.constant 4.0 : f64
  %eps = arith.constant 1.0e-5 : f64
  %scale = arith.constant 0.70710678118654757 : f64
  %seq = arith.constant 3.0 : f64

  // Embedding output [1, S, H].
  %e3 = tensor.empty() : tensor<1x3x4xf64>
  %emb = linalg.generic {indexing_maps = [#ids, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%tokens : tensor<1x3xi64>) outs(%e3 : tensor<1x3x4xf64>) {
  ^bb0(%id: i64, %o: f64):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%row, %col] : tensor<7x4xf64>
    linalg.yield %v : f64
  } -> tensor<1x3x4xf64>

  // Dense layer: [1, 3, 4] -> [3, 4], addmm, -> [1, 3, 4].
  %h_x2 = tensor.collapse_shape %emb [[0, 1], [2]] : tensor<1x3x4xf64> into tensor<3x4xf64>
  %wt0 = tensor.empty() : tensor<4x4xf64>
  %h_wt = linalg.transpose ins(%w1 : tensor<4x4xf64>) outs(%wt0 : tensor<4x4xf64>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<3x4xf64>
  %h_f = linalg.fill ins(%zero : f64) outs(%e2 : tensor<3x4xf64>) -> tensor<3x4xf64>
  %h_mm = linalg.matmul ins(%h_x2, %h_wt : tensor<3x4xf64>, tensor<4x4xf64>) outs(%h_f : tensor<3x4xf64>) -> tensor<3x4xf64>
  %h_b = linalg.generic {indexing_maps = [#m2, #b2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%h_mm, %b1 : tensor<3x4xf64>, tensor<4xf64>) outs(%e2 : tensor<3x4xf64>) {
  ^bb0(%a: f64, %c: f64, %o: f64):
    %s = arith.addf %a, %c : f64
    %t = math.tanh %s : f64
    linalg.yield %t : f64
  } -> tensor<3x4xf64>
  %h = tensor.expand_shape %h_b [[0, 1], [2]] output_shape [1, 3, 4] : tensor<3x4xf64> into tensor<1x3x4xf64>

  // Layer norm over the hidden dimension, keep-dim [1, 3, 1] statistics.
  %s0 = tensor.empty() : tensor<1x3x1xf64>
  %sf = linalg.fill ins(%zero : f64) outs(%s0 : tensor<1x3x1xf64>) -> tensor<1x3x1xf64>
  %sum = linalg.generic {indexing_maps = [#m3, #k3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h : tensor<1x3x4xf64>) outs(%sf : tensor<1x3x1xf64>) {
  ^bb0(%v: f64, %acc: f64):
    %a = arith.addf %acc, %v : f64
    linalg.yield %a : f64
  } -> tensor<1x3x1xf64>
  %mean = linalg.generic {indexing_maps = [#uk3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sum : tensor<1x3x1xf64>) outs(%s0 : tensor<1x3x1xf64>) {
  ^bb0(%v: f64, %o: f64):
    %d = arith.divf %v, %hidden : f64
    linalg.yield %d : f64
  } -> tensor<1x3x1xf64>
  %cen = linalg.generic {indexing_maps = [#u3, #uk3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%h, %mean : tensor<1x3x4xf64>, tensor<1x3x1xf64>) outs(%e3 : tensor<1x3x4xf64>) {
  ^bb0(%v: f64, %m: f64, %o: f64):
    %d = arith.subf %v, %m : f64
    linalg.yield %d : f64
  } -> tensor<1x3x4xf64>
  %vsum = linalg.generic {indexing_maps = [#m3, #k3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%cen : tensor<1x3x4xf64>) outs(%sf : tensor<1x3x1xf64>) {
  ^bb0(%v: f64, %acc: f64):
    %sq = arith.mulf %v, %v : f64
    %a = arith.addf %acc, %sq : f64
    linalg.yield %a : f64
  } -> tensor<1x3x1xf64>
  %rstd = linalg.generic {indexing_maps = [#uk3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%vsum : tensor<1x3x1xf64>) outs(%s0 : tensor<1x3x1xf64>) {
  ^bb0(%v: f64, %o: f64):
    %var = arith.divf %v, %hidden : f64
    %ve = arith.addf %var, %eps : f64
    %r = math.rsqrt %ve : f64
    linalg.yield %r : f64
  } -> tensor<1x3x1xf64>
  %ln = linalg.generic {indexing_maps = [#u3, #uk3, #c3, #c3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%cen, %rstd, %gamma, %beta : tensor<1x3x4xf64>, tensor<1x3x1xf64>, tensor<4xf64>, tensor<4xf64>) outs(%e3 : tensor<1x3x4xf64>) {
  ^bb0(%v: f64, %r: f64, %g: f64, %b: f64, %o: f64):
    %n = arith.mulf %v, %r : f64
    %y = arith.mulf %n, %g : f64
    %z = arith.addf %y, %b : f64
    linalg.yield %z : f64
  } -> tensor<1x3x4xf64>

  // Q, K and V projections, each folded like the dense layer.
  %ln2 = tensor.collapse_shape %ln [[0, 1], [2]] : tensor<1x3x4xf64> into tensor<3x4xf64>
  %q_wt = linalg.transpose ins(%wq : tensor<4x4xf64>) outs(%wt0 : tensor<4x4xf64>) permutation = [1, 0]
  %q_mm = linalg.matmul ins(%ln2, %q_wt : tensor<3x4xf64>, tensor<4x4xf64>) outs(%h_f : tensor<3x4xf64>) -> tensor<3x4xf64>
  %q_b = linalg.generic {indexing_maps = [#m2, #b2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%q_mm, %bq : tensor<3x4xf64>, tensor<4xf64>) outs(%e2 : tensor<3x4xf64>) {
  ^bb0(%a: f64, %c: f64, %o: f64):
    %s = arith.addf %a, %c : f64
    linalg.yield %s : f64
  } -> tensor<3x4xf64>
  %q = tensor.expand_shape %q_b [[0, 1], [2]] output_shape [1, 3, 4] : tensor<3x4xf64> into tensor<1x3x4xf64>
  %k_wt = linalg.transpose ins(%wk : tensor<4x4xf64>) outs(%wt0 : tensor<4x4xf64>) permutation = [1, 0]
  %k_mm = linalg.matmul ins(%ln2, %k_wt : tensor<3x4xf64>, tensor<4x4xf64>) outs(%h_f : tensor<3x4xf64>) -> tensor<3x4xf64>
  %k_b = linalg.generic {indexing_maps = [#m2, #b2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%k_mm, %bk : tensor<3x4xf64>, tensor<4xf64>) outs(%e2 : tensor<3x4xf64>) {
  ^bb0(%a: f64, %c: f64, %o: f64):
    %s = arith.addf %a, %c : f64
    linalg.yield %s : f64
  } -> tensor<3x4xf64>
  %k = tensor.expand_shape %k_b [[0, 1], [2]] output_shape [1, 3, 4] : tensor<3x4xf64> into tensor<1x3x4xf64>
  %v_wt = linalg.transpose ins(%wv : tensor<4x4xf64>) outs(%wt0 : tensor<4x4xf64>) permutation = [1, 0]
  %v_mm = linalg.matmul ins(%ln2, %v_wt : tensor<3x4xf64>, tensor<4x4xf64>) outs(%h_f : tensor<3x4xf64>) -> tensor<3x4xf64>
  %v_b = linalg.generic {indexing_maps = [#m2, #b2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%v_mm, %bv : tensor<3x4xf64>, tensor<4xf64>) outs(%e2 : tensor<3x4xf64>) {
  ^bb0(%a: f64, %c: f64, %o: f64):
    %s = arith.addf %a, %c : f64
    linalg.yield %s : f64
  } -> tensor<3x4xf64>
  %v = tensor.expand_shape %v_b [[0, 1], [2]] output_shape [1, 3, 4] : tensor<3x4xf64> into tensor<1x3x4xf64>

  // Heads: view [1, 3, 2, 2], permute to [1, 2, 3, 2], fold batch x heads.
  %q4 = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, 3, 2, 2] : tensor<1x3x4xf64> into tensor<1x3x2x2xf64>
  %k4 = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [1, 3, 2, 2] : tensor<1x3x4xf64> into tensor<1x3x2x2xf64>
  %v4 = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [1, 3, 2, 2] : tensor<1x3x4xf64> into tensor<1x3x2x2xf64>
  %ht0 = tensor.empty() : tensor<1x2x3x2xf64>
  %qh = linalg.transpose ins(%q4 : tensor<1x3x2x2xf64>) outs(%ht0 : tensor<1x2x3x2xf64>) permutation = [0, 2, 1, 3]
  %kt0 = tensor.empty() : tensor<1x2x2x3xf64>
  %kh = linalg.transpose ins(%k4 : tensor<1x3x2x2xf64>) outs(%kt0 : tensor<1x2x2x3xf64>) permutation = [0, 2, 3, 1]
  %vh = linalg.transpose ins(%v4 : tensor<1x3x2x2xf64>) outs(%ht0 : tensor<1x2x3x2xf64>) permutation = [0, 2, 1, 3]
  %q3 = tensor.collapse_shape %qh [[0, 1], [2], [3]] : tensor<1x2x3x2xf64> into tensor<2x3x2xf64>
  %k3 = tensor.collapse_shape %kh [[0, 1], [2], [3]] : tensor<1x2x2x3xf64> into tensor<2x2x3xf64>
  %v3 = tensor.collapse_shape %vh [[0, 1], [2], [3]] : tensor<1x2x3x2xf64> into tensor<2x3x2xf64>

  // Scores, scaled by 1/sqrt(2), softmax over the keys.
  %se = tensor.empty() : tensor<2x3x3xf64>
  %sfl = linalg.fill ins(%zero : f64) outs(%se : tensor<2x3x3xf64>) -> tensor<2x3x3xf64>
  %scores = linalg.batch_matmul ins(%q3, %k3 : tensor<2x3x2xf64>, tensor<2x2x3xf64>) outs(%sfl : tensor<2x3x3xf64>) -> tensor<2x3x3xf64>
  %s4 = tensor.expand_shape %scores [[0, 1], [2], [3]] output_shape [1, 2, 3, 3] : tensor<2x3x3xf64> into tensor<1x2x3x3xf64>
  %e4 = tensor.empty() : tensor<1x2x3x3xf64>
  %scaled = linalg.generic {indexing_maps = [#u4, #m4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s4 : tensor<1x2x3x3xf64>) outs(%e4 : tensor<1x2x3x3xf64>) {
  ^bb0(%x: f64, %o: f64):
    %y = arith.mulf %x, %scale : f64
    linalg.yield %y : f64
  } -> tensor<1x2x3x3xf64>
  %r0 = tensor.empty() : tensor<1x2x3x1xf64>
  %mxf = linalg.fill ins(%ninf : f64) outs(%r0 : tensor<1x2x3x1xf64>) -> tensor<1x2x3x1xf64>
  %mx = linalg.generic {indexing_maps = [#m4, #k4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%scaled : tensor<1x2x3x3xf64>) outs(%mxf : tensor<1x2x3x1xf64>) {
  ^bb0(%x: f64, %acc: f64):
    %m = arith.maximumf %acc, %x : f64
    linalg.yield %m : f64
  } -> tensor<1x2x3x1xf64>
  %ex = linalg.generic {indexing_maps = [#u4, #uk4, #m4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%scaled, %mx : tensor<1x2x3x3xf64>, tensor<1x2x3x1xf64>) outs(%e4 : tensor<1x2x3x3xf64>) {
  ^bb0(%x: f64, %m: f64, %o: f64):
    %d = arith.subf %x, %m : f64
    %y = math.exp %d : f64
    linalg.yield %y : f64
  } -> tensor<1x2x3x3xf64>
  %smf = linalg.fill ins(%zero : f64) outs(%r0 : tensor<1x2x3x1xf64>) -> tensor<1x2x3x1xf64>
  %sm = linalg.generic {indexing_maps = [#m4, #k4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<1x2x3x3xf64>) outs(%smf : tensor<1x2x3x1xf64>) {
  ^bb0(%x: f64, %acc: f64):
    %a = arith.addf %acc, %x : f64
    linalg.yield %a : f64
  } -> tensor<1x2x3x1xf64>
  %probs = linalg.generic {indexing_maps = [#u4, #uk4, #m4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sm : tensor<1x2x3x3xf64>, tensor<1x2x3x1xf64>) outs(%e4 : tensor<1x2x3x3xf64>) {
  ^bb0(%x: f64, %s: f64, %o: f64):
    %y = arith.divf %x, %s : f64
    linalg.yield %y : f64
  } -> tensor<1x2x3x3xf64>

  // Context: probs x V over heads, back to [1, 3, 4], residual.
  %p3 = tensor.collapse_shape %probs [[0, 1], [2], [3]] : tensor<1x2x3x3xf64> into tensor<2x3x3xf64>
  %ce = tensor.empty() : tensor<2x3x2xf64>
  %cf = linalg.fill ins(%zero : f64) outs(%ce : tensor<2x3x2xf64>) -> tensor<2x3x2xf64>
  %ctx = linalg.batch_matmul ins(%p3, %v3 : tensor<2x3x3xf64>, tensor<2x3x2xf64>) outs(%cf : tensor<2x3x2xf64>) -> tensor<2x3x2xf64>
  %c4 = tensor.expand_shape %ctx [[0, 1], [2], [3]] output_shape [1, 2, 3, 2] : tensor<2x3x2xf64> into tensor<1x2x3x2xf64>
  %cte = tensor.empty() : tensor<1x3x2x2xf64>
  %ct = linalg.transpose ins(%c4 : tensor<1x2x3x2xf64>) outs(%cte : tensor<1x3x2x2xf64>) permutation = [0, 2, 1, 3]
  %merged = tensor.collapse_shape %ct [[0], [1], [2, 3]] : tensor<1x3x2x2xf64> into tensor<1x3x4xf64>
  %res = linalg.generic {indexing_maps = [#u3, #u3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%merged, %ln : tensor<1x3x4xf64>, tensor<1x3x4xf64>) outs(%e3 : tensor<1x3x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %s = arith.addf %a, %b : f64
    linalg.yield %s : f64
  } -> tensor<1x3x4xf64>

  // Mean over the sequence, classifier.
  %pe = tensor.empty() : tensor<1x4xf64>
  %pf = linalg.fill ins(%zero : f64) outs(%pe : tensor<1x4xf64>) -> tensor<1x4xf64>
  %psum = linalg.generic {indexing_maps = [#m3, #pool], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%res : tensor<1x3x4xf64>) outs(%pf : tensor<1x4xf64>) {
  ^bb0(%x: f64, %acc: f64):
    %a = arith.addf %acc, %x : f64
    linalg.yield %a : f64
  } -> tensor<1x4xf64>
  %pooled = linalg.generic {indexing_maps = [#u2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%psum : tensor<1x4xf64>) outs(%pe : tensor<1x4xf64>) {
  ^bb0(%x: f64, %o: f64):
    %d = arith.divf %x, %seq : f64
    linalg.yield %d : f64
  } -> tensor<1x4xf64>
  %cwt0 = tensor.empty() : tensor<4x5xf64>
  %cwt = linalg.transpose ins(%wc : tensor<5x4xf64>) outs(%cwt0 : tensor<4x5xf64>) permutation = [1, 0]
  %le = tensor.empty() : tensor<1x5xf64>
  %lf = linalg.fill ins(%zero : f64) outs(%le : tensor<1x5xf64>) -> tensor<1x5xf64>
  %lmm = linalg.matmul ins(%pooled, %cwt : tensor<1x4xf64>, tensor<4x5xf64>) outs(%lf : tensor<1x5xf64>) -> tensor<1x5xf64>
  %logits = linalg.generic {indexing_maps = [#u2, #b2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%lmm, %bc : tensor<1x5xf64>, tensor<5xf64>) outs(%le : tensor<1x5xf64>) {
  ^bb0(%a: f64, %c: f64, %o: f64):
    %s = arith.addf %a, %c : f64
    linalg.yield %s : f64
  } -> tensor<1x5xf64>
  return %logits : tensor<1x5xf64>
}
