// RUN: qtrain-opt %s -split-input-file --qtrain-assign-precision="ratio=0.5" --qtrain-insert-rounding="promotion=false" 2>/dev/null | FileCheck %s
// RUN: qtrain-opt %s -split-input-file --qtrain-assign-precision="ratio=0.5" --qtrain-insert-rounding="promotion=false" 2>/dev/null | FileCheck %s --check-prefix=GONE
// RUN: qtrain-opt %s -split-input-file --qtrain-assign-precision="ratio=0.5" --qtrain-insert-rounding="loss-scale=false promotion=false" 2>/dev/null | FileCheck %s --check-prefix=NOLS

// The attributes are consumed.
// GONE-NOT: qtrain.formats
// GONE-NOT: qtrain.group

// The graph of assign-precision.mlir: at ratio=0.5, G1 (conv, relu, pool and
// the linear layer's parameters) is low, G0 (input, conv parameters) and G2
// (the logits) are high. A parameter reads round_float(grad_round_float(p)):
// P in its format (saturating), GP rounded on the way back (no saturate). A
// module output Y is read as grad_round_float(round_float(y)): Y in its
// format, GY rounded on the way back.
// CHECK-LABEL: func.func @forward(
//  CHECK-SAME:   %[[W1:[^:]*]]: tensor<2x1x3x3xf32> {qtrain.param}, %[[B1:[^:]*]]: tensor<2xf32> {qtrain.param},
//  CHECK-SAME:   %[[W2:[^:]*]]: tensor<3x8xf32> {qtrain.param}, %[[B2:[^:]*]]: tensor<3xf32> {qtrain.param},
//  CHECK-SAME:   %[[X:[^:]*]]: tensor<4x1x6x6xf32>,
// The dynamic loss scale, returned unchanged.
//  CHECK-SAME:   %[[SCALE:[^:]*]]: tensor<1xf32> {qtrain.state = "loss_scale"})
//  CHECK-SAME:   -> (tensor<4x3xf32>, tensor<1xf32> {qtrain.state = "loss_scale"})
// The data is rounded at the start; each parameter right before its first
// reader, so that the step does not hold a rounded weight before it is
// needed.
//       CHECK:   %[[RX:.*]] = qtrain.round_float %[[X]] to <6, 9, 0, saturate> role activation : tensor<4x1x6x6xf32>
//  CHECK-NEXT:   %[[GX:.*]] = qtrain.grad_round_float %[[RX]] to <6, 9, 0> role error : tensor<4x1x6x6xf32>
//       CHECK:   %[[GB1:.*]] = qtrain.grad_round_float %[[B1]] to <6, 9, 0> role weight_grad : tensor<2xf32>
//  CHECK-NEXT:   %[[RB1:.*]] = qtrain.round_float %[[GB1]] to <6, 9, 0, saturate> role weight : tensor<2xf32>
//  CHECK-NEXT:   %[[CB:.*]] = linalg.generic {{.*}} ins(%[[RB1]] : tensor<2xf32>)
//       CHECK:   %[[GW1:.*]] = qtrain.grad_round_float %[[W1]] to <6, 9, 0> role weight_grad : tensor<2x1x3x3xf32>
//  CHECK-NEXT:   %[[RW1:.*]] = qtrain.round_float %[[GW1]] to <6, 9, 0, saturate> role weight : tensor<2x1x3x3xf32>
//  CHECK-NEXT:   %[[C:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%[[GX]], %[[RW1]] : {{.*}}) outs(%[[CB]] :
//  CHECK-NEXT:   %[[RC:.*]] = qtrain.round_float %[[C]] to <4, 3, 4, saturate> role activation : tensor<4x2x4x4xf32>
//  CHECK-NEXT:   %[[GC:.*]] = qtrain.grad_round_float %[[RC]] to <5, 2, 0> role error : tensor<4x2x4x4xf32>
//  CHECK-NEXT:   %[[R:.*]] = linalg.generic {{.*}} ins(%[[GC]] : tensor<4x2x4x4xf32>)
//       CHECK:   %[[RR:.*]] = qtrain.round_float %[[R]] to <4, 3, 4, saturate> role activation : tensor<4x2x4x4xf32>
//  CHECK-NEXT:   %[[GR:.*]] = qtrain.grad_round_float %[[RR]] to <5, 2, 0> role error : tensor<4x2x4x4xf32>
//       CHECK:   %[[P:.*]] = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%[[GR]], %{{.*}} :
//  CHECK-NEXT:   %[[RP:.*]] = qtrain.round_float %[[P]] to <4, 3, 4, saturate> role activation : tensor<4x2x2x2xf32>
//  CHECK-NEXT:   %[[GP:.*]] = qtrain.grad_round_float %[[RP]] to <5, 2, 0> role error : tensor<4x2x2x2xf32>
// The collapse aliases the pool's output: it reads the rounded value and is
// not rounded again.
//  CHECK-NEXT:   %[[FLAT:.*]] = tensor.collapse_shape %[[GP]]
//   CHECK-NOT:   qtrain.round_float %[[FLAT]]
//       CHECK:   %[[GW2:.*]] = qtrain.grad_round_float %[[W2]] to <6, 9, 0> role weight_grad : tensor<3x8xf32>
//  CHECK-NEXT:   %[[RW2:.*]] = qtrain.round_float %[[GW2]] to <4, 3, 4, saturate> role weight : tensor<3x8xf32>
//  CHECK-NEXT:   %[[WT:.*]] = linalg.transpose ins(%[[RW2]] :
//       CHECK:   %[[GB2:.*]] = qtrain.grad_round_float %[[B2]] to <6, 9, 0> role weight_grad : tensor<3xf32>
//  CHECK-NEXT:   %[[RB2:.*]] = qtrain.round_float %[[GB2]] to <4, 3, 4, saturate> role weight : tensor<3xf32>
//  CHECK-NEXT:   %[[HB:.*]] = linalg.generic {{.*}} ins(%[[RB2]] : tensor<3xf32>)
//       CHECK:   %[[H:.*]] = linalg.matmul ins(%[[FLAT]], %[[WT]] : {{.*}}) outs(%[[HB]] :
//  CHECK-NEXT:   %[[RH:.*]] = qtrain.round_float %[[H]] to <6, 9, 0, saturate> role activation : tensor<4x3xf32>
//  CHECK-NEXT:   %[[GH:.*]] = qtrain.grad_round_float %[[RH]] to <6, 9, 0> role error : tensor<4x3xf32>
//  CHECK-NEXT:   return %[[GH]], %[[SCALE]] : tensor<4x3xf32>, tensor<1xf32>

// NOLS-LABEL: func.func @forward(
//  NOLS-SAME:   %{{.*}}: tensor<4x1x6x6xf32>) -> tensor<4x3xf32> {
//       NOLS:   return %{{.*}} : tensor<4x3xf32>

#bias4 = affine_map<(n, c, h, w) -> (c)>
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#bias2 = affine_map<(n, f) -> (f)>
#id2 = affine_map<(n, f) -> (n, f)>
func.func @forward(
    %w1: tensor<2x1x3x3xf32> {qtrain.param}, %b1: tensor<2xf32> {qtrain.param},
    %w2: tensor<3x8xf32> {qtrain.param}, %b2: tensor<3xf32> {qtrain.param},
    %x: tensor<4x1x6x6xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c_init = tensor.empty() : tensor<4x2x4x4xf32>
  %c_bias = linalg.generic {indexing_maps = [#bias4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b1 : tensor<2xf32>) outs(%c_init : tensor<4x2x4x4xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<4x2x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w1 : tensor<4x1x6x6xf32>, tensor<2x1x3x3xf32>) outs(%c_bias : tensor<4x2x4x4xf32>) -> tensor<4x2x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<4x2x4x4xf32>) outs(%c_init : tensor<4x2x4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x2x4x4xf32>
  %p_init = tensor.empty() : tensor<4x2x2x2xf32>
  %p_fill = linalg.fill ins(%ninf : f32) outs(%p_init : tensor<4x2x2x2xf32>) -> tensor<4x2x2x2xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%r, %win : tensor<4x2x4x4xf32>, tensor<2x2xf32>) outs(%p_fill : tensor<4x2x2x2xf32>) -> tensor<4x2x2x2xf32>
  %flat = tensor.collapse_shape %p [[0], [1, 2, 3]] : tensor<4x2x2x2xf32> into tensor<4x8xf32>
  %w2t_init = tensor.empty() : tensor<8x3xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<3x8xf32>) outs(%w2t_init : tensor<8x3xf32>) permutation = [1, 0]
  %h_init = tensor.empty() : tensor<4x3xf32>
  %h_bias = linalg.generic {indexing_maps = [#bias2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b2 : tensor<3xf32>) outs(%h_init : tensor<4x3xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<4x3xf32>
  %h = linalg.matmul ins(%flat, %w2t : tensor<4x8xf32>, tensor<8x3xf32>) outs(%h_bias : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %h : tensor<4x3xf32>
}

// -----

// A weight shared by two layers is one tensor, rounded once (in the format of
// its first reader's group, G0 here); a value read twice is rounded once and
// every use reads the rounded value. Groups: G0 = x (2 * 12) + w (2 * 9) = 42,
// G1 = h1 (24), G2 = h2 and s (48); ratio=0.5 takes G2 (0.42), then G0.
// CHECK-LABEL: func.func @forward(
//  CHECK-SAME:   %[[W:[^:]*]]: tensor<3x3xf32> {qtrain.param}, %[[X:[^:]*]]: tensor<4x3xf32>,
//   CHECK-DAG:   %[[GW:.*]] = qtrain.grad_round_float %[[W]] to <6, 9, 0> role weight_grad : tensor<3x3xf32>
//   CHECK-DAG:   %[[RW:.*]] = qtrain.round_float %[[GW]] to <4, 3, 4, saturate> role weight : tensor<3x3xf32>
//   CHECK-DAG:   %[[RX:.*]] = qtrain.round_float %[[X]] to <4, 3, 4, saturate> role activation : tensor<4x3xf32>
//   CHECK-DAG:   %[[GX:.*]] = qtrain.grad_round_float %[[RX]] to <5, 2, 0> role error : tensor<4x3xf32>
//       CHECK:   %[[H1:.*]] = linalg.matmul ins(%[[GX]], %[[RW]] :
//  CHECK-NEXT:   %[[RH1:.*]] = qtrain.round_float %[[H1]] to <6, 9, 0, saturate> role activation
//  CHECK-NEXT:   %[[GH1:.*]] = qtrain.grad_round_float %[[RH1]] to <6, 9, 0> role error
//  CHECK-NEXT:   %[[H2:.*]] = linalg.matmul ins(%[[GH1]], %[[RW]] :
//  CHECK-NEXT:   %[[RH2:.*]] = qtrain.round_float %[[H2]] to <4, 3, 4, saturate> role activation
//  CHECK-NEXT:   %[[GH2:.*]] = qtrain.grad_round_float %[[RH2]] to <5, 2, 0> role error
//  CHECK-NEXT:   %[[S:.*]] = linalg.add ins(%[[GH2]], %[[GH1]] :
//  CHECK-NEXT:   %[[RS:.*]] = qtrain.round_float %[[S]] to <4, 3, 4, saturate> role activation
//  CHECK-NEXT:   %[[GS:.*]] = qtrain.grad_round_float %[[RS]] to <5, 2, 0> role error
//  CHECK-NEXT:   return %[[GS]], %{{.*}} : tensor<4x3xf32>, tensor<1xf32>
func.func @forward(%w: tensor<3x3xf32> {qtrain.param}, %x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %h1 = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  %h2 = linalg.matmul ins(%h1, %w : tensor<4x3xf32>, tensor<3x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  %s = linalg.add ins(%h2, %h1 : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}
