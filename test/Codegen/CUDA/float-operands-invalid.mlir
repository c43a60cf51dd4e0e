// RUN: qtrain-opt %s --split-input-file --verify-diagnostics

// qtrain.float_operands names the formats of a product's two operands; the
// dialect refuses anything else where it is parsed, so neither
// qtrain-float-operands' output nor qtrain-gpu-gemms' input can be malformed.

func.func @not_formats(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  // expected-error @+1 {{'qtrain.float_operands' must be an array of two #qtrain.float, got [1, 2]}}
  linalg.matmul {qtrain.float_operands = [1, 2]}
                ins(%a, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

// -----

func.func @one_format(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  // expected-error @+1 {{'qtrain.float_operands' must be an array of two #qtrain.float}}
  linalg.matmul {qtrain.float_operands = [#qtrain.float<4, 3, 4, saturate>]}
                ins(%a, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)
  return
}
