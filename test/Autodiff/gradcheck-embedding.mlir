// Gradients of embedding tables match central differences in f64: a token
// table gathered with tensor.extract at a row cast from an i64 input (as
// torch-mlir lowers aten.embedding) and scaled, whose gradient is a
// scatter-add over the tokens, and a position table indexed by the loops
// themselves. Tokens repeat (ids below 5 of 7 rows), so rows get several
// contributions and some get none.
// RUN: qtrain-opt %s --qtrain-autodiff -o %t.step.mlir
// RUN: FileCheck %s --check-prefix=STEP < %t.step.mlir
// RUN: qtrain-opt %t.step.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: %gradcheck %t.so %t.step.mlir --samples 12 --index-bound 5 | FileCheck %s

// The token table's gradient: tokens are reduced, the table's rows and
// columns are parallel loops.
// STEP-LABEL: func.func @train_step
// STEP: linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "parallel", "parallel"]
// STEP: arith.cmpi eq

// CHECK-COUNT-3: max relative error
// CHECK: gradcheck: PASS

#ids = affine_map<(b, t, j) -> (b, t)>
#id3 = affine_map<(b, t, j) -> (b, t, j)>
#mean = affine_map<(b, t, j) -> (b, j)>
func.func @forward(%table: tensor<7x4xf64> {qtrain.param}, %pos: tensor<3x4xf64> {qtrain.param},
                   %w: tensor<4x5xf64> {qtrain.param}, %x: tensor<2x3xi64>) -> tensor<2x5xf64> {
  %zero = arith.constant 0.0 : f64
  %scale = arith.constant 2.0 : f64
  %e0 = tensor.empty() : tensor<2x3x4xf64>
  %emb = linalg.generic {indexing_maps = [#ids, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x3xi64>) outs(%e0 : tensor<2x3x4xf64>) {
  ^bb0(%id: i64, %o: f64):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%row, %col] : tensor<7x4xf64>
    %s = arith.mulf %v, %scale : f64
    linalg.yield %s : f64
  } -> tensor<2x3x4xf64>
  %withPos = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<2x3x4xf64>) outs(%e0 : tensor<2x3x4xf64>) {
  ^bb0(%v: f64, %o: f64):
    %t = linalg.index 1 : index
    %j = linalg.index 2 : index
    %p = tensor.extract %pos[%t, %j] : tensor<3x4xf64>
    %a = arith.addf %v, %p : f64
    %th = math.tanh %a : f64
    linalg.yield %th : f64
  } -> tensor<2x3x4xf64>
  %m0 = tensor.empty() : tensor<2x4xf64>
  %mf = linalg.fill ins(%zero : f64) outs(%m0 : tensor<2x4xf64>) -> tensor<2x4xf64>
  %sum = linalg.generic {indexing_maps = [#id3, #mean], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%withPos : tensor<2x3x4xf64>) outs(%mf : tensor<2x4xf64>) {
  ^bb0(%v: f64, %acc: f64):
    %a = arith.addf %acc, %v : f64
    linalg.yield %a : f64
  } -> tensor<2x4xf64>
  %z0 = tensor.empty() : tensor<2x5xf64>
  %zf = linalg.fill ins(%zero : f64) outs(%z0 : tensor<2x5xf64>) -> tensor<2x5xf64>
  %z = linalg.matmul ins(%sum, %w : tensor<2x4xf64>, tensor<4x5xf64>) outs(%zf : tensor<2x5xf64>) -> tensor<2x5xf64>
  return %z : tensor<2x5xf64>
}
