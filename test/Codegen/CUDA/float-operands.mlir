// RUN: qtrain-opt %s --qtrain-float-operands --split-input-file | FileCheck %s

// Both operands are FP(4, 3, 4) values (P and Y of PAPERS.md section 4):
// the product is marked with their formats.
// CHECK-LABEL: func.func @forward
// CHECK:         linalg.matmul {qtrain.float_operands = [#qtrain.float<4, 3, 4, saturate>, #qtrain.float<4, 3, 4, saturate>]}
func.func @forward(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %xr = qtrain.round_float %x to <4, 3, 4, saturate> : tensor<4x8xf32>
  %wr = qtrain.round_float %w to <4, 3, 4, saturate> : tensor<8x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %c0 = arith.constant 0.0 : f32
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%xr, %wr : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Seen through ops that only move values: a transposition, a copying
// generic, a collapse, zero padding, and an insert into a zero fill.
// CHECK-LABEL: func.func @moved
// CHECK:         linalg.matmul {qtrain.float_operands = [#qtrain.float<5, 2, 0>, #qtrain.float<4, 3, 4, saturate>]}
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @moved(%g: tensor<2x2x3xf32>, %w: tensor<8x4xf32>) -> tensor<6x8xf32> {
  %gr = qtrain.round_float %g to <5, 2, 0> : tensor<2x2x3xf32>
  %c0 = arith.constant 0.0 : f32
  %gc = tensor.collapse_shape %gr [[0, 1], [2]] : tensor<2x2x3xf32> into tensor<4x3xf32>
  %gp = tensor.pad %gc low[0, 0] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c0 : f32
  } : tensor<4x3xf32> to tensor<4x4xf32>
  %ze = tensor.empty() : tensor<6x4xf32>
  %zf = linalg.fill ins(%c0 : f32) outs(%ze : tensor<6x4xf32>) -> tensor<6x4xf32>
  %a = tensor.insert_slice %gp into %zf[1, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<6x4xf32>
  %wr = qtrain.round_float %w to <4, 3, 4, saturate> : tensor<8x4xf32>
  %te = tensor.empty() : tensor<4x8xf32>
  %wt = linalg.transpose ins(%wr : tensor<8x4xf32>) outs(%te : tensor<4x8xf32>) permutation = [1, 0]
  %ce = tensor.empty() : tensor<4x8xf32>
  %wc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%wt : tensor<4x8xf32>) outs(%ce : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<6x8xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %y = linalg.matmul ins(%a, %wc : tensor<6x4xf32>, tensor<4x8xf32>) outs(%z : tensor<6x8xf32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}

// -----

// Promotable roundings: promoted, an operand holds FP(6, 9, 0), which has
// no fp8 form. The product is split on the flags (either promoted: the f32
// product), and only the other branch is marked.
// CHECK-LABEL: func.func @promotable
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x16xf32>, %[[PX:.*]]: i1, %[[PW:.*]]: i1)
// CHECK:         %[[ANY:.*]] = arith.ori %[[PX]], %[[PW]] : i1
// CHECK:         %[[Y:.*]] = scf.if %[[ANY]] -> (tensor<4x16xf32>) {
// CHECK-NEXT:      %[[F32:.*]] = linalg.matmul ins(
// CHECK-NEXT:      scf.yield %[[F32]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[FP8:.*]] = linalg.matmul {qtrain.float_operands = [#qtrain.float<4, 3, 4, saturate>, #qtrain.float<4, 3, 4, saturate>]}
// CHECK-NEXT:      scf.yield %[[FP8]]
// CHECK:         return %[[Y]]
func.func @promotable(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %px: i1, %pw: i1) -> tensor<4x16xf32> {
  %xr = qtrain.round_float %x to <4, 3, 4, saturate> or <6, 9, 0, saturate> if %px : tensor<4x8xf32>
  %wr = qtrain.round_float %w to <4, 3, 4, saturate> or <6, 9, 0, saturate> if %pw : tensor<8x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %c0 = arith.constant 0.0 : f32
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%xr, %wr : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// FP(5, 3, 0) has no fp8 form, but its values are bf16 values: marked (for
// a bf16 kernel).
// CHECK-LABEL: func.func @bf16_only
// CHECK:         linalg.matmul {qtrain.float_operands = [#qtrain.float<5, 3, 0>, #qtrain.float<4, 3, 4, saturate>]}
func.func @bf16_only(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %xr = qtrain.round_float %x to <5, 3, 0> : tensor<4x8xf32>
  %wr = qtrain.round_float %w to <4, 3, 4, saturate> : tensor<8x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %c0 = arith.constant 0.0 : f32
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%xr, %wr : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Decoded saved codes hold their format too (here through a slice).
// CHECK-LABEL: func.func @decoded
// CHECK-NOT:     arith.ori
// CHECK:         scf.if %arg2
// CHECK:         linalg.matmul {qtrain.float_operands = [#qtrain.float<4, 3, 4, saturate>, #qtrain.float<4, 3, 4, saturate>]}
func.func @decoded(%codes: tensor<4x8xi16>, %w: tensor<8x16xf32>, %p: i1) -> tensor<4x16xf32> {
  %x2 = qtrain.decode_float %codes from <4, 3, 4, saturate> or <6, 9, 0, saturate> if %p : tensor<4x8xi16> -> tensor<4x8xf32>
  %ins = tensor.extract_slice %x2[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> to tensor<4x8xf32>
  %wr = qtrain.round_float %w to <4, 3, 4, saturate> : tensor<8x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %c0 = arith.constant 0.0 : f32
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%ins, %wr : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Not marked: a format neither fp8 nor bf16 holds (the high FP(6, 9, 0),
// FP(8, 10, 0)); values no rounding made; padding that is not zero; a
// generic that computes; a product of codes.
// CHECK-LABEL: func.func @unmarked
// CHECK-NOT:     qtrain.float_operands
// CHECK-NOT:     scf.if
// CHECK:         return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @unmarked(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %cx: tensor<4x8xi8>, %cw: tensor<8x16xi8>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xi32>) {
  %c0 = arith.constant 0.0 : f32
  %c1 = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %xl = qtrain.round_float %x to <4, 3, 4, saturate> : tensor<4x8xf32>
  %xh = qtrain.round_float %x to <6, 9, 0> : tensor<4x8xf32>
  %x53 = qtrain.round_float %x to <8, 10, 0> : tensor<4x8xf32>
  %wl = qtrain.round_float %w to <4, 3, 4, saturate> : tensor<8x16xf32>
  %y0 = linalg.matmul ins(%xh, %wl : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y1 = linalg.matmul ins(%x53, %wl : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y2 = linalg.matmul ins(%x, %wl : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %xp = tensor.pad %xl low[0, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c1 : f32
  } : tensor<4x8xf32> to tensor<4x8xf32>
  %y3 = linalg.matmul ins(%xp, %wl : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %ge = tensor.empty() : tensor<4x8xf32>
  %xg = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xl : tensor<4x8xf32>) outs(%ge : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.mulf %in, %c1 : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  %y4 = linalg.matmul ins(%xg, %wl : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %ie = tensor.empty() : tensor<4x16xi32>
  %i0 = arith.constant 0 : i32
  %iz = linalg.fill ins(%i0 : i32) outs(%ie : tensor<4x16xi32>) -> tensor<4x16xi32>
  %y5 = linalg.matmul ins(%cx, %cw : tensor<4x8xi8>, tensor<8x16xi8>) outs(%iz : tensor<4x16xi32>) -> tensor<4x16xi32>
  return %y0, %y1, %y2, %y3, %y4, %y5 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xi32>
}
