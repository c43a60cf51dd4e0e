// Gradients of the input and the weight of grouped and NHWC/FHWC
// convolutions match central differences in f64: conv_2d_ngchw_fgchw with
// dilation 2, torch-mlir's grouped form (expand_shape of the weight to
// groups, conv_2d_ngchw_gfchw with stride 2 leaving an input row unread,
// collapse back), conv_2d_nhwgc_gfhwc, and TOSA's conv_2d_nhwc_fhwc with
// stride 2. A depthwise convolution first makes the input of each varied.
// RUN: qtrain-opt %s --qtrain-autodiff -o %t.step.mlir
// RUN: qtrain-opt %t.step.mlir --qtrain-lower-cpu | mlir-translate -allow-unregistered-dialect --mlir-to-llvmir -o %t.ll
// RUN: %cc_step %t.ll -o %t.so
// RUN: %gradcheck %t.so %t.step.mlir --samples 8 | FileCheck %s

// CHECK-COUNT-5: max relative error
// CHECK: gradcheck: PASS

#id4 = affine_map<(n, h, w, c) -> (n, h, w, c)>
#sum = affine_map<(n, h, w, c) -> (n, c)>
func.func @forward(%w0: tensor<4x3x3xf64> {qtrain.param}, %w1: tensor<2x2x2x2x2xf64> {qtrain.param},
                   %w2: tensor<4x2x3x3xf64> {qtrain.param}, %w3: tensor<2x2x2x2x2xf64> {qtrain.param},
                   %w4: tensor<3x2x2x4xf64> {qtrain.param},
                   %x: tensor<2x4x16x16xf64>) -> tensor<2x3xf64> {
  %zero = arith.constant 0.0 : f64
  // depthwise: 16 -> 14
  %i0 = tensor.empty() : tensor<2x4x14x14xf64>
  %f0 = linalg.fill ins(%zero : f64) outs(%i0 : tensor<2x4x14x14xf64>) -> tensor<2x4x14x14xf64>
  %y0 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w0 : tensor<2x4x16x16xf64>, tensor<4x3x3xf64>) outs(%f0 : tensor<2x4x14x14xf64>) -> tensor<2x4x14x14xf64>
  // fgchw, 2 groups, dilation 2: 14 -> 12
  %g1 = tensor.expand_shape %y0 [[0], [1, 2], [3], [4]] output_shape [2, 2, 2, 14, 14] : tensor<2x4x14x14xf64> into tensor<2x2x2x14x14xf64>
  %i1 = tensor.empty() : tensor<2x2x2x12x12xf64>
  %f1 = linalg.fill ins(%zero : f64) outs(%i1 : tensor<2x2x2x12x12xf64>) -> tensor<2x2x2x12x12xf64>
  %y1 = linalg.conv_2d_ngchw_fgchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%g1, %w1 : tensor<2x2x2x14x14xf64>, tensor<2x2x2x2x2xf64>) outs(%f1 : tensor<2x2x2x12x12xf64>) -> tensor<2x2x2x12x12xf64>
  // gfchw as torch-mlir writes groups=2, stride 2: 12 -> 5 (row 11 unread)
  %w2g = tensor.expand_shape %w2 [[0, 1], [2], [3], [4]] output_shape [2, 2, 2, 3, 3] : tensor<4x2x3x3xf64> into tensor<2x2x2x3x3xf64>
  %i2 = tensor.empty() : tensor<2x2x2x5x5xf64>
  %f2 = linalg.fill ins(%zero : f64) outs(%i2 : tensor<2x2x2x5x5xf64>) -> tensor<2x2x2x5x5xf64>
  %y2 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%y1, %w2g : tensor<2x2x2x12x12xf64>, tensor<2x2x2x3x3xf64>) outs(%f2 : tensor<2x2x2x5x5xf64>) -> tensor<2x2x2x5x5xf64>
  %c2 = tensor.collapse_shape %y2 [[0], [1, 2], [3], [4]] : tensor<2x2x2x5x5xf64> into tensor<2x4x5x5xf64>
  // to NHWC; nhwgc/gfhwc, 2 groups: 5 -> 4
  %t_init = tensor.empty() : tensor<2x5x5x4xf64>
  %t = linalg.transpose ins(%c2 : tensor<2x4x5x5xf64>) outs(%t_init : tensor<2x5x5x4xf64>) permutation = [0, 2, 3, 1]
  %g3 = tensor.expand_shape %t [[0], [1], [2], [3, 4]] output_shape [2, 5, 5, 2, 2] : tensor<2x5x5x4xf64> into tensor<2x5x5x2x2xf64>
  %i3 = tensor.empty() : tensor<2x4x4x2x2xf64>
  %f3 = linalg.fill ins(%zero : f64) outs(%i3 : tensor<2x4x4x2x2xf64>) -> tensor<2x4x4x2x2xf64>
  %y3 = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%g3, %w3 : tensor<2x5x5x2x2xf64>, tensor<2x2x2x2x2xf64>) outs(%f3 : tensor<2x4x4x2x2xf64>) -> tensor<2x4x4x2x2xf64>
  %c3 = tensor.collapse_shape %y3 [[0], [1], [2], [3, 4]] : tensor<2x4x4x2x2xf64> into tensor<2x4x4x4xf64>
  // nhwc/fhwc, stride 2: 4 -> 2
  %i4 = tensor.empty() : tensor<2x2x2x3xf64>
  %f4 = linalg.fill ins(%zero : f64) outs(%i4 : tensor<2x2x2x3xf64>) -> tensor<2x2x2x3xf64>
  %y4 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%c3, %w4 : tensor<2x4x4x4xf64>, tensor<3x2x2x4xf64>) outs(%f4 : tensor<2x2x2x3xf64>) -> tensor<2x2x2x3xf64>
  // sum over the spatial positions
  %i5 = tensor.empty() : tensor<2x3xf64>
  %f5 = linalg.fill ins(%zero : f64) outs(%i5 : tensor<2x3xf64>) -> tensor<2x3xf64>
  %z = linalg.generic {indexing_maps = [#id4, #sum], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%y4 : tensor<2x2x2x3xf64>) outs(%f5 : tensor<2x3xf64>) {
  ^bb0(%v: f64, %acc: f64):
    %a = arith.addf %acc, %v : f64
    linalg.yield %a : f64
  } -> tensor<2x3xf64>
  return %z : tensor<2x3xf64>
}
