// RUN: qtrain-opt %s --qtrain-insert-quant --qtrain-autodiff --qtrain-form-kernels | FileCheck %s
// RUN: qtrain-opt %s --qtrain-insert-quant --qtrain-autodiff --qtrain-form-kernels --qtrain-form-kernels | FileCheck %s --check-prefix=TWICE

// A linear layer and a padded convolution. Every product of every site is
// one qtrain.kernel with the quantizers of its operands and the data
// movement between them; the weight's quantizer, read by two products, is
// cloned into each.
// CHECK-LABEL: func.func @eval_step
//       CHECK:   qtrain.kernel site 0 "forward" -> tensor<2x3x6x6xf32> {
//       CHECK:     qtrain.fake_quant %{{.*}} role activation {{.*}} range(
//       CHECK:     qtrain.fake_quant %{{.*}} role weight
//       CHECK:     tensor.pad
//       CHECK:     %[[C:.*]] = linalg.conv_2d_nchw_fchw
//       CHECK:     qtrain.yield %[[C]] : tensor<2x3x6x6xf32>
//       CHECK:   qtrain.kernel site 1 "forward"
// CHECK-LABEL: func.func @train_step
//  CHECK-SAME:   %[[BITS:[^ ]*]]: i32 {qtrain.control = "bits"}, %[[GBITS:[^ ]*]]: i32 {qtrain.control = "grad_bits"}
//       CHECK:   qtrain.kernel site 0 "forward"
//       CHECK:     qtrain.fake_quant %{{.*}}, %[[BITS]] role activation
//       CHECK:   qtrain.kernel site 1 "forward" -> tensor<2x4xf32> {
//       CHECK:     qtrain.fake_quant %{{.*}}, %[[BITS]] role weight
//       CHECK:     linalg.transpose
//       CHECK:     linalg.matmul
// The backward products read the error at the backward bits.
//       CHECK:   qtrain.kernel site 1 "input_grad"
//       CHECK:     qtrain.fake_quant %{{.*}}, %[[BITS]] role weight
//       CHECK:     qtrain.fake_quant %{{.*}}, %[[GBITS]] role error rounding stochastic
//       CHECK:   qtrain.kernel site 1 "weight_grad"
//       CHECK:     qtrain.fake_quant %{{.*}}, %[[GBITS]] role error
// After the last kernel, nothing quantizes.
//       CHECK:   qtrain.kernel site 0 "weight_grad"
//       CHECK:     qtrain.yield %{{.*}} : tensor<3x1x3x3xf32>
//   CHECK-NOT:   qtrain.fake_quant
//       CHECK:   return
// Forming kernels again changes nothing.
// TWICE-COUNT-7: qtrain.kernel site
//   TWICE-NOT: qtrain.kernel site
func.func @forward(%w0: tensor<3x1x3x3xf32> {qtrain.param}, %w1: tensor<4x108xf32> {qtrain.param}, %x: tensor<2x1x6x6xf32>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x1x6x6xf32> to tensor<2x1x8x8xf32>
  %c_init = tensor.empty() : tensor<2x3x6x6xf32>
  %c_fill = linalg.fill ins(%zero : f32) outs(%c_init : tensor<2x3x6x6xf32>) -> tensor<2x3x6x6xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xp, %w0 : tensor<2x1x8x8xf32>, tensor<3x1x3x3xf32>) outs(%c_fill : tensor<2x3x6x6xf32>) -> tensor<2x3x6x6xf32>
  %flat = tensor.collapse_shape %c [[0], [1, 2, 3]] : tensor<2x3x6x6xf32> into tensor<2x108xf32>
  %wt_init = tensor.empty() : tensor<108x4xf32>
  %wt = linalg.transpose ins(%w1 : tensor<4x108xf32>) outs(%wt_init : tensor<108x4xf32>) permutation = [1, 0]
  %y_init = tensor.empty() : tensor<2x4xf32>
  %y_fill = linalg.fill ins(%zero : f32) outs(%y_init : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%flat, %wt : tensor<2x108xf32>, tensor<108x4xf32>) outs(%y_fill : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
