// The formats qtrain-assign-precision writes, on one small forward graph, for
// the ratios, orders and budgets of PAPERS.md section 4.
//
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=0" 2>/dev/null | FileCheck %s --check-prefix=HIGH
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=1" 2>/dev/null | FileCheck %s --check-prefix=LOW
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=0.5" -verify-diagnostics --remarks-filter="qtrain-.*" | FileCheck %s --check-prefix=LARGEST
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=0.3" 2>/dev/null | FileCheck %s --check-prefix=LARGEST
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=0.3 order=smallest" 2>/dev/null | FileCheck %s --check-prefix=SMALLEST
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=0.3 order=smallest" --remarks-filter="qtrain-.*" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=SMALLEST-REMARK
//
// Budget mode: 1361 bytes is the footprint of {G1} low, so it fits exactly;
// one byte less needs {G1, G0} (1053 bytes).
// RUN: qtrain-opt %s --qtrain-assign-precision="budget=1361 report=%t.fit.json" 2>/dev/null | FileCheck %s --check-prefix=LARGEST
// RUN: FileCheck %s --check-prefix=FIT-JSON --input-file=%t.fit.json
// RUN: qtrain-opt %s --qtrain-assign-precision="budget=1361" --remarks-filter="qtrain-.*" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIT-REMARK
// RUN: qtrain-opt %s --qtrain-assign-precision="budget=1360 report=%t.less.json" 2>/dev/null | FileCheck %s --check-prefix=TWO
// RUN: FileCheck %s --check-prefix=LESS-JSON --input-file=%t.less.json
// The all-high footprint (1964 bytes) fits 2KiB: nothing is lowered.
// RUN: qtrain-opt %s --qtrain-assign-precision="budget=2KiB" 2>/dev/null | FileCheck %s --check-prefix=HIGH
//
// The JSON report.
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=0.5 report=%t.json" -o /dev/null 2>/dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t.json
// The other orders: scored (ours) and random (an ablation; the same seed
// gives the same order everywhere).
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=0.5 order=scored scores=0,1,2 report=%t.scored.json" -o /dev/null 2>/dev/null
// RUN: FileCheck %s --check-prefix=SCORED --input-file=%t.scored.json
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=0.5 order=random seed=1 report=%t.random.json" -o /dev/null 2>/dev/null
// RUN: FileCheck %s --check-prefix=RANDOM --input-file=%t.random.json

// conv -> relu -> pool -> collapse -> linear at batch 4, as torch-mlir writes
// it (biases broadcast into the init, the linear weight transposed).
//
// Modules in execution order, with Y (= GY) elements and parameters P (= GP):
//   m0 input %x            Y 4x1x6x6 = 144
//   m1 conv (Conv)         Y 4x2x4x4 = 128   P %w1 2x1x3x3 = 18, %b1 2
//   m2 relu generic        Y 128
//   m3 pooling             Y 4x2x2x2 = 32
//      collapse_shape      aliases m3: no tensor of its own
//   m4 matmul (Linear)     Y 4x3 = 12        P %w2 3x8 = 24, %b2 3
// The bias generics and the transpose read only parameters: they belong to
// the module that reads them (their P is that module's P).
//
// A group starts at every input, conv and linear: m0 | m1 m2 m3 | m4. Group
// k = {Y, GY of its modules} + {P, GP of the modules whose predecessor is in
// k}; m1's predecessor is m0, m4's is m3:
//   G0 = Y,GY(m0) + P,GP(m1) = 2*144 + 2*(18+2)            = 328
//   G1 = Y,GY(m1,m2,m3) + P,GP(m4) = 2*(128+128+32) + 2*27 = 630
//   G2 = Y,GY(m4)                   = 2*12                 =  24
//   total 982; ratios 0.334, 0.642, 0.024.
// largest order: G1, G0, G2. ratio=0.3 and 0.5 both stop after G1
// (0.642 >= r). smallest order: G2, G0, G1; ratio=0.3 takes G2 (0.024),
// then G0 (0.358 >= 0.3).
//
// Memory: high FP(6,9,0) is 16 bits; low P, Y FP(4,3,4) and GY FP(5,2,0)
// are 8 bits, low GP stays 16.
//   all high: 982 * 16 = 15712 bits = 1964 bytes.
//   G1 low saves 8 * (288 + 288 + 27) = 4824 bits -> 10888 bits = 1361 bytes.
//   G0 low saves 8 * (144 + 144 + 20) = 2464 bits; with G1: 1053 bytes.
//   G2 low saves 8 * 24 = 192 bits; all low: 8232 bits = 1029 bytes.

// HIGH-LABEL: func.func @forward(
//  HIGH-SAME:   tensor<2x1x3x3xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 0 : i64, qtrain.param}
//  HIGH-SAME:   tensor<2xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 0 : i64, qtrain.param}
//  HIGH-SAME:   tensor<3x8xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 1 : i64, qtrain.param}
//  HIGH-SAME:   tensor<3xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 1 : i64, qtrain.param}
//  HIGH-SAME:   tensor<4x1x6x6xf32> {qtrain.formats = {gy = #qtrain.float<6, 9, 0>, y = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 0 : i64}
// The bias broadcast is not a module.
//   HIGH-NOT:   qtrain.group
//       HIGH:   linalg.conv_2d_nchw_fchw {{.*}}qtrain.formats = {gy = #qtrain.float<6, 9, 0>, y = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 1 : i64
//  HIGH-NEXT:   linalg.generic {{.*}}qtrain.formats = {gy = #qtrain.float<6, 9, 0>, y = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 1 : i64
// Nor are the fill and the window.
//   HIGH-NOT:   qtrain.group
//       HIGH:   linalg.pooling_nchw_max {{.*}}qtrain.formats = {gy = #qtrain.float<6, 9, 0>, y = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 1 : i64
// Nor the collapse, the transpose and the bias broadcast.
//   HIGH-NOT:   qtrain.group
//       HIGH:   linalg.matmul {qtrain.formats = {gy = #qtrain.float<6, 9, 0>, y = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 2 : i64}
//   HIGH-NOT:   qtrain.group
//       HIGH:   return

// LOW-LABEL: func.func @forward(
//  LOW-SAME:   tensor<2x1x3x3xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 0 : i64, qtrain.param}
//  LOW-SAME:   tensor<2xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 0 : i64, qtrain.param}
//  LOW-SAME:   tensor<3x8xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 1 : i64, qtrain.param}
//  LOW-SAME:   tensor<3xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 1 : i64, qtrain.param}
//  LOW-SAME:   tensor<4x1x6x6xf32> {qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 0 : i64}
//       LOW:   linalg.conv_2d_nchw_fchw {{.*}}qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 1 : i64
//  LOW-NEXT:   linalg.generic {{.*}}qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 1 : i64
//       LOW:   linalg.pooling_nchw_max {{.*}}qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 1 : i64
//       LOW:   linalg.matmul {qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 2 : i64}

// G1 alone is low: Y and GY of conv, relu and pool, and P of the linear
// layer (whose predecessor, the pool, is in G1). The conv's own parameters
// are in G0 and stay high.
// LARGEST-LABEL: func.func @forward(
//  LARGEST-SAME:   tensor<2x1x3x3xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 0 : i64, qtrain.param}
//  LARGEST-SAME:   tensor<2xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 0 : i64, qtrain.param}
//  LARGEST-SAME:   tensor<3x8xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 1 : i64, qtrain.param}
//  LARGEST-SAME:   tensor<3xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 1 : i64, qtrain.param}
//  LARGEST-SAME:   tensor<4x1x6x6xf32> {qtrain.formats = {gy = #qtrain.float<6, 9, 0>, y = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 0 : i64}
//       LARGEST:   linalg.conv_2d_nchw_fchw {{.*}}qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 1 : i64
//  LARGEST-NEXT:   linalg.generic {{.*}}qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 1 : i64
//       LARGEST:   linalg.pooling_nchw_max {{.*}}qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 1 : i64
//       LARGEST:   linalg.matmul {qtrain.formats = {gy = #qtrain.float<6, 9, 0>, y = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 2 : i64}

// G2 and G0 are low: the input and the conv's parameters, and the logits.
// SMALLEST-LABEL: func.func @forward(
//  SMALLEST-SAME:   tensor<2x1x3x3xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 0 : i64, qtrain.param}
//  SMALLEST-SAME:   tensor<2xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 0 : i64, qtrain.param}
//  SMALLEST-SAME:   tensor<3x8xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 1 : i64, qtrain.param}
//  SMALLEST-SAME:   tensor<3xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 1 : i64, qtrain.param}
//  SMALLEST-SAME:   tensor<4x1x6x6xf32> {qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 0 : i64}
//       SMALLEST:   linalg.conv_2d_nchw_fchw {{.*}}qtrain.formats = {gy = #qtrain.float<6, 9, 0>, y = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 1 : i64
//  SMALLEST-NEXT:   linalg.generic {{.*}}qtrain.formats = {gy = #qtrain.float<6, 9, 0>, y = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 1 : i64
//       SMALLEST:   linalg.pooling_nchw_max {{.*}}qtrain.formats = {gy = #qtrain.float<6, 9, 0>, y = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 1 : i64
//       SMALLEST:   linalg.matmul {qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 2 : i64}

// SMALLEST-REMARK: remark: {{.*}}group 0 (input 4): 328 elements (0.334 of all), 656 B -> 348 B, low:
// SMALLEST-REMARK: remark: {{.*}}group 1 ({{.*}}): 630 elements (0.642 of all), 1.2 KiB -> 1.2 KiB, high:
// SMALLEST-REMARK: remark: {{.*}}group 2 (matmul at {{.*}}): 24 elements (0.024 of all), 48 B -> 24 B, low:
// SMALLEST-REMARK: remark: {{.*}}qtrain-assign-precision: order smallest, r = 0.3: 2 of 3 groups low (covering 0.3585 of the elements); tensor memory 1.9 KiB -> 1.6 KiB (0.831x)

// TWO-LABEL: func.func @forward(
//  TWO-SAME:   tensor<2x1x3x3xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 0 : i64, qtrain.param}
//  TWO-SAME:   tensor<3x8xf32> {qtrain.formats = {gp = #qtrain.float<6, 9, 0>, p = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 1 : i64, qtrain.param}
//  TWO-SAME:   tensor<4x1x6x6xf32> {qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 0 : i64}
//       TWO:   linalg.conv_2d_nchw_fchw {{.*}}qtrain.formats = {gy = #qtrain.float<5, 2, 0>, y = #qtrain.float<4, 3, 4, saturate>}, qtrain.group = 1 : i64
//       TWO:   linalg.matmul {qtrain.formats = {gy = #qtrain.float<6, 9, 0>, y = #qtrain.float<6, 9, 0, saturate>}, qtrain.group = 2 : i64}

// The budget fits exactly; the reported ratio is the share of the chosen
// group (630 / 982), printed with two decimals in the remark.
// FIT-JSON: "assigned_bytes_after": 1361,
// FIT-JSON: "assigned_bytes_before": 1964,
// FIT-JSON: "budget_bytes": 1361,
// FIT-JSON: "low_groups": 1,
// FIT-JSON: "ratio": 0.641547861507128
// FIT-REMARK: remark: {{.*}}qtrain-assign-precision: order largest, r = 0.641548: 1 of 3 groups low (covering 0.6415 of the elements); tensor memory 1.9 KiB -> 1.3 KiB (0.693x)

// LESS-JSON: "assigned_bytes_after": 1053,
// LESS-JSON: "budget_bytes": 1360,
// LESS-JSON: "low_groups": 2,

// The report: every group with its tensors, formats and bytes, and the
// fp32 master weights and momentum (47 parameter elements * 4 bytes).
//      JSON: {
// JSON-NEXT:   "assigned_bytes_after": 1361,
// JSON-NEXT:   "assigned_bytes_before": 1964,
// JSON-NEXT:   "covered": 0.641547861507128
// JSON-NEXT:   "format": "qtrain-precision-assignment",
// JSON-NEXT:   "function": "forward",
// JSON-NEXT:   "group_order": [
// JSON-NEXT:     1,
// JSON-NEXT:     0,
// JSON-NEXT:     2
// JSON-NEXT:   ],
// JSON-NEXT:   "groups": [
// JSON-NEXT:     {
// JSON-NEXT:       "bytes_after": 656,
// JSON-NEXT:       "bytes_before": 656,
// JSON-NEXT:       "elements": 328,
// JSON-NEXT:       "id": 0,
// JSON-NEXT:       "low": false,
// JSON-NEXT:       "modules": [
// JSON-NEXT:         "input 4"
// JSON-NEXT:       ],
// JSON-NEXT:       "ratio": 0.334012219959266
// JSON-NEXT:       "tensors": [
// JSON-NEXT:         {
// JSON-NEXT:           "class": "Y",
// JSON-NEXT:           "elements": 144,
// JSON-NEXT:           "format": "#qtrain.float<6, 9, 0, saturate>",
// JSON-NEXT:           "module": "input 4"
// JSON-NEXT:         },
// JSON-NEXT:         {
// JSON-NEXT:           "class": "GY",
// JSON-NEXT:           "elements": 144,
// JSON-NEXT:           "format": "#qtrain.float<6, 9, 0>",
// JSON-NEXT:           "module": "input 4"
// JSON-NEXT:         },
// JSON-NEXT:         {
// JSON-NEXT:           "class": "P",
// JSON-NEXT:           "elements": 18,
// JSON-NEXT:           "format": "#qtrain.float<6, 9, 0, saturate>",
// JSON-NEXT:           "module": "conv_2d_nchw_fchw at assign-precision.mlir:{{[0-9]+}}",
// JSON-NEXT:           "param": "param 0"
// JSON-NEXT:         },
//      JSON:       "bytes_after": 657,
// JSON-NEXT:       "bytes_before": 1260,
// JSON-NEXT:       "elements": 630,
// JSON-NEXT:       "id": 1,
// JSON-NEXT:       "low": true,
// JSON-NEXT:       "modules": [
// JSON-NEXT:         "conv_2d_nchw_fchw at assign-precision.mlir:{{[0-9]+}}",
// JSON-NEXT:         "generic at assign-precision.mlir:{{[0-9]+}}",
// JSON-NEXT:         "pooling_nchw_max at assign-precision.mlir:{{[0-9]+}}"
// JSON-NEXT:       ],
//      JSON:           "class": "GP",
// JSON-NEXT:           "elements": 24,
// JSON-NEXT:           "format": "#qtrain.float<6, 9, 0>",
// JSON-NEXT:           "module": "matmul at assign-precision.mlir:{{[0-9]+}}",
// JSON-NEXT:           "param": "param 2"
//      JSON:       "bytes_after": 48,
// JSON-NEXT:       "bytes_before": 48,
// JSON-NEXT:       "elements": 24,
// JSON-NEXT:       "id": 2,
// JSON-NEXT:       "low": false,
//      JSON:   "low_groups": 1,
// JSON-NEXT:   "master_weight_bytes": 188,
// JSON-NEXT:   "optimizer_state_bytes": 188,
// JSON-NEXT:   "order": "largest",
// JSON-NEXT:   "ratio": 0.5,
// JSON-NEXT:   "version": 1
// JSON-NEXT: }

// Scores 0, 1, 2 (descending: G2, G1, G0): G2 then G1 reach 0.666 >= 0.5.
// SCORED: "assigned_bytes_after": 1337,
// SCORED: "group_order": [
// SCORED-NEXT: 2,
// SCORED-NEXT: 1,
// SCORED-NEXT: 0
// SCORED: "id": 0,
// SCORED-NEXT: "low": false,
// SCORED: "id": 1,
// SCORED-NEXT: "low": true,
// SCORED: "id": 2,
// SCORED-NEXT: "low": true,
// SCORED: "order": "scored",

// splitmix64 with seed 1 shuffles to G0, G1, G2: G0 (0.334) then G1.
// RANDOM: "group_order": [
// RANDOM-NEXT: 0,
// RANDOM-NEXT: 1,
// RANDOM-NEXT: 2
// RANDOM: "low_groups": 2,
// RANDOM: "order": "random",

#bias4 = affine_map<(n, c, h, w) -> (c)>
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#bias2 = affine_map<(n, f) -> (f)>
#id2 = affine_map<(n, f) -> (n, f)>
// expected-remark @below {{qtrain-assign-precision: order largest, r = 0.5: 1 of 3 groups low (covering 0.6415 of the elements); tensor memory 1.9 KiB -> 1.3 KiB (0.693x)}}
func.func @forward(
    %w1: tensor<2x1x3x3xf32> {qtrain.param}, %b1: tensor<2xf32> {qtrain.param},
    %w2: tensor<3x8xf32> {qtrain.param}, %b2: tensor<3xf32> {qtrain.param},
    // expected-remark @below {{group 0 (input 4): 328 elements (0.334 of all), 656 B -> 656 B, high: P, Y #qtrain.float<6, 9, 0, saturate>, GY #qtrain.float<6, 9, 0>, GP #qtrain.float<6, 9, 0>}}
    %x: tensor<4x1x6x6xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c_init = tensor.empty() : tensor<4x2x4x4xf32>
  %c_bias = linalg.generic {indexing_maps = [#bias4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b1 : tensor<2xf32>) outs(%c_init : tensor<4x2x4x4xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<4x2x4x4xf32>
  // expected-remark-re @below {{group 1 (conv_2d_nchw_fchw at assign-precision.mlir:{{[0-9]+}}, generic at assign-precision.mlir:{{[0-9]+}}, pooling_nchw_max at assign-precision.mlir:{{[0-9]+}}): 630 elements (0.642 of all), 1.2 KiB -> 657 B, low: P, Y #qtrain.float<4, 3, 4, saturate>, GY #qtrain.float<5, 2, 0>, GP #qtrain.float<6, 9, 0>}}
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
  // expected-remark-re @below {{group 2 (matmul at assign-precision.mlir:{{[0-9]+}}): 24 elements (0.024 of all), 48 B -> 48 B, high: P, Y #qtrain.float<6, 9, 0, saturate>, GY #qtrain.float<6, 9, 0>, GP #qtrain.float<6, 9, 0>}}
  %h = linalg.matmul ins(%flat, %w2t : tensor<4x8xf32>, tensor<8x3xf32>) outs(%h_bias : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %h : tensor<4x3xf32>
}
