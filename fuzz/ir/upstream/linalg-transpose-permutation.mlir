// MLIR 22.1.8 (Debian): linalg.transpose's custom parser dereferences a null
// attribute when `permutation =` is not followed by an array, and
// qtrain-opt (any mlir-opt) dies with SIGSEGV instead of a parse error.
// Found by fuzz/ir (scripts/fuzz-ir.sh); not fixable in qtrain.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = foo
  return %t : tensor<3x2xf32>
}
