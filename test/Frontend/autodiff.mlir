// RUN: qtrain-opt %s -split-input-file --qtrain-autodiff | FileCheck %s
// RUN: qtrain-opt %s -split-input-file --qtrain-autodiff="loss=mse train-entry=step eval-entry=infer" | FileCheck %s --check-prefix=MSE

// The calling convention: params, momentum buffers, inputs, labels, lr,
// momentum, weight decay -> new params, new buffers, loss. @forward becomes
// @eval_step.
// CHECK-LABEL: func.func @eval_step
//  CHECK-SAME:   (%{{.*}}: tensor<3x5xf32> {qtrain.param}, %{{.*}}: tensor<4x5xf32>) -> tensor<4x3xf32>
// CHECK-LABEL: func.func @train_step
//  CHECK-SAME:   (%[[W:.*]]: tensor<3x5xf32> {qtrain.param}, %[[BUF:.*]]: tensor<3x5xf32>, %[[X:.*]]: tensor<4x5xf32>,
//  CHECK-SAME:    %[[LABELS:.*]]: tensor<4xi64>, %[[LR:.*]]: f32, %[[MOM:.*]]: f32, %[[WD:.*]]: f32)
//  CHECK-SAME:   -> (tensor<3x5xf32>, tensor<3x5xf32>, f32)
// Forward, tagged as activations.
//       CHECK:   %[[LOGITS:.*]] = linalg.matmul indexing_maps = [{{.*}}] {qtrain.role = #qtrain<role activation>} ins(%[[X]], %[[W]] :
// Loss: row max, sum of exponentials, the label's logit.
//       CHECK:   math.exp
//       CHECK:   linalg.index 1
//       CHECK:   math.log
// d loss / d logits = (softmax - onehot) / batch.
//       CHECK:   arith.constant 2.500000e-01
//       CHECK:   %[[DLOGITS:.*]] = linalg.generic
// The weight gradient contracts the adjoint with the input over the batch,
// reading just those two: a multiply-accumulate, nothing times zero.
//       CHECK:   %[[DW:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel"]
//  CHECK-SAME:     ins(%[[X]], %[[DLOGITS]] :
//  CHECK-SAME:     attrs = {qtrain.role = #qtrain<role weight_grad>}
//  CHECK-NEXT:   ^bb0(%[[A:.*]]: f32, %[[E:.*]]: f32, %[[ACC:.*]]: f32):
//  CHECK-NEXT:     %[[P:.*]] = arith.mulf %[[A]], %[[E]] : f32
//  CHECK-NEXT:     %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
//  CHECK-NEXT:     linalg.yield %[[S]] : f32
// No gradient for the data input.
//   CHECK-NOT:   ins(%[[W]], %{{.*}}, %[[DLOGITS]]
// SGD with momentum and weight decay.
//       CHECK:   %[[UPD:.*]]:2 = linalg.generic {{.*}} ins(%[[W]], %[[DW]], %[[BUF]] :
//       CHECK:     arith.mulf %[[WD]]
//       CHECK:     arith.mulf %[[MOM]]
//       CHECK:     arith.mulf %[[LR]]
//       CHECK:   return %[[UPD]]#0, %[[UPD]]#1, %{{.*}} : tensor<3x5xf32>, tensor<3x5xf32>, f32

// MSE-LABEL: func.func @infer
// MSE-LABEL: func.func @step
//  MSE-SAME:   %{{.*}}: tensor<4x3xf32>, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32) -> (tensor<3x5xf32>, tensor<3x5xf32>, f32)
func.func @forward(%w: tensor<3x5xf32> {qtrain.param}, %x: tensor<4x5xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<4x5xf32>, tensor<3x5xf32>) outs(%fill : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// A convolution's input gradient is a convolution of the dilated, padded
// adjoint with the flipped kernel; its weight gradient a generic contraction.
// CHECK-LABEL: func.func @train_step
//       CHECK:   linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, qtrain.role = #qtrain<role activation>, strides = dense<2> : vector<2xi64>}
//       CHECK:   %[[DIL:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [2, 4, 3, 3] [1, 1, 2, 2]
//       CHECK:   %[[PAD:.*]] = tensor.pad %[[DIL]] low[0, 0, 2, 2] high[0, 0, 2, 2]
//       CHECK:   %[[FLIP:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}]
//       CHECK:   linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, qtrain.role = #qtrain<role error>, strides = dense<1> : vector<2xi64>} ins(%[[PAD]], %[[FLIP]] : tensor<2x4x9x9xf32>, tensor<3x4x3x3xf32>)
func.func @forward(%w: tensor<4x3x3x3xf32> {qtrain.param}, %w2: tensor<3x3x3x3xf32> {qtrain.param}, %x: tensor<2x3x9x9xf32>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %i0 = tensor.empty() : tensor<2x3x7x7xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%i0 : tensor<2x3x7x7xf32>) -> tensor<2x3x7x7xf32>
  %h = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w2 : tensor<2x3x9x9xf32>, tensor<3x3x3x3xf32>) outs(%f0 : tensor<2x3x7x7xf32>) -> tensor<2x3x7x7xf32>
  %i1 = tensor.empty() : tensor<2x4x3x3xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%i1 : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%h, %w : tensor<2x3x7x7xf32>, tensor<4x3x3x3xf32>) outs(%f1 : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %i2 = tensor.empty() : tensor<2x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%i2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c)>],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%y : tensor<2x4x3x3xf32>) outs(%f2 : tensor<2x4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}


// -----

// State results ({qtrain.state}) pass through the training step after the
// momentum buffers; the evaluation step quantizes with the running range
// instead of the batch's and returns only the logits. The running range is
// [min, range]: the quantizer takes its width as it is (`width`).
// CHECK-LABEL: func.func @eval_step
//  CHECK-SAME:   %[[EMA:[^ ]*]]: tensor<2xf32> {qtrain.state = "ema"}) -> tensor<4x3xf32>
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[MIN:.*]] = tensor.extract %[[EMA]][%[[C0]]]
//   CHECK-DAG:   %[[WIDTH:.*]] = tensor.extract %[[EMA]][%[[C1]]]
//       CHECK:   qtrain.fake_quant %{{.*}}, %{{.*}} role activation rounding nearest_even granularity<per_tensor> range(%[[MIN]], %[[WIDTH]] : f32, f32) width :
//   CHECK-NOT:   qtrain.range_ema
// CHECK-LABEL: func.func @train_step
//  CHECK-SAME:   -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<2xf32> {qtrain.state = "ema"}, f32)
//       CHECK:   %[[NEW:.*]] = qtrain.range_ema
//       CHECK:   return %{{.*}}, %{{.*}}, %[[NEW]], %{{.*}} : tensor<3x5xf32>, tensor<3x5xf32>, tensor<2xf32>, f32
func.func @forward(%w: tensor<3x5xf32> {qtrain.param}, %x: tensor<4x5xf32>, %bits: i32, %ema: tensor<2xf32> {qtrain.state = "ema"}) -> (tensor<4x3xf32>, tensor<2xf32> {qtrain.state = "ema"}) {
  %zero = arith.constant 0.0 : f32
  %xq = qtrain.fake_quant %x, %bits role activation rounding nearest_even granularity<per_tensor> : tensor<4x5xf32>
  %new = qtrain.range_ema %x, %ema : tensor<4x5xf32>, tensor<2xf32>
  %init = tensor.empty() : tensor<4x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%xq, %w : tensor<4x5xf32>, tensor<3x5xf32>) outs(%fill : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y, %new : tensor<4x3xf32>, tensor<2xf32>
}

// -----

// Convolutions and pooling may leave strides and dilations at their
// defaults (1); a body that depends on an operand only through a comparison
// (a mask) passes no gradient to it.
// CHECK-LABEL: func.func @train_step
//       CHECK:   linalg.conv_2d_nchw_fchw
//       CHECK:   linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, qtrain.role = #qtrain<role error>, strides = dense<1> : vector<2xi64>}
func.func @forward(%w: tensor<2x2x3x3xf32> {qtrain.param}, %m: tensor<1x2x6x6xf32> {qtrain.param}, %x: tensor<1x2x6x6xf32>) -> tensor<1x2xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x2x6x6xf32>
  %masked = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>) outs(%e : tensor<1x2x6x6xf32>) {
  ^bb0(%v: f32, %mv: f32, %o: f32):
    %c = arith.cmpf ogt, %mv, %zero : f32
    %s = arith.select %c, %v, %zero : f32
    linalg.yield %s : f32
  } -> tensor<1x2x6x6xf32>
  %i = tensor.empty() : tensor<1x2x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%i : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %c1 = linalg.conv_2d_nchw_fchw ins(%masked, %w : tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32>) outs(%f : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = tensor.empty() : tensor<1x2xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%p : tensor<1x2xf32>) -> tensor<1x2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%c1 : tensor<1x2x4x4xf32>) outs(%pf : tensor<1x2xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<1x2xf32>
  return %s : tensor<1x2xf32>
}
