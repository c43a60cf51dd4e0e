// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=1" --qtrain-insert-quant=policy=none --qtrain-insert-rounding="promotion=false" --qtrain-autodiff --qtrain-store-saved 2>/dev/null | FileCheck %s
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=1" --qtrain-insert-quant=policy=none --qtrain-insert-rounding --qtrain-autodiff --qtrain-store-saved 2>/dev/null | FileCheck %s --check-prefix=PROMOTABLE
// RUN: qtrain-opt %s --qtrain-assign-precision="ratio=0" --qtrain-insert-quant=policy=none --qtrain-insert-rounding --qtrain-autodiff --qtrain-store-saved 2>/dev/null | FileCheck %s --check-prefix=HIGH

// The relu output, rounded to FP(4,3,4), is what the weight gradient of the
// matmul reads: it is encoded in i8 right after its rounding, the forward
// matmul still reads the f32 rounded values, and the backward pass decodes
// the codes right before the weight gradient. The parameter P stays f32.
// CHECK-LABEL: func.func @eval_step
//   CHECK-NOT:   encode_float
// CHECK-LABEL: func.func @train_step
//       CHECK:   arith.maximumf
//       CHECK:   %[[R:.*]] = qtrain.round_float %{{.*}} to <4, 3, 4, saturate> role activation : tensor<4x5xf32>
//  CHECK-NEXT:   %[[C:.*]] = qtrain.encode_float %[[R]] to <4, 3, 4, saturate> : tensor<4x5xf32> -> tensor<4x5xi8>
//       CHECK:   linalg.matmul {{.*}}ins(%[[R]], %{{.*}} :
//       CHECK:   %[[D:.*]] = qtrain.decode_float %[[C]] from <4, 3, 4, saturate> {qtrain.role = #qtrain<role error>} : tensor<4x5xi8> -> tensor<4x5xf32>
//  CHECK-NEXT:   linalg.generic {{.*}}ins(%[[D]], %{{.*}} : tensor<4x5xf32>, tensor<4x3xf32>)

// A promotable rounding may switch to FP(6,9,0): its codes take 2 bytes,
// and the flag goes along.
// PROMOTABLE-LABEL: func.func @train_step
// PROMOTABLE: arith.maximumf
// PROMOTABLE: %[[R:.*]] = qtrain.round_float %{{.*}} to <4, 3, 4, saturate> or <6, 9, 0, saturate> if %[[P:[^ ]*]] role activation : tensor<4x5xf32>
// PROMOTABLE: qtrain.encode_float %[[R]] to <4, 3, 4, saturate> or <6, 9, 0, saturate> if %[[P]] : tensor<4x5xf32> -> tensor<4x5xi16>

// All high: FP(6,9,0) codes, 2 bytes.
// HIGH: qtrain.encode_float %{{.*}} to <6, 9, 0, saturate> : tensor<4x5xf32> -> tensor<4x5xi16>

func.func @forward(%w: tensor<3x5xf32> {qtrain.param}, %x: tensor<4x5xf32>) -> tensor<4x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x5xf32>
  %et = tensor.empty() : tensor<5x3xf32>
  %wt = linalg.transpose ins(%w : tensor<3x5xf32>) outs(%et : tensor<5x3xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul ins(%r, %wt : tensor<4x5xf32>, tensor<5x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
