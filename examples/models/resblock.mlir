// A residual block with batch norm, to show the reverse-mode rules compose:
// stem conv 1->8 k3 s2 pad 1 -> [conv 8->8 k3 pad 1 -> bn -> relu -> conv -> bn]
// + skip -> relu -> global sum pool -> fc 8x10, on 28x28 images at training
// batch 128, in linalg on tensors as torch-mlir lowers torch.nn.

#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
#pool = affine_map<(n, c, h, w) -> (n, c)>
#id1 = affine_map<(c) -> (c)>

func.func @forward(
    %stem_w: tensor<8x1x3x3xf32> {qtrain.param},
    %conv1_w: tensor<8x8x3x3xf32> {qtrain.param}, %bn1_g: tensor<8xf32> {qtrain.param}, %bn1_b: tensor<8xf32> {qtrain.param},
    %conv2_w: tensor<8x8x3x3xf32> {qtrain.param}, %bn2_g: tensor<8xf32> {qtrain.param}, %bn2_b: tensor<8xf32> {qtrain.param},
    %fc_w: tensor<10x8xf32> {qtrain.param}, %fc_b: tensor<10xf32> {qtrain.param},
    %x: tensor<128x1x28x28xf32>) -> tensor<128x10xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  // N * H * W, the element count of each channel's batch statistics.
  %count = arith.constant 2.508800e+04 : f32
  %eps = arith.constant 9.99999974E-6 : f32
  %e4 = tensor.empty() : tensor<128x8x14x14xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<128x8x14x14xf32>) -> tensor<128x8x14x14xf32>
  %ec = tensor.empty() : tensor<8xf32>
  %zc = linalg.fill ins(%zero : f32) outs(%ec : tensor<8xf32>) -> tensor<8xf32>

  // stem: 1x28x28 -> 8x14x14
  %x_pad = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x1x28x28xf32> to tensor<128x1x30x30xf32>
  %stem = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x_pad, %stem_w : tensor<128x1x30x30xf32>, tensor<8x1x3x3xf32>) outs(%z4 : tensor<128x8x14x14xf32>) -> tensor<128x8x14x14xf32>

  %c1_pad = tensor.pad %stem low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x8x14x14xf32> to tensor<128x8x16x16xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%c1_pad, %conv1_w : tensor<128x8x16x16xf32>, tensor<8x8x3x3xf32>) outs(%z4 : tensor<128x8x14x14xf32>) -> tensor<128x8x14x14xf32>
  // n1: batch norm in training mode (batch statistics), as torch-mlir
  // decomposes aten.native_batch_norm: mean, biased variance, normalize.
  %n1_sum = linalg.generic {indexing_maps = [#id4, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%c1 : tensor<128x8x14x14xf32>) outs(%zc : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %n1_mean = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%n1_sum : tensor<8xf32>) outs(%ec : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.divf %v, %count : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %n1_sq = linalg.generic {indexing_maps = [#id4, #chan, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%c1, %n1_mean : tensor<128x8x14x14xf32>, tensor<8xf32>) outs(%zc : tensor<8xf32>) {
  ^bb0(%v: f32, %m: f32, %acc: f32):
    %d = arith.subf %v, %m : f32
    %d2 = arith.mulf %d, %d : f32
    %a = arith.addf %acc, %d2 : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %n1_var = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%n1_sq : tensor<8xf32>) outs(%ec : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.divf %v, %count : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %n1 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1, %n1_mean, %n1_var, %bn1_g, %bn1_b : tensor<128x8x14x14xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e4 : tensor<128x8x14x14xf32>) {
  ^bb0(%v: f32, %m: f32, %var: f32, %gamma: f32, %beta: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %y = arith.addf %s, %beta : f32
    linalg.yield %y : f32
  } -> tensor<128x8x14x14xf32>
  %r1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%n1 : tensor<128x8x14x14xf32>) outs(%e4 : tensor<128x8x14x14xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<128x8x14x14xf32>
  %c2_pad = tensor.pad %r1 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x8x14x14xf32> to tensor<128x8x16x16xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%c2_pad, %conv2_w : tensor<128x8x16x16xf32>, tensor<8x8x3x3xf32>) outs(%z4 : tensor<128x8x14x14xf32>) -> tensor<128x8x14x14xf32>
  // n2: batch norm in training mode (batch statistics), as torch-mlir
  // decomposes aten.native_batch_norm: mean, biased variance, normalize.
  %n2_sum = linalg.generic {indexing_maps = [#id4, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%c2 : tensor<128x8x14x14xf32>) outs(%zc : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %n2_mean = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%n2_sum : tensor<8xf32>) outs(%ec : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.divf %v, %count : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %n2_sq = linalg.generic {indexing_maps = [#id4, #chan, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%c2, %n2_mean : tensor<128x8x14x14xf32>, tensor<8xf32>) outs(%zc : tensor<8xf32>) {
  ^bb0(%v: f32, %m: f32, %acc: f32):
    %d = arith.subf %v, %m : f32
    %d2 = arith.mulf %d, %d : f32
    %a = arith.addf %acc, %d2 : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %n2_var = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%n2_sq : tensor<8xf32>) outs(%ec : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.divf %v, %count : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %n2 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c2, %n2_mean, %n2_var, %bn2_g, %bn2_b : tensor<128x8x14x14xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e4 : tensor<128x8x14x14xf32>) {
  ^bb0(%v: f32, %m: f32, %var: f32, %gamma: f32, %beta: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %y = arith.addf %s, %beta : f32
    linalg.yield %y : f32
  } -> tensor<128x8x14x14xf32>
  // skip connection, relu, global sum pooling
  %res = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%n2, %stem : tensor<128x8x14x14xf32>, tensor<128x8x14x14xf32>) outs(%e4 : tensor<128x8x14x14xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<128x8x14x14xf32>
  %r2 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%res : tensor<128x8x14x14xf32>) outs(%e4 : tensor<128x8x14x14xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<128x8x14x14xf32>
  %pe = tensor.empty() : tensor<128x8xf32>
  %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<128x8xf32>) -> tensor<128x8xf32>
  %pooled = linalg.generic {indexing_maps = [#id4, #pool], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%r2 : tensor<128x8x14x14xf32>) outs(%pz : tensor<128x8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<128x8xf32>

  // fc: 8 -> 10
  %fc_wt_init = tensor.empty() : tensor<8x10xf32>
  %fc_wt = linalg.transpose ins(%fc_w : tensor<10x8xf32>) outs(%fc_wt_init : tensor<8x10xf32>) permutation = [1, 0]
  %l_init = tensor.empty() : tensor<128x10xf32>
  %l_bias = linalg.generic {indexing_maps = [affine_map<(n, f) -> (f)>, affine_map<(n, f) -> (n, f)>], iterator_types = ["parallel", "parallel"]}
      ins(%fc_b : tensor<10xf32>) outs(%l_init : tensor<128x10xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x10xf32>
  %logits = linalg.matmul ins(%pooled, %fc_wt : tensor<128x8xf32>, tensor<8x10xf32>) outs(%l_bias : tensor<128x10xf32>) -> tensor<128x10xf32>
  return %logits : tensor<128x10xf32>
}
