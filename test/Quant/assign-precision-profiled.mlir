// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=0.2" 2>/dev/null | FileCheck %s --check-prefix=LARGEST
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=0.2 order=profiled profile=%S/Inputs/overflow-profile.json" 2>/dev/null | FileCheck %s --check-prefix=PROFILED
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=0.2 order=profiled profile=%S/Inputs/overflow-profile.json" --remarks-filter="qtrain-.*" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARKS
// RUN: not qtrain-opt %s --qtrain-assign-precision="ratio=0.2 order=profiled" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not qtrain-opt %s --qtrain-assign-precision="ratio=0.2 profile=%S/Inputs/overflow-profile.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not qtrain-opt %s --qtrain-assign-precision="ratio=0.2 order=profiled profile=%t.missing" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not qtrain-opt %s --qtrain-assign-precision="ratio=0.2 order=profiled profile=%S/Inputs/overflow-profile-foreign.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FOREIGN
// RUN: not qtrain-opt %s --qtrain-assign-precision="ratio=0.2 order=profiled profile=%s" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTJSON

// Two groups: G0 = Y, GY of the input (20 + 20) and P, GP of the matmul's
// weight (15 + 15), 70 elements; G1 = Y, GY of the matmul (12 + 12), 24.
// The paper's greedy at r = 0.2 takes the larger G0. The profile says the
// input overflows FP(4,3,4) in 5% of its elements when low: G0's score is
// its saving / (1 + 0.05 / 0.001), below G1's, so order=profiled takes G1.
// LARGEST: %arg0: tensor<3x5xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<4, 3, 4, saturate>}
// LARGEST: linalg.matmul {{.*}}qtrain.formats = {gy = #qtrain.float<6, 9, 0>, y = #qtrain.float<6, 9, 0, saturate>}
// PROFILED: %arg0: tensor<3x5xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<6, 9, 0, saturate>}
// PROFILED: linalg.matmul {{.*}}qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}

// REMARKS: remark: {{.*}}group 0: saves 55 B when low, profiled overflow ratio 0.05, score 8.62745
// REMARKS: remark: {{.*}}group 1: saves 24 B when low, profiled overflow ratio 0, score 192
// REMARKS: remark: {{.*}}qtrain-assign-precision: order profiled, r = 0.2: 1 of 2 groups low

// NOFILE: error: qtrain-assign-precision: order=profiled and profile=FILE come together
// MISSING: error: qtrain-assign-precision: profile '{{.*}}.missing': No such file or directory
// FOREIGN: error: qtrain-assign-precision: profile '{{.*}}overflow-profile-foreign.json': names none of this graph's P or Y tensors; profile a bundle compiled from the same graph with --precision-ratio=1
// NOTJSON: error: qtrain-assign-precision: profile '{{.*}}': {{.*}}

func.func @forward(%w: tensor<3x5xf32> {qtrain.param}, %x: tensor<4x5xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<5x3xf32>
  %wt = linalg.transpose ins(%w : tensor<3x5xf32>) outs(%e : tensor<5x3xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<4x5xf32>, tensor<5x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
