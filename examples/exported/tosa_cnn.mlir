// A small CNN in TOSA (MLIR 22's TOSA 1.0 syntax: zero points as operands,
// tosa.const_shape shapes), written here after what TOSA exporters emit for
// conv(1->4, 3x3, padding 1) -> bias -> relu (clamp) -> maxpool 2 -> a
// 14x14 conv as the classifier (fully connected, 784 -> 10) -> reshape to
// logits, NHWC at batch 1. The first conv's weights are given (synthetic,
// as in small_cnn.mlir); the classifier's are elided.
//
// qtrain-compile tosa_cnn.mlir --lift-params --batch=8 -o tosa.qtb runs
// qtrain-tosa-to-linalg first (docs/passes/import.md, "TOSA input").
module {
  func.func @main(%arg0: tensor<1x28x28x1xf32>) -> tensor<1x10xf32> {
    %w1 = "tosa.const"() <{values = dense<"0x08AC1C3E83C0CA3DEC51383DBC7413BC250681BDB29DEFBDA01A2FBE666666BE17D98EBEFA7EAABE79308F3E2C15673E65C92F3E3DFBF03DAC63823DF1601E3CDE9635BDFC62C9BD43FD1BBE094953BE684A85BE4BF0A0BE24BF983E82327A3EBCE6423EF59A0B3E609EA83D4D1BE83CE942D2BC4728A3BDECDF08BEB32B40BE7A7777BEA06197BED34DA23EF0A7863E"> : tensor<4x3x3x1xf32>}> : () -> tensor<4x3x3x1xf32>
    %b1 = "tosa.const"() <{values = dense<"0x36A5E2BCDB40A7BD36EC0ABEFD3742BE"> : tensor<4xf32>}> : () -> tensor<4xf32>
    %w2 = "tosa.const"() <{values = dense_resource<__elided__> : tensor<10x14x14x4xf32>}> : () -> tensor<10x14x14x4xf32>
    %b2 = "tosa.const"() <{values = dense<"0x46B6F33CC250C43C39EB943C6C0B4B3CBC80D83B2455573A73ABA2BBC52030BCE67587BC6EDBB6BC"> : tensor<10xf32>}> : () -> tensor<10xf32>
    %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
    %0 = tosa.conv2d %arg0, %w1, %b1, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x28x28x1xf32>, tensor<4x3x3x1xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x28x28x4xf32>
    %1 = tosa.clamp %0 {max_val = 3.40282347e+38 : f32, min_val = 0.0 : f32} : (tensor<1x28x28x4xf32>) -> tensor<1x28x28x4xf32>
    %2 = tosa.max_pool2d %1 {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x28x28x4xf32>) -> tensor<1x14x14x4xf32>
    %3 = tosa.conv2d %2, %w2, %b2, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x14x14x4xf32>, tensor<10x14x14x4xf32>, tensor<10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x1x10xf32>
    %shape = tosa.const_shape {values = dense<[1, 10]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %4 = tosa.reshape %3, %shape : (tensor<1x1x1x10xf32>, !tosa.shape<2>) -> tensor<1x10xf32>
    return %4 : tensor<1x10xf32>
  }
}
