// Gradients through the activations exporters emit match central
// differences in f64, one parameter per activation so that each is checked
// on its own: GELU with math.erf and in its tanh form (math.powf with a
// constant exponent), hardswish (arith.maximumf/minimumf clamp), hardsigmoid
// (cmpf + select clamp, as torch-mlir lowers clamp; both of 6x or 12x, so
// that the clamps cut), SiLU (x / (1 + exp(-x))),
// softplus (math.log1p) plus ELU (math.expm1), and math.fpowi, math.exp2,
// math.log2. The activations are concatenated (tensor.concat) before the
// output layer.
// RUN: qtrain-opt %s --qtrain-autodiff -o %t.step.mlir
// RUN: qtrain-opt %t.step.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: %gradcheck %t.so %t.step.mlir --samples 8 | FileCheck %s

// CHECK-COUNT-8: max relative error
// CHECK: gradcheck: PASS

#id2 = affine_map<(i, j) -> (i, j)>
func.func @forward(%w0: tensor<4x3xf64> {qtrain.param}, %w1: tensor<4x3xf64> {qtrain.param}, %w2: tensor<4x3xf64> {qtrain.param}, %w3: tensor<4x3xf64> {qtrain.param}, %w4: tensor<4x3xf64> {qtrain.param}, %w5: tensor<4x3xf64> {qtrain.param}, %w6: tensor<4x3xf64> {qtrain.param},
                   %out: tensor<21x4xf64> {qtrain.param}, %input: tensor<5x4xf64>) -> tensor<5x4xf64> {
  %cst0 = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<5x3xf64>
  %f = linalg.fill ins(%cst0 : f64) outs(%empty : tensor<5x3xf64>) -> tensor<5x3xf64>
  // gelu-erf
  %h0 = linalg.matmul ins(%input, %w0 : tensor<5x4xf64>, tensor<4x3xf64>) outs(%f : tensor<5x3xf64>) -> tensor<5x3xf64>
  %a0 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h0 : tensor<5x3xf64>) outs(%empty : tensor<5x3xf64>) {
  ^bb0(%x: f64, %o: f64):
    %c = arith.constant 0.70710678118654752 : f64
    %half = arith.constant 0.5 : f64
    %one = arith.constant 1.0 : f64
    %s = arith.mulf %x, %c : f64
    %e = math.erf %s : f64
    %p = arith.addf %e, %one : f64
    %hx = arith.mulf %x, %half : f64
    %r = arith.mulf %hx, %p : f64
    linalg.yield %r : f64
  } -> tensor<5x3xf64>
  // gelu-tanh
  %h1 = linalg.matmul ins(%input, %w1 : tensor<5x4xf64>, tensor<4x3xf64>) outs(%f : tensor<5x3xf64>) -> tensor<5x3xf64>
  %a1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h1 : tensor<5x3xf64>) outs(%empty : tensor<5x3xf64>) {
  ^bb0(%x: f64, %o: f64):
    %k = arith.constant 0.79788456080286536 : f64
    %a = arith.constant 0.044715 : f64
    %three = arith.constant 3.0 : f64
    %half = arith.constant 0.5 : f64
    %one = arith.constant 1.0 : f64
    %cube = math.powf %x, %three : f64
    %ac = arith.mulf %cube, %a : f64
    %in = arith.addf %x, %ac : f64
    %kin = arith.mulf %in, %k : f64
    %t = math.tanh %kin : f64
    %p = arith.addf %t, %one : f64
    %hx = arith.mulf %x, %half : f64
    %r = arith.mulf %hx, %p : f64
    linalg.yield %r : f64
  } -> tensor<5x3xf64>
  // hardswish
  %h2 = linalg.matmul ins(%input, %w2 : tensor<5x4xf64>, tensor<4x3xf64>) outs(%f : tensor<5x3xf64>) -> tensor<5x3xf64>
  %a2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h2 : tensor<5x3xf64>) outs(%empty : tensor<5x3xf64>) {
  ^bb0(%x: f64, %o: f64):
    %three = arith.constant 3.0 : f64
    %six = arith.constant 6.0 : f64
    %zero = arith.constant 0.0 : f64
    %s = arith.mulf %x, %six : f64
    %a = arith.addf %s, %three : f64
    %lo = arith.maximumf %a, %zero : f64
    %hi = arith.minimumf %lo, %six : f64
    %m = arith.mulf %s, %hi : f64
    %r = arith.divf %m, %six : f64
    linalg.yield %r : f64
  } -> tensor<5x3xf64>
  // hardsigmoid
  %h3 = linalg.matmul ins(%input, %w3 : tensor<5x4xf64>, tensor<4x3xf64>) outs(%f : tensor<5x3xf64>) -> tensor<5x3xf64>
  %a3 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h3 : tensor<5x3xf64>) outs(%empty : tensor<5x3xf64>) {
  ^bb0(%x: f64, %o: f64):
    %sixth = arith.constant 2.0 : f64
    %half = arith.constant 0.5 : f64
    %zero = arith.constant 0.0 : f64
    %one = arith.constant 1.0 : f64
    %m = arith.mulf %x, %sixth : f64
    %y = arith.addf %m, %half : f64
    %below = arith.cmpf ult, %y, %zero : f64
    %y0 = arith.select %below, %zero, %y : f64
    %above = arith.cmpf ugt, %y0, %one : f64
    %r = arith.select %above, %one, %y0 : f64
    linalg.yield %r : f64
  } -> tensor<5x3xf64>
  // silu
  %h4 = linalg.matmul ins(%input, %w4 : tensor<5x4xf64>, tensor<4x3xf64>) outs(%f : tensor<5x3xf64>) -> tensor<5x3xf64>
  %a4 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h4 : tensor<5x3xf64>) outs(%empty : tensor<5x3xf64>) {
  ^bb0(%x: f64, %o: f64):
    %one = arith.constant 1.0 : f64
    %n = arith.negf %x : f64
    %e = math.exp %n : f64
    %d = arith.addf %e, %one : f64
    %r = arith.divf %x, %d : f64
    linalg.yield %r : f64
  } -> tensor<5x3xf64>
  // softplus-elu
  %h5 = linalg.matmul ins(%input, %w5 : tensor<5x4xf64>, tensor<4x3xf64>) outs(%f : tensor<5x3xf64>) -> tensor<5x3xf64>
  %a5 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h5 : tensor<5x3xf64>) outs(%empty : tensor<5x3xf64>) {
  ^bb0(%x: f64, %o: f64):
    %zero = arith.constant 0.0 : f64
    %e = math.exp %x : f64
    %sp = math.log1p %e : f64
    %pos = arith.cmpf ogt, %x, %zero : f64
    %em = math.expm1 %x : f64
    %elu = arith.select %pos, %x, %em : f64
    %r = arith.addf %sp, %elu : f64
    linalg.yield %r : f64
  } -> tensor<5x3xf64>
  // pow-exp2-log2
  %h6 = linalg.matmul ins(%input, %w6 : tensor<5x4xf64>, tensor<4x3xf64>) outs(%f : tensor<5x3xf64>) -> tensor<5x3xf64>
  %a6 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h6 : tensor<5x3xf64>) outs(%empty : tensor<5x3xf64>) {
  ^bb0(%x: f64, %o: f64):
    %two = arith.constant 2 : i32
    %one = arith.constant 1.0 : f64
    %sq = math.fpowi %x, %two : f64, i32
    %e2 = math.exp2 %x : f64
    %a = arith.addf %sq, %e2 : f64
    %sq1 = arith.addf %sq, %one : f64
    %l2 = math.log2 %sq1 : f64
    %r = arith.addf %a, %l2 : f64
    linalg.yield %r : f64
  } -> tensor<5x3xf64>
  %cat = tensor.concat dim(1) %a0, %a1, %a2, %a3, %a4, %a5, %a6 : (tensor<5x3xf64>, tensor<5x3xf64>, tensor<5x3xf64>, tensor<5x3xf64>, tensor<5x3xf64>, tensor<5x3xf64>, tensor<5x3xf64>) -> tensor<5x21xf64>
  %ze = tensor.empty() : tensor<5x4xf64>
  %zf = linalg.fill ins(%cst0 : f64) outs(%ze : tensor<5x4xf64>) -> tensor<5x4xf64>
  %z = linalg.matmul ins(%cat, %out : tensor<5x21xf64>, tensor<21x4xf64>) outs(%zf : tensor<5x4xf64>) -> tensor<5x4xf64>
  return %z : tensor<5x4xf64>
}
