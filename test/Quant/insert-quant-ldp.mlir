// RUN: qtrain-opt %s --qtrain-insert-quant="policy=ldp lambda=0.5 ldp-init=0.25" -verify-diagnostics --remarks-filter="qtrain-.*" | FileCheck %s
// RUN: qtrain-opt %s --qtrain-insert-quant="policy=ldp lambda=0.5" --qtrain-autodiff 2>/dev/null | FileCheck %s --check-prefix=STEP

// LDP (PAPERS.md section 3) on two linear layers: each gets a learnable
// precision parameter after the existing parameters, its weight and input
// are quantized at qtrain.learned_bits of it, and the cost term
// lambda * sum_l MACs_l b_l^2 / (sum_l MACs_l 32^2) leaves @forward as a
// loss term, with lambda as state (initial value `lambda`).
// MACs: layer 0 4*5*3 = 60, layer 1 4*3*2 = 24; weights 60/(84*1024) and
// 24/(84*1024).

// CHECK: module attributes {qtrain.grad_schedule = #qtrain.static<8>, qtrain.schedule = #qtrain.learned<min = 3, max = 8>}
// CHECK-LABEL: func.func @forward
//  CHECK-SAME: %[[W1:[a-z0-9]*]]: tensor<3x5xf32> {qtrain.param}, %[[W2:[a-z0-9]*]]: tensor<2x3xf32> {qtrain.param},
//  CHECK-SAME: %[[P0:[a-z0-9]*]]: tensor<f32> {qtrain.init = dense<2.500000e-01> : tensor<f32>, qtrain.param, qtrain.precision = 0 : i64},
//  CHECK-SAME: %[[P1:[a-z0-9]*]]: tensor<f32> {qtrain.init = dense<2.500000e-01> : tensor<f32>, qtrain.param, qtrain.precision = 1 : i64},
//  CHECK-SAME: %[[X:[a-z0-9]*]]: tensor<4x5xf32>,
//  CHECK-SAME: %[[LAMBDA:[a-z0-9]*]]: tensor<1xf32> {qtrain.init = dense<5.000000e-01> : tensor<1xf32>, qtrain.state = "ldp_lambda"})
//  CHECK-SAME: -> (tensor<4x2xf32>, tensor<2xf32> {qtrain.state = "ema"}, tensor<2xf32> {qtrain.state = "ema"}, tensor<1xf32> {qtrain.state = "ldp_lambda"}, tensor<f32> {qtrain.loss_term})
//   CHECK-DAG: %[[B0:.*]] = qtrain.learned_bits %[[P0]] range 3 to 8 : tensor<f32>
//   CHECK-DAG: %[[B1:.*]] = qtrain.learned_bits %[[P1]] range 3 to 8 : tensor<f32>
//       CHECK: %[[E0:.*]] = tensor.extract %[[B0]][] : tensor<f32>
//       CHECK: %[[I0:.*]] = arith.fptosi %[[E0]] : f32 to i32
//   CHECK-DAG: qtrain.fake_quant %[[W1]], %[[I0]] role weight
//   CHECK-DAG: qtrain.fake_quant %[[X]], %[[I0]] role activation
//       CHECK: linalg.matmul {qtrain.layer = 0 : i64
//       CHECK: qtrain.fake_quant %{{.*}}, %{{.*}} role activation
//       CHECK: linalg.matmul {qtrain.layer = 1 : i64
//       CHECK: %[[L:.*]] = tensor.collapse_shape %[[LAMBDA]] [] : tensor<1xf32> into tensor<f32>
//       CHECK: %[[COST:.*]] = linalg.generic {{.*}} ins(%[[B0]], %[[B1]], %[[L]] : tensor<f32>, tensor<f32>, tensor<f32>)
//       CHECK:   arith.constant 6.97544659E-4 : f32
//       CHECK:   arith.constant 2.7901787E-4 : f32
//       CHECK: return {{.*}}, %[[LAMBDA]], %[[COST]]

// The training step: the loss term is not a result (it joins the loss);
// lambda is state in and out. The gradient and the missing weight decay of
// the precisions are checked numerically by test/Pipelines/ldp-gradcheck.test.
// STEP-LABEL: func.func @train_step
//  STEP-SAME: qtrain.param, qtrain.precision = 0 : i64
//  STEP-SAME: qtrain.state = "ldp_lambda"
//  STEP-SAME: -> ({{.*}}tensor<1xf32> {qtrain.state = "ldp_lambda"}, f32)
//      STEP: %[[COST:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>, tensor<f32>)
//      STEP: %[[TERM:.*]] = tensor.extract %[[COST]][] : tensor<f32>
// STEP-NEXT: arith.addf %{{.*}}, %[[TERM]] : f32

func.func @forward(%w1: tensor<3x5xf32> {qtrain.param}, %w2: tensor<2x3xf32> {qtrain.param},
                   %x: tensor<4x5xf32>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<5x3xf32>
  %w1t = linalg.transpose ins(%w1 : tensor<3x5xf32>) outs(%e1 : tensor<5x3xf32>) permutation = [1, 0]
  %i1 = tensor.empty() : tensor<4x3xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%i1 : tensor<4x3xf32>) -> tensor<4x3xf32>
  // expected-remark @+1 {{layer 0 quantized at its learned precision}}
  %h = linalg.matmul ins(%x, %w1t : tensor<4x5xf32>, tensor<5x3xf32>) outs(%f1 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e2 = tensor.empty() : tensor<3x2xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<2x3xf32>) outs(%e2 : tensor<3x2xf32>) permutation = [1, 0]
  %i2 = tensor.empty() : tensor<4x2xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%i2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  // expected-remark @+1 {{layer 1 quantized at its learned precision}}
  %y = linalg.matmul ins(%h, %w2t : tensor<4x3xf32>, tensor<3x2xf32>) outs(%f2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
