// RUN: qtrain-opt %s -split-input-file --qtrain-insert-quant -verify-diagnostics --remarks-filter="qtrain-.*" | FileCheck %s
// RUN: qtrain-opt %s -split-input-file --qtrain-insert-quant="policy=static bits=6 grad-bits=4 full-precision-layers=0" 2>/dev/null | FileCheck %s --check-prefix=STATIC
// RUN: qtrain-opt %s -split-input-file --qtrain-insert-quant="policy=none" 2>/dev/null | FileCheck %s --check-prefix=NONE

// A linear layer as torch-mlir writes it: the weight is quantized per output
// channel where the parameter enters (axis 0 of [out, in], before the
// transpose), the input per tensor, and the output is marked for error
// quantization. Precisions, seed and step become arguments.
// CHECK: module attributes {qtrain.grad_schedule = #qtrain.static<8>, qtrain.schedule = #qtrain.cyclic<shape = cosine, min = 3, max = 8, cycles = 32, period = floor>}
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   %[[W:.*]]: tensor<3x5xf32> {qtrain.param}, %[[X:.*]]: tensor<4x5xf32>,
//  CHECK-SAME:   %[[BITS:.*]]: i32 {qtrain.control = "bits"}, %[[GBITS:.*]]: i32 {qtrain.control = "grad_bits"},
//  CHECK-SAME:   %[[SEED:.*]]: i64 {qtrain.control = "seed"}, %[[STEP:.*]]: i32 {qtrain.control = "step"},
//  CHECK-SAME:   %[[EMA:.*]]: tensor<2xf32> {qtrain.state = "ema"})
//  CHECK-SAME:   -> (tensor<4x3xf32>, tensor<2xf32> {qtrain.state = "ema"})
//   CHECK-DAG:   %[[WQ:.*]] = qtrain.fake_quant %[[W]], %[[BITS]] role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<3x5xf32>
//   CHECK-DAG:   %[[XQ:.*]] = qtrain.fake_quant %[[X]], %[[BITS]] role activation rounding nearest_even granularity<per_tensor> : tensor<4x5xf32>
//   CHECK-DAG:   %[[RANGE:.*]] = qtrain.range_ema %[[X]], %[[EMA]] : tensor<4x5xf32>, tensor<2xf32>
//       CHECK:   %[[WT:.*]] = linalg.transpose ins(%[[WQ]] :
//       CHECK:   %[[Y:.*]] = linalg.matmul {qtrain.layer = 0 : i64, qtrain.product = "forward"} ins(%[[XQ]], %[[WT]] :
//       CHECK:   %[[E:.*]] = qtrain.grad_quant %[[Y]], %[[GBITS]] rounding stochastic seed(%[[SEED]], %[[STEP]]) : tensor<4x3xf32>
//       CHECK:   return %[[E]], %[[RANGE]]
// STATIC: module attributes {qtrain.grad_schedule = #qtrain.static<4>, qtrain.schedule = #qtrain.static<6>}
// NONE: module attributes {qtrain.grad_schedule = #qtrain.static<fp32>, qtrain.schedule = #qtrain.static<fp32>}
// NONE-LABEL: func.func @forward
//  NONE-SAME:   (%{{.*}}: tensor<3x5xf32> {qtrain.param}, %{{.*}}: tensor<4x5xf32>,
//  NONE-SAME:   %{{.*}}: i32 {qtrain.control = "bits"}, %{{.*}}: i32 {qtrain.control = "grad_bits"},
//  NONE-SAME:   %{{.*}}: i64 {qtrain.control = "seed"}, %{{.*}}: i32 {qtrain.control = "step"}) -> tensor<4x3xf32>
//   NONE-NOT:   qtrain.fake_quant
// STATIC-LABEL: func.func @forward
//   STATIC-NOT:   qtrain.fake_quant
//   STATIC-NOT:   qtrain.grad_quant
func.func @forward(%w: tensor<3x5xf32> {qtrain.param}, %x: tensor<4x5xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %wt_init = tensor.empty() : tensor<5x3xf32>
  %wt = linalg.transpose ins(%w : tensor<3x5xf32>) outs(%wt_init : tensor<5x3xf32>) permutation = [1, 0]
  %init = tensor.empty() : tensor<4x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x3xf32>) -> tensor<4x3xf32>
  // expected-remark @below {{layer 0 quantized}}
  %y = linalg.matmul ins(%x, %wt : tensor<4x5xf32>, tensor<5x3xf32>) outs(%fill : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Convolutions: the weight per output channel (f of fchw, axis 0; f of hwcf,
// axis 3), the input before its padding, and each layer's error in its own
// Philox stream.
// CHECK-LABEL: func.func @forward
//   CHECK-DAG:   qtrain.fake_quant %{{.*}}, %{{.*}} role weight rounding nearest_even granularity<per_channel, axis = 0> : tensor<4x2x3x3xf32>
//   CHECK-DAG:   qtrain.fake_quant %{{.*}}, %{{.*}} role weight rounding nearest_even granularity<per_channel, axis = 3> : tensor<3x3x4x5xf32>
//   CHECK-DAG:   %[[XQ:.*]] = qtrain.fake_quant %{{.*}}, %{{.*}} role activation rounding nearest_even granularity<per_tensor> : tensor<1x2x8x8xf32>
//       CHECK:   tensor.pad %[[XQ]]
//       CHECK:   qtrain.grad_quant %{{.*}}, %{{.*}} rounding stochastic seed(%{{.*}}, %{{.*}}) : tensor<1x4x8x8xf32>
//       CHECK:   qtrain.fake_quant %{{.*}}, %{{.*}} role activation rounding nearest_even granularity<per_tensor> : tensor<1x8x8x4xf32>
//       CHECK:   qtrain.grad_quant %{{.*}}, %{{.*}} rounding stochastic seed(%{{.*}}, %{{.*}}) {stream = 1 : i64} : tensor<1x6x6x5xf32>
// STATIC-LABEL: func.func @forward
//       STATIC:   qtrain.fake_quant %{{.*}}, %{{.*}} role weight rounding nearest_even granularity<per_channel, axis = 3>
//       STATIC:   qtrain.grad_quant %{{.*}}, %{{.*}} rounding stochastic seed(%{{.*}}, %{{.*}}) {stream = 1 : i64}
func.func @forward(%w1: tensor<4x2x3x3xf32> {qtrain.param}, %w2: tensor<3x3x4x5xf32> {qtrain.param}, %x: tensor<1x2x8x8xf32>) -> tensor<1x6x6x5xf32> {
  %zero = arith.constant 0.0 : f32
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x2x8x8xf32> to tensor<1x2x10x10xf32>
  %i1 = tensor.empty() : tensor<1x4x8x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%i1 : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  // expected-remark @below {{layer 0 quantized}}
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xp, %w1 : tensor<1x2x10x10xf32>, tensor<4x2x3x3xf32>) outs(%f1 : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %t_init = tensor.empty() : tensor<1x8x8x4xf32>
  %t = linalg.transpose ins(%c1 : tensor<1x4x8x8xf32>) outs(%t_init : tensor<1x8x8x4xf32>) permutation = [0, 2, 3, 1]
  %i2 = tensor.empty() : tensor<1x6x6x5xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%i2 : tensor<1x6x6x5xf32>) -> tensor<1x6x6x5xf32>
  // expected-remark @below {{layer 1 quantized}}
  %c2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%t, %w2 : tensor<1x8x8x4xf32>, tensor<3x3x4x5xf32>) outs(%f2 : tensor<1x6x6x5xf32>) -> tensor<1x6x6x5xf32>
  return %c2 : tensor<1x6x6x5xf32>
}
