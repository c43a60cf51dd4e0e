// The LeNet example parses and verifies as a qtrain forward graph: ten
// parameters, one input batch, logits out.
// RUN: qtrain-opt %qtrain_src_root/examples/models/lenet.mlir | FileCheck %s

// CHECK-LABEL: func.func @forward
// CHECK-COUNT-10: {qtrain.param}
//  CHECK-SAME: tensor<128x1x28x28xf32>) -> tensor<128x10xf32>
//      CHECK: linalg.conv_2d_nchw_fchw
//      CHECK: linalg.pooling_nchw_max
//      CHECK: linalg.conv_2d_nchw_fchw
//      CHECK: linalg.pooling_nchw_max
// CHECK-COUNT-3: linalg.matmul
