// MobileNetV2-style inverted residual blocks (1x1 expand, 3x3 depthwise, 1x1 project), 3x32x32 inputs, batch 128, 10 classes.
// Written by examples/models/gen_models.py in the style of torch-mlir's
// linalg-on-tensors export of the eval-mode PyTorch model: batch norms
// read their running statistics as constants; qtrain-compile trains them
// with batch statistics (qtrain-train-batchnorm).

#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
#pool = affine_map<(n, c, h, w) -> (n, c)>
#id2 = affine_map<(n, k) -> (n, k)>
#bias2 = affine_map<(n, k) -> (k)>

func.func @forward(
    %stem_w: tensor<16x3x3x3xf32> {qtrain.param},
    %stem_bn_g: tensor<16xf32> {qtrain.param},
    %stem_bn_b: tensor<16xf32> {qtrain.param},
    %ir1_expand_w: tensor<16x16x1x1xf32> {qtrain.param},
    %ir1_bn1_g: tensor<16xf32> {qtrain.param},
    %ir1_bn1_b: tensor<16xf32> {qtrain.param},
    %ir1_dw_w: tensor<16x3x3xf32> {qtrain.param},
    %ir1_bn2_g: tensor<16xf32> {qtrain.param},
    %ir1_bn2_b: tensor<16xf32> {qtrain.param},
    %ir1_project_w: tensor<16x16x1x1xf32> {qtrain.param},
    %ir1_bn3_g: tensor<16xf32> {qtrain.param},
    %ir1_bn3_b: tensor<16xf32> {qtrain.param},
    %ir2_expand_w: tensor<96x16x1x1xf32> {qtrain.param},
    %ir2_bn1_g: tensor<96xf32> {qtrain.param},
    %ir2_bn1_b: tensor<96xf32> {qtrain.param},
    %ir2_dw_w: tensor<96x3x3xf32> {qtrain.param},
    %ir2_bn2_g: tensor<96xf32> {qtrain.param},
    %ir2_bn2_b: tensor<96xf32> {qtrain.param},
    %ir2_project_w: tensor<24x96x1x1xf32> {qtrain.param},
    %ir2_bn3_g: tensor<24xf32> {qtrain.param},
    %ir2_bn3_b: tensor<24xf32> {qtrain.param},
    %ir3_expand_w: tensor<144x24x1x1xf32> {qtrain.param},
    %ir3_bn1_g: tensor<144xf32> {qtrain.param},
    %ir3_bn1_b: tensor<144xf32> {qtrain.param},
    %ir3_dw_w: tensor<144x3x3xf32> {qtrain.param},
    %ir3_bn2_g: tensor<144xf32> {qtrain.param},
    %ir3_bn2_b: tensor<144xf32> {qtrain.param},
    %ir3_project_w: tensor<24x144x1x1xf32> {qtrain.param},
    %ir3_bn3_g: tensor<24xf32> {qtrain.param},
    %ir3_bn3_b: tensor<24xf32> {qtrain.param},
    %ir4_expand_w: tensor<144x24x1x1xf32> {qtrain.param},
    %ir4_bn1_g: tensor<144xf32> {qtrain.param},
    %ir4_bn1_b: tensor<144xf32> {qtrain.param},
    %ir4_dw_w: tensor<144x3x3xf32> {qtrain.param},
    %ir4_bn2_g: tensor<144xf32> {qtrain.param},
    %ir4_bn2_b: tensor<144xf32> {qtrain.param},
    %ir4_project_w: tensor<32x144x1x1xf32> {qtrain.param},
    %ir4_bn3_g: tensor<32xf32> {qtrain.param},
    %ir4_bn3_b: tensor<32xf32> {qtrain.param},
    %ir5_expand_w: tensor<192x32x1x1xf32> {qtrain.param},
    %ir5_bn1_g: tensor<192xf32> {qtrain.param},
    %ir5_bn1_b: tensor<192xf32> {qtrain.param},
    %ir5_dw_w: tensor<192x3x3xf32> {qtrain.param},
    %ir5_bn2_g: tensor<192xf32> {qtrain.param},
    %ir5_bn2_b: tensor<192xf32> {qtrain.param},
    %ir5_project_w: tensor<32x192x1x1xf32> {qtrain.param},
    %ir5_bn3_g: tensor<32xf32> {qtrain.param},
    %ir5_bn3_b: tensor<32xf32> {qtrain.param},
    %fc_w: tensor<10x32xf32> {qtrain.param},
    %fc_b: tensor<10xf32> {qtrain.param},
    %x: tensor<128x3x32x32xf32>) -> tensor<128x10xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %six = arith.constant 6.000000e+00 : f32
  %eps = arith.constant 1.000000e-05 : f64
  %pad1 = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x3x32x32xf32> to tensor<128x3x34x34xf32>
  %e2 = tensor.empty() : tensor<128x16x32x32xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %conv4 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad1, %stem_w : tensor<128x3x34x34xf32>, tensor<16x3x3x3xf32>) outs(%z3 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %rm5 = arith.constant dense<0.000000e+00> : tensor<16xf32>
  %rv6 = arith.constant dense<1.000000e+00> : tensor<16xf32>
  %e7 = tensor.empty() : tensor<128x16x32x32xf32>
  %bn8 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv4, %stem_bn_g, %stem_bn_b, %rm5, %rv6 : tensor<128x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e7 : tensor<128x16x32x32xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x16x32x32xf32>
  %e9 = tensor.empty() : tensor<128x16x32x32xf32>
  %relu610 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn8 : tensor<128x16x32x32xf32>) outs(%e9 : tensor<128x16x32x32xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    %r6 = arith.minimumf %r, %six : f32
    linalg.yield %r6 : f32
  } -> tensor<128x16x32x32xf32>
  %e11 = tensor.empty() : tensor<128x16x32x32xf32>
  %z12 = linalg.fill ins(%zero : f32) outs(%e11 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %conv13 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%relu610, %ir1_expand_w : tensor<128x16x32x32xf32>, tensor<16x16x1x1xf32>) outs(%z12 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %rm14 = arith.constant dense<0.000000e+00> : tensor<16xf32>
  %rv15 = arith.constant dense<1.000000e+00> : tensor<16xf32>
  %e16 = tensor.empty() : tensor<128x16x32x32xf32>
  %bn17 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv13, %ir1_bn1_g, %ir1_bn1_b, %rm14, %rv15 : tensor<128x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e16 : tensor<128x16x32x32xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x16x32x32xf32>
  %e18 = tensor.empty() : tensor<128x16x32x32xf32>
  %relu619 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn17 : tensor<128x16x32x32xf32>) outs(%e18 : tensor<128x16x32x32xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    %r6 = arith.minimumf %r, %six : f32
    linalg.yield %r6 : f32
  } -> tensor<128x16x32x32xf32>
  %pad20 = tensor.pad %relu619 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x16x32x32xf32> to tensor<128x16x34x34xf32>
  %e21 = tensor.empty() : tensor<128x16x32x32xf32>
  %z22 = linalg.fill ins(%zero : f32) outs(%e21 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %conv23 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad20, %ir1_dw_w : tensor<128x16x34x34xf32>, tensor<16x3x3xf32>) outs(%z22 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %rm24 = arith.constant dense<0.000000e+00> : tensor<16xf32>
  %rv25 = arith.constant dense<1.000000e+00> : tensor<16xf32>
  %e26 = tensor.empty() : tensor<128x16x32x32xf32>
  %bn27 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv23, %ir1_bn2_g, %ir1_bn2_b, %rm24, %rv25 : tensor<128x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e26 : tensor<128x16x32x32xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x16x32x32xf32>
  %e28 = tensor.empty() : tensor<128x16x32x32xf32>
  %relu629 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn27 : tensor<128x16x32x32xf32>) outs(%e28 : tensor<128x16x32x32xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    %r6 = arith.minimumf %r, %six : f32
    linalg.yield %r6 : f32
  } -> tensor<128x16x32x32xf32>
  %e30 = tensor.empty() : tensor<128x16x32x32xf32>
  %z31 = linalg.fill ins(%zero : f32) outs(%e30 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %conv32 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%relu629, %ir1_project_w : tensor<128x16x32x32xf32>, tensor<16x16x1x1xf32>) outs(%z31 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %rm33 = arith.constant dense<0.000000e+00> : tensor<16xf32>
  %rv34 = arith.constant dense<1.000000e+00> : tensor<16xf32>
  %e35 = tensor.empty() : tensor<128x16x32x32xf32>
  %bn36 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv32, %ir1_bn3_g, %ir1_bn3_b, %rm33, %rv34 : tensor<128x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e35 : tensor<128x16x32x32xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x16x32x32xf32>
  %e37 = tensor.empty() : tensor<128x16x32x32xf32>
  %add38 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn36, %relu610 : tensor<128x16x32x32xf32>, tensor<128x16x32x32xf32>) outs(%e37 : tensor<128x16x32x32xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<128x16x32x32xf32>
  %e39 = tensor.empty() : tensor<128x96x32x32xf32>
  %z40 = linalg.fill ins(%zero : f32) outs(%e39 : tensor<128x96x32x32xf32>) -> tensor<128x96x32x32xf32>
  %conv41 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%add38, %ir2_expand_w : tensor<128x16x32x32xf32>, tensor<96x16x1x1xf32>) outs(%z40 : tensor<128x96x32x32xf32>) -> tensor<128x96x32x32xf32>
  %rm42 = arith.constant dense<0.000000e+00> : tensor<96xf32>
  %rv43 = arith.constant dense<1.000000e+00> : tensor<96xf32>
  %e44 = tensor.empty() : tensor<128x96x32x32xf32>
  %bn45 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv41, %ir2_bn1_g, %ir2_bn1_b, %rm42, %rv43 : tensor<128x96x32x32xf32>, tensor<96xf32>, tensor<96xf32>, tensor<96xf32>, tensor<96xf32>) outs(%e44 : tensor<128x96x32x32xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x96x32x32xf32>
  %e46 = tensor.empty() : tensor<128x96x32x32xf32>
  %relu647 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn45 : tensor<128x96x32x32xf32>) outs(%e46 : tensor<128x96x32x32xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    %r6 = arith.minimumf %r, %six : f32
    linalg.yield %r6 : f32
  } -> tensor<128x96x32x32xf32>
  %pad48 = tensor.pad %relu647 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x96x32x32xf32> to tensor<128x96x34x34xf32>
  %e49 = tensor.empty() : tensor<128x96x16x16xf32>
  %z50 = linalg.fill ins(%zero : f32) outs(%e49 : tensor<128x96x16x16xf32>) -> tensor<128x96x16x16xf32>
  %conv51 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%pad48, %ir2_dw_w : tensor<128x96x34x34xf32>, tensor<96x3x3xf32>) outs(%z50 : tensor<128x96x16x16xf32>) -> tensor<128x96x16x16xf32>
  %rm52 = arith.constant dense<0.000000e+00> : tensor<96xf32>
  %rv53 = arith.constant dense<1.000000e+00> : tensor<96xf32>
  %e54 = tensor.empty() : tensor<128x96x16x16xf32>
  %bn55 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv51, %ir2_bn2_g, %ir2_bn2_b, %rm52, %rv53 : tensor<128x96x16x16xf32>, tensor<96xf32>, tensor<96xf32>, tensor<96xf32>, tensor<96xf32>) outs(%e54 : tensor<128x96x16x16xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x96x16x16xf32>
  %e56 = tensor.empty() : tensor<128x96x16x16xf32>
  %relu657 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn55 : tensor<128x96x16x16xf32>) outs(%e56 : tensor<128x96x16x16xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    %r6 = arith.minimumf %r, %six : f32
    linalg.yield %r6 : f32
  } -> tensor<128x96x16x16xf32>
  %e58 = tensor.empty() : tensor<128x24x16x16xf32>
  %z59 = linalg.fill ins(%zero : f32) outs(%e58 : tensor<128x24x16x16xf32>) -> tensor<128x24x16x16xf32>
  %conv60 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%relu657, %ir2_project_w : tensor<128x96x16x16xf32>, tensor<24x96x1x1xf32>) outs(%z59 : tensor<128x24x16x16xf32>) -> tensor<128x24x16x16xf32>
  %rm61 = arith.constant dense<0.000000e+00> : tensor<24xf32>
  %rv62 = arith.constant dense<1.000000e+00> : tensor<24xf32>
  %e63 = tensor.empty() : tensor<128x24x16x16xf32>
  %bn64 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv60, %ir2_bn3_g, %ir2_bn3_b, %rm61, %rv62 : tensor<128x24x16x16xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>) outs(%e63 : tensor<128x24x16x16xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x24x16x16xf32>
  %e65 = tensor.empty() : tensor<128x144x16x16xf32>
  %z66 = linalg.fill ins(%zero : f32) outs(%e65 : tensor<128x144x16x16xf32>) -> tensor<128x144x16x16xf32>
  %conv67 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%bn64, %ir3_expand_w : tensor<128x24x16x16xf32>, tensor<144x24x1x1xf32>) outs(%z66 : tensor<128x144x16x16xf32>) -> tensor<128x144x16x16xf32>
  %rm68 = arith.constant dense<0.000000e+00> : tensor<144xf32>
  %rv69 = arith.constant dense<1.000000e+00> : tensor<144xf32>
  %e70 = tensor.empty() : tensor<128x144x16x16xf32>
  %bn71 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv67, %ir3_bn1_g, %ir3_bn1_b, %rm68, %rv69 : tensor<128x144x16x16xf32>, tensor<144xf32>, tensor<144xf32>, tensor<144xf32>, tensor<144xf32>) outs(%e70 : tensor<128x144x16x16xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x144x16x16xf32>
  %e72 = tensor.empty() : tensor<128x144x16x16xf32>
  %relu673 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn71 : tensor<128x144x16x16xf32>) outs(%e72 : tensor<128x144x16x16xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    %r6 = arith.minimumf %r, %six : f32
    linalg.yield %r6 : f32
  } -> tensor<128x144x16x16xf32>
  %pad74 = tensor.pad %relu673 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x144x16x16xf32> to tensor<128x144x18x18xf32>
  %e75 = tensor.empty() : tensor<128x144x16x16xf32>
  %z76 = linalg.fill ins(%zero : f32) outs(%e75 : tensor<128x144x16x16xf32>) -> tensor<128x144x16x16xf32>
  %conv77 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad74, %ir3_dw_w : tensor<128x144x18x18xf32>, tensor<144x3x3xf32>) outs(%z76 : tensor<128x144x16x16xf32>) -> tensor<128x144x16x16xf32>
  %rm78 = arith.constant dense<0.000000e+00> : tensor<144xf32>
  %rv79 = arith.constant dense<1.000000e+00> : tensor<144xf32>
  %e80 = tensor.empty() : tensor<128x144x16x16xf32>
  %bn81 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv77, %ir3_bn2_g, %ir3_bn2_b, %rm78, %rv79 : tensor<128x144x16x16xf32>, tensor<144xf32>, tensor<144xf32>, tensor<144xf32>, tensor<144xf32>) outs(%e80 : tensor<128x144x16x16xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x144x16x16xf32>
  %e82 = tensor.empty() : tensor<128x144x16x16xf32>
  %relu683 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn81 : tensor<128x144x16x16xf32>) outs(%e82 : tensor<128x144x16x16xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    %r6 = arith.minimumf %r, %six : f32
    linalg.yield %r6 : f32
  } -> tensor<128x144x16x16xf32>
  %e84 = tensor.empty() : tensor<128x24x16x16xf32>
  %z85 = linalg.fill ins(%zero : f32) outs(%e84 : tensor<128x24x16x16xf32>) -> tensor<128x24x16x16xf32>
  %conv86 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%relu683, %ir3_project_w : tensor<128x144x16x16xf32>, tensor<24x144x1x1xf32>) outs(%z85 : tensor<128x24x16x16xf32>) -> tensor<128x24x16x16xf32>
  %rm87 = arith.constant dense<0.000000e+00> : tensor<24xf32>
  %rv88 = arith.constant dense<1.000000e+00> : tensor<24xf32>
  %e89 = tensor.empty() : tensor<128x24x16x16xf32>
  %bn90 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv86, %ir3_bn3_g, %ir3_bn3_b, %rm87, %rv88 : tensor<128x24x16x16xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>) outs(%e89 : tensor<128x24x16x16xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x24x16x16xf32>
  %e91 = tensor.empty() : tensor<128x24x16x16xf32>
  %add92 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn90, %bn64 : tensor<128x24x16x16xf32>, tensor<128x24x16x16xf32>) outs(%e91 : tensor<128x24x16x16xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<128x24x16x16xf32>
  %e93 = tensor.empty() : tensor<128x144x16x16xf32>
  %z94 = linalg.fill ins(%zero : f32) outs(%e93 : tensor<128x144x16x16xf32>) -> tensor<128x144x16x16xf32>
  %conv95 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%add92, %ir4_expand_w : tensor<128x24x16x16xf32>, tensor<144x24x1x1xf32>) outs(%z94 : tensor<128x144x16x16xf32>) -> tensor<128x144x16x16xf32>
  %rm96 = arith.constant dense<0.000000e+00> : tensor<144xf32>
  %rv97 = arith.constant dense<1.000000e+00> : tensor<144xf32>
  %e98 = tensor.empty() : tensor<128x144x16x16xf32>
  %bn99 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv95, %ir4_bn1_g, %ir4_bn1_b, %rm96, %rv97 : tensor<128x144x16x16xf32>, tensor<144xf32>, tensor<144xf32>, tensor<144xf32>, tensor<144xf32>) outs(%e98 : tensor<128x144x16x16xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x144x16x16xf32>
  %e100 = tensor.empty() : tensor<128x144x16x16xf32>
  %relu6101 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn99 : tensor<128x144x16x16xf32>) outs(%e100 : tensor<128x144x16x16xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    %r6 = arith.minimumf %r, %six : f32
    linalg.yield %r6 : f32
  } -> tensor<128x144x16x16xf32>
  %pad102 = tensor.pad %relu6101 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x144x16x16xf32> to tensor<128x144x18x18xf32>
  %e103 = tensor.empty() : tensor<128x144x8x8xf32>
  %z104 = linalg.fill ins(%zero : f32) outs(%e103 : tensor<128x144x8x8xf32>) -> tensor<128x144x8x8xf32>
  %conv105 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%pad102, %ir4_dw_w : tensor<128x144x18x18xf32>, tensor<144x3x3xf32>) outs(%z104 : tensor<128x144x8x8xf32>) -> tensor<128x144x8x8xf32>
  %rm106 = arith.constant dense<0.000000e+00> : tensor<144xf32>
  %rv107 = arith.constant dense<1.000000e+00> : tensor<144xf32>
  %e108 = tensor.empty() : tensor<128x144x8x8xf32>
  %bn109 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv105, %ir4_bn2_g, %ir4_bn2_b, %rm106, %rv107 : tensor<128x144x8x8xf32>, tensor<144xf32>, tensor<144xf32>, tensor<144xf32>, tensor<144xf32>) outs(%e108 : tensor<128x144x8x8xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x144x8x8xf32>
  %e110 = tensor.empty() : tensor<128x144x8x8xf32>
  %relu6111 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn109 : tensor<128x144x8x8xf32>) outs(%e110 : tensor<128x144x8x8xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    %r6 = arith.minimumf %r, %six : f32
    linalg.yield %r6 : f32
  } -> tensor<128x144x8x8xf32>
  %e112 = tensor.empty() : tensor<128x32x8x8xf32>
  %z113 = linalg.fill ins(%zero : f32) outs(%e112 : tensor<128x32x8x8xf32>) -> tensor<128x32x8x8xf32>
  %conv114 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%relu6111, %ir4_project_w : tensor<128x144x8x8xf32>, tensor<32x144x1x1xf32>) outs(%z113 : tensor<128x32x8x8xf32>) -> tensor<128x32x8x8xf32>
  %rm115 = arith.constant dense<0.000000e+00> : tensor<32xf32>
  %rv116 = arith.constant dense<1.000000e+00> : tensor<32xf32>
  %e117 = tensor.empty() : tensor<128x32x8x8xf32>
  %bn118 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv114, %ir4_bn3_g, %ir4_bn3_b, %rm115, %rv116 : tensor<128x32x8x8xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e117 : tensor<128x32x8x8xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x32x8x8xf32>
  %e119 = tensor.empty() : tensor<128x192x8x8xf32>
  %z120 = linalg.fill ins(%zero : f32) outs(%e119 : tensor<128x192x8x8xf32>) -> tensor<128x192x8x8xf32>
  %conv121 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%bn118, %ir5_expand_w : tensor<128x32x8x8xf32>, tensor<192x32x1x1xf32>) outs(%z120 : tensor<128x192x8x8xf32>) -> tensor<128x192x8x8xf32>
  %rm122 = arith.constant dense<0.000000e+00> : tensor<192xf32>
  %rv123 = arith.constant dense<1.000000e+00> : tensor<192xf32>
  %e124 = tensor.empty() : tensor<128x192x8x8xf32>
  %bn125 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv121, %ir5_bn1_g, %ir5_bn1_b, %rm122, %rv123 : tensor<128x192x8x8xf32>, tensor<192xf32>, tensor<192xf32>, tensor<192xf32>, tensor<192xf32>) outs(%e124 : tensor<128x192x8x8xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x192x8x8xf32>
  %e126 = tensor.empty() : tensor<128x192x8x8xf32>
  %relu6127 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn125 : tensor<128x192x8x8xf32>) outs(%e126 : tensor<128x192x8x8xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    %r6 = arith.minimumf %r, %six : f32
    linalg.yield %r6 : f32
  } -> tensor<128x192x8x8xf32>
  %pad128 = tensor.pad %relu6127 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x192x8x8xf32> to tensor<128x192x10x10xf32>
  %e129 = tensor.empty() : tensor<128x192x8x8xf32>
  %z130 = linalg.fill ins(%zero : f32) outs(%e129 : tensor<128x192x8x8xf32>) -> tensor<128x192x8x8xf32>
  %conv131 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad128, %ir5_dw_w : tensor<128x192x10x10xf32>, tensor<192x3x3xf32>) outs(%z130 : tensor<128x192x8x8xf32>) -> tensor<128x192x8x8xf32>
  %rm132 = arith.constant dense<0.000000e+00> : tensor<192xf32>
  %rv133 = arith.constant dense<1.000000e+00> : tensor<192xf32>
  %e134 = tensor.empty() : tensor<128x192x8x8xf32>
  %bn135 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv131, %ir5_bn2_g, %ir5_bn2_b, %rm132, %rv133 : tensor<128x192x8x8xf32>, tensor<192xf32>, tensor<192xf32>, tensor<192xf32>, tensor<192xf32>) outs(%e134 : tensor<128x192x8x8xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x192x8x8xf32>
  %e136 = tensor.empty() : tensor<128x192x8x8xf32>
  %relu6137 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn135 : tensor<128x192x8x8xf32>) outs(%e136 : tensor<128x192x8x8xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    %r6 = arith.minimumf %r, %six : f32
    linalg.yield %r6 : f32
  } -> tensor<128x192x8x8xf32>
  %e138 = tensor.empty() : tensor<128x32x8x8xf32>
  %z139 = linalg.fill ins(%zero : f32) outs(%e138 : tensor<128x32x8x8xf32>) -> tensor<128x32x8x8xf32>
  %conv140 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%relu6137, %ir5_project_w : tensor<128x192x8x8xf32>, tensor<32x192x1x1xf32>) outs(%z139 : tensor<128x32x8x8xf32>) -> tensor<128x32x8x8xf32>
  %rm141 = arith.constant dense<0.000000e+00> : tensor<32xf32>
  %rv142 = arith.constant dense<1.000000e+00> : tensor<32xf32>
  %e143 = tensor.empty() : tensor<128x32x8x8xf32>
  %bn144 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv140, %ir5_bn3_g, %ir5_bn3_b, %rm141, %rv142 : tensor<128x32x8x8xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e143 : tensor<128x32x8x8xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x32x8x8xf32>
  %e145 = tensor.empty() : tensor<128x32x8x8xf32>
  %add146 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn144, %bn118 : tensor<128x32x8x8xf32>, tensor<128x32x8x8xf32>) outs(%e145 : tensor<128x32x8x8xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<128x32x8x8xf32>
  %e147 = tensor.empty() : tensor<128x32xf32>
  %z148 = linalg.fill ins(%zero : f32) outs(%e147 : tensor<128x32xf32>) -> tensor<128x32xf32>
  %sum149 = linalg.generic {indexing_maps = [#id4, #pool], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%add146 : tensor<128x32x8x8xf32>) outs(%z148 : tensor<128x32xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<128x32xf32>
  %e150 = tensor.empty() : tensor<128x32xf32>
  %avg151 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%sum149 : tensor<128x32xf32>) outs(%e150 : tensor<128x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.constant 6.400000e+01 : f32
    %a = arith.divf %v, %n : f32
    linalg.yield %a : f32
  } -> tensor<128x32xf32>
  %e152 = tensor.empty() : tensor<32x10xf32>
  %wt153 = linalg.transpose ins(%fc_w : tensor<10x32xf32>) outs(%e152 : tensor<32x10xf32>) permutation = [1, 0]
  %e154 = tensor.empty() : tensor<128x10xf32>
  %bias155 = linalg.generic {indexing_maps = [#bias2, #id2], iterator_types = ["parallel", "parallel"]} ins(%fc_b : tensor<10xf32>) outs(%e154 : tensor<128x10xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x10xf32>
  %logits156 = linalg.matmul ins(%avg151, %wt153 : tensor<128x32xf32>, tensor<32x10xf32>) outs(%bias155 : tensor<128x10xf32>) -> tensor<128x10xf32>
  return %logits156 : tensor<128x10xf32>
}
