// CIFAR ResNet-20 (He et al.; LDP and CPT train it on CIFAR-10), 3x32x32 inputs, batch 128, 10 classes.
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
    %s1b1_conv1_w: tensor<16x16x3x3xf32> {qtrain.param},
    %s1b1_bn1_g: tensor<16xf32> {qtrain.param},
    %s1b1_bn1_b: tensor<16xf32> {qtrain.param},
    %s1b1_conv2_w: tensor<16x16x3x3xf32> {qtrain.param},
    %s1b1_bn2_g: tensor<16xf32> {qtrain.param},
    %s1b1_bn2_b: tensor<16xf32> {qtrain.param},
    %s1b2_conv1_w: tensor<16x16x3x3xf32> {qtrain.param},
    %s1b2_bn1_g: tensor<16xf32> {qtrain.param},
    %s1b2_bn1_b: tensor<16xf32> {qtrain.param},
    %s1b2_conv2_w: tensor<16x16x3x3xf32> {qtrain.param},
    %s1b2_bn2_g: tensor<16xf32> {qtrain.param},
    %s1b2_bn2_b: tensor<16xf32> {qtrain.param},
    %s1b3_conv1_w: tensor<16x16x3x3xf32> {qtrain.param},
    %s1b3_bn1_g: tensor<16xf32> {qtrain.param},
    %s1b3_bn1_b: tensor<16xf32> {qtrain.param},
    %s1b3_conv2_w: tensor<16x16x3x3xf32> {qtrain.param},
    %s1b3_bn2_g: tensor<16xf32> {qtrain.param},
    %s1b3_bn2_b: tensor<16xf32> {qtrain.param},
    %s2b1_conv1_w: tensor<32x16x3x3xf32> {qtrain.param},
    %s2b1_bn1_g: tensor<32xf32> {qtrain.param},
    %s2b1_bn1_b: tensor<32xf32> {qtrain.param},
    %s2b1_conv2_w: tensor<32x32x3x3xf32> {qtrain.param},
    %s2b1_bn2_g: tensor<32xf32> {qtrain.param},
    %s2b1_bn2_b: tensor<32xf32> {qtrain.param},
    %s2b1_down_w: tensor<32x16x1x1xf32> {qtrain.param},
    %s2b1_down_bn_g: tensor<32xf32> {qtrain.param},
    %s2b1_down_bn_b: tensor<32xf32> {qtrain.param},
    %s2b2_conv1_w: tensor<32x32x3x3xf32> {qtrain.param},
    %s2b2_bn1_g: tensor<32xf32> {qtrain.param},
    %s2b2_bn1_b: tensor<32xf32> {qtrain.param},
    %s2b2_conv2_w: tensor<32x32x3x3xf32> {qtrain.param},
    %s2b2_bn2_g: tensor<32xf32> {qtrain.param},
    %s2b2_bn2_b: tensor<32xf32> {qtrain.param},
    %s2b3_conv1_w: tensor<32x32x3x3xf32> {qtrain.param},
    %s2b3_bn1_g: tensor<32xf32> {qtrain.param},
    %s2b3_bn1_b: tensor<32xf32> {qtrain.param},
    %s2b3_conv2_w: tensor<32x32x3x3xf32> {qtrain.param},
    %s2b3_bn2_g: tensor<32xf32> {qtrain.param},
    %s2b3_bn2_b: tensor<32xf32> {qtrain.param},
    %s3b1_conv1_w: tensor<64x32x3x3xf32> {qtrain.param},
    %s3b1_bn1_g: tensor<64xf32> {qtrain.param},
    %s3b1_bn1_b: tensor<64xf32> {qtrain.param},
    %s3b1_conv2_w: tensor<64x64x3x3xf32> {qtrain.param},
    %s3b1_bn2_g: tensor<64xf32> {qtrain.param},
    %s3b1_bn2_b: tensor<64xf32> {qtrain.param},
    %s3b1_down_w: tensor<64x32x1x1xf32> {qtrain.param},
    %s3b1_down_bn_g: tensor<64xf32> {qtrain.param},
    %s3b1_down_bn_b: tensor<64xf32> {qtrain.param},
    %s3b2_conv1_w: tensor<64x64x3x3xf32> {qtrain.param},
    %s3b2_bn1_g: tensor<64xf32> {qtrain.param},
    %s3b2_bn1_b: tensor<64xf32> {qtrain.param},
    %s3b2_conv2_w: tensor<64x64x3x3xf32> {qtrain.param},
    %s3b2_bn2_g: tensor<64xf32> {qtrain.param},
    %s3b2_bn2_b: tensor<64xf32> {qtrain.param},
    %s3b3_conv1_w: tensor<64x64x3x3xf32> {qtrain.param},
    %s3b3_bn1_g: tensor<64xf32> {qtrain.param},
    %s3b3_bn1_b: tensor<64xf32> {qtrain.param},
    %s3b3_conv2_w: tensor<64x64x3x3xf32> {qtrain.param},
    %s3b3_bn2_g: tensor<64xf32> {qtrain.param},
    %s3b3_bn2_b: tensor<64xf32> {qtrain.param},
    %fc_w: tensor<10x64xf32> {qtrain.param},
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
  %relu10 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn8 : tensor<128x16x32x32xf32>) outs(%e9 : tensor<128x16x32x32xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x16x32x32xf32>
  %pad11 = tensor.pad %relu10 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x16x32x32xf32> to tensor<128x16x34x34xf32>
  %e12 = tensor.empty() : tensor<128x16x32x32xf32>
  %z13 = linalg.fill ins(%zero : f32) outs(%e12 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %conv14 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad11, %s1b1_conv1_w : tensor<128x16x34x34xf32>, tensor<16x16x3x3xf32>) outs(%z13 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %rm15 = arith.constant dense<0.000000e+00> : tensor<16xf32>
  %rv16 = arith.constant dense<1.000000e+00> : tensor<16xf32>
  %e17 = tensor.empty() : tensor<128x16x32x32xf32>
  %bn18 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv14, %s1b1_bn1_g, %s1b1_bn1_b, %rm15, %rv16 : tensor<128x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e17 : tensor<128x16x32x32xf32>) {
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
  %e19 = tensor.empty() : tensor<128x16x32x32xf32>
  %relu20 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn18 : tensor<128x16x32x32xf32>) outs(%e19 : tensor<128x16x32x32xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x16x32x32xf32>
  %pad21 = tensor.pad %relu20 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x16x32x32xf32> to tensor<128x16x34x34xf32>
  %e22 = tensor.empty() : tensor<128x16x32x32xf32>
  %z23 = linalg.fill ins(%zero : f32) outs(%e22 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %conv24 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad21, %s1b1_conv2_w : tensor<128x16x34x34xf32>, tensor<16x16x3x3xf32>) outs(%z23 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %rm25 = arith.constant dense<0.000000e+00> : tensor<16xf32>
  %rv26 = arith.constant dense<1.000000e+00> : tensor<16xf32>
  %e27 = tensor.empty() : tensor<128x16x32x32xf32>
  %bn28 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv24, %s1b1_bn2_g, %s1b1_bn2_b, %rm25, %rv26 : tensor<128x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e27 : tensor<128x16x32x32xf32>) {
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
  %e29 = tensor.empty() : tensor<128x16x32x32xf32>
  %add30 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn28, %relu10 : tensor<128x16x32x32xf32>, tensor<128x16x32x32xf32>) outs(%e29 : tensor<128x16x32x32xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<128x16x32x32xf32>
  %e31 = tensor.empty() : tensor<128x16x32x32xf32>
  %relu32 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%add30 : tensor<128x16x32x32xf32>) outs(%e31 : tensor<128x16x32x32xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x16x32x32xf32>
  %pad33 = tensor.pad %relu32 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x16x32x32xf32> to tensor<128x16x34x34xf32>
  %e34 = tensor.empty() : tensor<128x16x32x32xf32>
  %z35 = linalg.fill ins(%zero : f32) outs(%e34 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %conv36 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad33, %s1b2_conv1_w : tensor<128x16x34x34xf32>, tensor<16x16x3x3xf32>) outs(%z35 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %rm37 = arith.constant dense<0.000000e+00> : tensor<16xf32>
  %rv38 = arith.constant dense<1.000000e+00> : tensor<16xf32>
  %e39 = tensor.empty() : tensor<128x16x32x32xf32>
  %bn40 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv36, %s1b2_bn1_g, %s1b2_bn1_b, %rm37, %rv38 : tensor<128x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e39 : tensor<128x16x32x32xf32>) {
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
  %e41 = tensor.empty() : tensor<128x16x32x32xf32>
  %relu42 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn40 : tensor<128x16x32x32xf32>) outs(%e41 : tensor<128x16x32x32xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x16x32x32xf32>
  %pad43 = tensor.pad %relu42 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x16x32x32xf32> to tensor<128x16x34x34xf32>
  %e44 = tensor.empty() : tensor<128x16x32x32xf32>
  %z45 = linalg.fill ins(%zero : f32) outs(%e44 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %conv46 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad43, %s1b2_conv2_w : tensor<128x16x34x34xf32>, tensor<16x16x3x3xf32>) outs(%z45 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %rm47 = arith.constant dense<0.000000e+00> : tensor<16xf32>
  %rv48 = arith.constant dense<1.000000e+00> : tensor<16xf32>
  %e49 = tensor.empty() : tensor<128x16x32x32xf32>
  %bn50 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv46, %s1b2_bn2_g, %s1b2_bn2_b, %rm47, %rv48 : tensor<128x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e49 : tensor<128x16x32x32xf32>) {
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
  %e51 = tensor.empty() : tensor<128x16x32x32xf32>
  %add52 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn50, %relu32 : tensor<128x16x32x32xf32>, tensor<128x16x32x32xf32>) outs(%e51 : tensor<128x16x32x32xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<128x16x32x32xf32>
  %e53 = tensor.empty() : tensor<128x16x32x32xf32>
  %relu54 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%add52 : tensor<128x16x32x32xf32>) outs(%e53 : tensor<128x16x32x32xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x16x32x32xf32>
  %pad55 = tensor.pad %relu54 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x16x32x32xf32> to tensor<128x16x34x34xf32>
  %e56 = tensor.empty() : tensor<128x16x32x32xf32>
  %z57 = linalg.fill ins(%zero : f32) outs(%e56 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %conv58 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad55, %s1b3_conv1_w : tensor<128x16x34x34xf32>, tensor<16x16x3x3xf32>) outs(%z57 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %rm59 = arith.constant dense<0.000000e+00> : tensor<16xf32>
  %rv60 = arith.constant dense<1.000000e+00> : tensor<16xf32>
  %e61 = tensor.empty() : tensor<128x16x32x32xf32>
  %bn62 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv58, %s1b3_bn1_g, %s1b3_bn1_b, %rm59, %rv60 : tensor<128x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e61 : tensor<128x16x32x32xf32>) {
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
  %e63 = tensor.empty() : tensor<128x16x32x32xf32>
  %relu64 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn62 : tensor<128x16x32x32xf32>) outs(%e63 : tensor<128x16x32x32xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x16x32x32xf32>
  %pad65 = tensor.pad %relu64 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x16x32x32xf32> to tensor<128x16x34x34xf32>
  %e66 = tensor.empty() : tensor<128x16x32x32xf32>
  %z67 = linalg.fill ins(%zero : f32) outs(%e66 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %conv68 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad65, %s1b3_conv2_w : tensor<128x16x34x34xf32>, tensor<16x16x3x3xf32>) outs(%z67 : tensor<128x16x32x32xf32>) -> tensor<128x16x32x32xf32>
  %rm69 = arith.constant dense<0.000000e+00> : tensor<16xf32>
  %rv70 = arith.constant dense<1.000000e+00> : tensor<16xf32>
  %e71 = tensor.empty() : tensor<128x16x32x32xf32>
  %bn72 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv68, %s1b3_bn2_g, %s1b3_bn2_b, %rm69, %rv70 : tensor<128x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e71 : tensor<128x16x32x32xf32>) {
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
  %e73 = tensor.empty() : tensor<128x16x32x32xf32>
  %add74 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn72, %relu54 : tensor<128x16x32x32xf32>, tensor<128x16x32x32xf32>) outs(%e73 : tensor<128x16x32x32xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<128x16x32x32xf32>
  %e75 = tensor.empty() : tensor<128x16x32x32xf32>
  %relu76 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%add74 : tensor<128x16x32x32xf32>) outs(%e75 : tensor<128x16x32x32xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x16x32x32xf32>
  %pad77 = tensor.pad %relu76 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x16x32x32xf32> to tensor<128x16x34x34xf32>
  %e78 = tensor.empty() : tensor<128x32x16x16xf32>
  %z79 = linalg.fill ins(%zero : f32) outs(%e78 : tensor<128x32x16x16xf32>) -> tensor<128x32x16x16xf32>
  %conv80 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%pad77, %s2b1_conv1_w : tensor<128x16x34x34xf32>, tensor<32x16x3x3xf32>) outs(%z79 : tensor<128x32x16x16xf32>) -> tensor<128x32x16x16xf32>
  %rm81 = arith.constant dense<0.000000e+00> : tensor<32xf32>
  %rv82 = arith.constant dense<1.000000e+00> : tensor<32xf32>
  %e83 = tensor.empty() : tensor<128x32x16x16xf32>
  %bn84 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv80, %s2b1_bn1_g, %s2b1_bn1_b, %rm81, %rv82 : tensor<128x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e83 : tensor<128x32x16x16xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x32x16x16xf32>
  %e85 = tensor.empty() : tensor<128x32x16x16xf32>
  %relu86 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn84 : tensor<128x32x16x16xf32>) outs(%e85 : tensor<128x32x16x16xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x32x16x16xf32>
  %pad87 = tensor.pad %relu86 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x32x16x16xf32> to tensor<128x32x18x18xf32>
  %e88 = tensor.empty() : tensor<128x32x16x16xf32>
  %z89 = linalg.fill ins(%zero : f32) outs(%e88 : tensor<128x32x16x16xf32>) -> tensor<128x32x16x16xf32>
  %conv90 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad87, %s2b1_conv2_w : tensor<128x32x18x18xf32>, tensor<32x32x3x3xf32>) outs(%z89 : tensor<128x32x16x16xf32>) -> tensor<128x32x16x16xf32>
  %rm91 = arith.constant dense<0.000000e+00> : tensor<32xf32>
  %rv92 = arith.constant dense<1.000000e+00> : tensor<32xf32>
  %e93 = tensor.empty() : tensor<128x32x16x16xf32>
  %bn94 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv90, %s2b1_bn2_g, %s2b1_bn2_b, %rm91, %rv92 : tensor<128x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e93 : tensor<128x32x16x16xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x32x16x16xf32>
  %e95 = tensor.empty() : tensor<128x32x16x16xf32>
  %z96 = linalg.fill ins(%zero : f32) outs(%e95 : tensor<128x32x16x16xf32>) -> tensor<128x32x16x16xf32>
  %conv97 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%relu76, %s2b1_down_w : tensor<128x16x32x32xf32>, tensor<32x16x1x1xf32>) outs(%z96 : tensor<128x32x16x16xf32>) -> tensor<128x32x16x16xf32>
  %rm98 = arith.constant dense<0.000000e+00> : tensor<32xf32>
  %rv99 = arith.constant dense<1.000000e+00> : tensor<32xf32>
  %e100 = tensor.empty() : tensor<128x32x16x16xf32>
  %bn101 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv97, %s2b1_down_bn_g, %s2b1_down_bn_b, %rm98, %rv99 : tensor<128x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e100 : tensor<128x32x16x16xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x32x16x16xf32>
  %e102 = tensor.empty() : tensor<128x32x16x16xf32>
  %add103 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn94, %bn101 : tensor<128x32x16x16xf32>, tensor<128x32x16x16xf32>) outs(%e102 : tensor<128x32x16x16xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<128x32x16x16xf32>
  %e104 = tensor.empty() : tensor<128x32x16x16xf32>
  %relu105 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%add103 : tensor<128x32x16x16xf32>) outs(%e104 : tensor<128x32x16x16xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x32x16x16xf32>
  %pad106 = tensor.pad %relu105 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x32x16x16xf32> to tensor<128x32x18x18xf32>
  %e107 = tensor.empty() : tensor<128x32x16x16xf32>
  %z108 = linalg.fill ins(%zero : f32) outs(%e107 : tensor<128x32x16x16xf32>) -> tensor<128x32x16x16xf32>
  %conv109 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad106, %s2b2_conv1_w : tensor<128x32x18x18xf32>, tensor<32x32x3x3xf32>) outs(%z108 : tensor<128x32x16x16xf32>) -> tensor<128x32x16x16xf32>
  %rm110 = arith.constant dense<0.000000e+00> : tensor<32xf32>
  %rv111 = arith.constant dense<1.000000e+00> : tensor<32xf32>
  %e112 = tensor.empty() : tensor<128x32x16x16xf32>
  %bn113 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv109, %s2b2_bn1_g, %s2b2_bn1_b, %rm110, %rv111 : tensor<128x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e112 : tensor<128x32x16x16xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x32x16x16xf32>
  %e114 = tensor.empty() : tensor<128x32x16x16xf32>
  %relu115 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn113 : tensor<128x32x16x16xf32>) outs(%e114 : tensor<128x32x16x16xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x32x16x16xf32>
  %pad116 = tensor.pad %relu115 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x32x16x16xf32> to tensor<128x32x18x18xf32>
  %e117 = tensor.empty() : tensor<128x32x16x16xf32>
  %z118 = linalg.fill ins(%zero : f32) outs(%e117 : tensor<128x32x16x16xf32>) -> tensor<128x32x16x16xf32>
  %conv119 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad116, %s2b2_conv2_w : tensor<128x32x18x18xf32>, tensor<32x32x3x3xf32>) outs(%z118 : tensor<128x32x16x16xf32>) -> tensor<128x32x16x16xf32>
  %rm120 = arith.constant dense<0.000000e+00> : tensor<32xf32>
  %rv121 = arith.constant dense<1.000000e+00> : tensor<32xf32>
  %e122 = tensor.empty() : tensor<128x32x16x16xf32>
  %bn123 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv119, %s2b2_bn2_g, %s2b2_bn2_b, %rm120, %rv121 : tensor<128x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e122 : tensor<128x32x16x16xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x32x16x16xf32>
  %e124 = tensor.empty() : tensor<128x32x16x16xf32>
  %add125 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn123, %relu105 : tensor<128x32x16x16xf32>, tensor<128x32x16x16xf32>) outs(%e124 : tensor<128x32x16x16xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<128x32x16x16xf32>
  %e126 = tensor.empty() : tensor<128x32x16x16xf32>
  %relu127 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%add125 : tensor<128x32x16x16xf32>) outs(%e126 : tensor<128x32x16x16xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x32x16x16xf32>
  %pad128 = tensor.pad %relu127 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x32x16x16xf32> to tensor<128x32x18x18xf32>
  %e129 = tensor.empty() : tensor<128x32x16x16xf32>
  %z130 = linalg.fill ins(%zero : f32) outs(%e129 : tensor<128x32x16x16xf32>) -> tensor<128x32x16x16xf32>
  %conv131 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad128, %s2b3_conv1_w : tensor<128x32x18x18xf32>, tensor<32x32x3x3xf32>) outs(%z130 : tensor<128x32x16x16xf32>) -> tensor<128x32x16x16xf32>
  %rm132 = arith.constant dense<0.000000e+00> : tensor<32xf32>
  %rv133 = arith.constant dense<1.000000e+00> : tensor<32xf32>
  %e134 = tensor.empty() : tensor<128x32x16x16xf32>
  %bn135 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv131, %s2b3_bn1_g, %s2b3_bn1_b, %rm132, %rv133 : tensor<128x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e134 : tensor<128x32x16x16xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x32x16x16xf32>
  %e136 = tensor.empty() : tensor<128x32x16x16xf32>
  %relu137 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn135 : tensor<128x32x16x16xf32>) outs(%e136 : tensor<128x32x16x16xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x32x16x16xf32>
  %pad138 = tensor.pad %relu137 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x32x16x16xf32> to tensor<128x32x18x18xf32>
  %e139 = tensor.empty() : tensor<128x32x16x16xf32>
  %z140 = linalg.fill ins(%zero : f32) outs(%e139 : tensor<128x32x16x16xf32>) -> tensor<128x32x16x16xf32>
  %conv141 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad138, %s2b3_conv2_w : tensor<128x32x18x18xf32>, tensor<32x32x3x3xf32>) outs(%z140 : tensor<128x32x16x16xf32>) -> tensor<128x32x16x16xf32>
  %rm142 = arith.constant dense<0.000000e+00> : tensor<32xf32>
  %rv143 = arith.constant dense<1.000000e+00> : tensor<32xf32>
  %e144 = tensor.empty() : tensor<128x32x16x16xf32>
  %bn145 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv141, %s2b3_bn2_g, %s2b3_bn2_b, %rm142, %rv143 : tensor<128x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e144 : tensor<128x32x16x16xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x32x16x16xf32>
  %e146 = tensor.empty() : tensor<128x32x16x16xf32>
  %add147 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn145, %relu127 : tensor<128x32x16x16xf32>, tensor<128x32x16x16xf32>) outs(%e146 : tensor<128x32x16x16xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<128x32x16x16xf32>
  %e148 = tensor.empty() : tensor<128x32x16x16xf32>
  %relu149 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%add147 : tensor<128x32x16x16xf32>) outs(%e148 : tensor<128x32x16x16xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x32x16x16xf32>
  %pad150 = tensor.pad %relu149 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x32x16x16xf32> to tensor<128x32x18x18xf32>
  %e151 = tensor.empty() : tensor<128x64x8x8xf32>
  %z152 = linalg.fill ins(%zero : f32) outs(%e151 : tensor<128x64x8x8xf32>) -> tensor<128x64x8x8xf32>
  %conv153 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%pad150, %s3b1_conv1_w : tensor<128x32x18x18xf32>, tensor<64x32x3x3xf32>) outs(%z152 : tensor<128x64x8x8xf32>) -> tensor<128x64x8x8xf32>
  %rm154 = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %rv155 = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %e156 = tensor.empty() : tensor<128x64x8x8xf32>
  %bn157 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv153, %s3b1_bn1_g, %s3b1_bn1_b, %rm154, %rv155 : tensor<128x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) outs(%e156 : tensor<128x64x8x8xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x64x8x8xf32>
  %e158 = tensor.empty() : tensor<128x64x8x8xf32>
  %relu159 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn157 : tensor<128x64x8x8xf32>) outs(%e158 : tensor<128x64x8x8xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x64x8x8xf32>
  %pad160 = tensor.pad %relu159 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x64x8x8xf32> to tensor<128x64x10x10xf32>
  %e161 = tensor.empty() : tensor<128x64x8x8xf32>
  %z162 = linalg.fill ins(%zero : f32) outs(%e161 : tensor<128x64x8x8xf32>) -> tensor<128x64x8x8xf32>
  %conv163 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad160, %s3b1_conv2_w : tensor<128x64x10x10xf32>, tensor<64x64x3x3xf32>) outs(%z162 : tensor<128x64x8x8xf32>) -> tensor<128x64x8x8xf32>
  %rm164 = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %rv165 = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %e166 = tensor.empty() : tensor<128x64x8x8xf32>
  %bn167 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv163, %s3b1_bn2_g, %s3b1_bn2_b, %rm164, %rv165 : tensor<128x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) outs(%e166 : tensor<128x64x8x8xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x64x8x8xf32>
  %e168 = tensor.empty() : tensor<128x64x8x8xf32>
  %z169 = linalg.fill ins(%zero : f32) outs(%e168 : tensor<128x64x8x8xf32>) -> tensor<128x64x8x8xf32>
  %conv170 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%relu149, %s3b1_down_w : tensor<128x32x16x16xf32>, tensor<64x32x1x1xf32>) outs(%z169 : tensor<128x64x8x8xf32>) -> tensor<128x64x8x8xf32>
  %rm171 = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %rv172 = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %e173 = tensor.empty() : tensor<128x64x8x8xf32>
  %bn174 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv170, %s3b1_down_bn_g, %s3b1_down_bn_b, %rm171, %rv172 : tensor<128x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) outs(%e173 : tensor<128x64x8x8xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x64x8x8xf32>
  %e175 = tensor.empty() : tensor<128x64x8x8xf32>
  %add176 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn167, %bn174 : tensor<128x64x8x8xf32>, tensor<128x64x8x8xf32>) outs(%e175 : tensor<128x64x8x8xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<128x64x8x8xf32>
  %e177 = tensor.empty() : tensor<128x64x8x8xf32>
  %relu178 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%add176 : tensor<128x64x8x8xf32>) outs(%e177 : tensor<128x64x8x8xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x64x8x8xf32>
  %pad179 = tensor.pad %relu178 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x64x8x8xf32> to tensor<128x64x10x10xf32>
  %e180 = tensor.empty() : tensor<128x64x8x8xf32>
  %z181 = linalg.fill ins(%zero : f32) outs(%e180 : tensor<128x64x8x8xf32>) -> tensor<128x64x8x8xf32>
  %conv182 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad179, %s3b2_conv1_w : tensor<128x64x10x10xf32>, tensor<64x64x3x3xf32>) outs(%z181 : tensor<128x64x8x8xf32>) -> tensor<128x64x8x8xf32>
  %rm183 = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %rv184 = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %e185 = tensor.empty() : tensor<128x64x8x8xf32>
  %bn186 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv182, %s3b2_bn1_g, %s3b2_bn1_b, %rm183, %rv184 : tensor<128x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) outs(%e185 : tensor<128x64x8x8xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x64x8x8xf32>
  %e187 = tensor.empty() : tensor<128x64x8x8xf32>
  %relu188 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn186 : tensor<128x64x8x8xf32>) outs(%e187 : tensor<128x64x8x8xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x64x8x8xf32>
  %pad189 = tensor.pad %relu188 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x64x8x8xf32> to tensor<128x64x10x10xf32>
  %e190 = tensor.empty() : tensor<128x64x8x8xf32>
  %z191 = linalg.fill ins(%zero : f32) outs(%e190 : tensor<128x64x8x8xf32>) -> tensor<128x64x8x8xf32>
  %conv192 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad189, %s3b2_conv2_w : tensor<128x64x10x10xf32>, tensor<64x64x3x3xf32>) outs(%z191 : tensor<128x64x8x8xf32>) -> tensor<128x64x8x8xf32>
  %rm193 = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %rv194 = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %e195 = tensor.empty() : tensor<128x64x8x8xf32>
  %bn196 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv192, %s3b2_bn2_g, %s3b2_bn2_b, %rm193, %rv194 : tensor<128x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) outs(%e195 : tensor<128x64x8x8xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x64x8x8xf32>
  %e197 = tensor.empty() : tensor<128x64x8x8xf32>
  %add198 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn196, %relu178 : tensor<128x64x8x8xf32>, tensor<128x64x8x8xf32>) outs(%e197 : tensor<128x64x8x8xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<128x64x8x8xf32>
  %e199 = tensor.empty() : tensor<128x64x8x8xf32>
  %relu200 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%add198 : tensor<128x64x8x8xf32>) outs(%e199 : tensor<128x64x8x8xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x64x8x8xf32>
  %pad201 = tensor.pad %relu200 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x64x8x8xf32> to tensor<128x64x10x10xf32>
  %e202 = tensor.empty() : tensor<128x64x8x8xf32>
  %z203 = linalg.fill ins(%zero : f32) outs(%e202 : tensor<128x64x8x8xf32>) -> tensor<128x64x8x8xf32>
  %conv204 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad201, %s3b3_conv1_w : tensor<128x64x10x10xf32>, tensor<64x64x3x3xf32>) outs(%z203 : tensor<128x64x8x8xf32>) -> tensor<128x64x8x8xf32>
  %rm205 = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %rv206 = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %e207 = tensor.empty() : tensor<128x64x8x8xf32>
  %bn208 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv204, %s3b3_bn1_g, %s3b3_bn1_b, %rm205, %rv206 : tensor<128x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) outs(%e207 : tensor<128x64x8x8xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x64x8x8xf32>
  %e209 = tensor.empty() : tensor<128x64x8x8xf32>
  %relu210 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn208 : tensor<128x64x8x8xf32>) outs(%e209 : tensor<128x64x8x8xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x64x8x8xf32>
  %pad211 = tensor.pad %relu210 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<128x64x8x8xf32> to tensor<128x64x10x10xf32>
  %e212 = tensor.empty() : tensor<128x64x8x8xf32>
  %z213 = linalg.fill ins(%zero : f32) outs(%e212 : tensor<128x64x8x8xf32>) -> tensor<128x64x8x8xf32>
  %conv214 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pad211, %s3b3_conv2_w : tensor<128x64x10x10xf32>, tensor<64x64x3x3xf32>) outs(%z213 : tensor<128x64x8x8xf32>) -> tensor<128x64x8x8xf32>
  %rm215 = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %rv216 = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %e217 = tensor.empty() : tensor<128x64x8x8xf32>
  %bn218 = linalg.generic {indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv214, %s3b3_bn2_g, %s3b3_bn2_b, %rm215, %rv216 : tensor<128x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) outs(%e217 : tensor<128x64x8x8xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):
    %eps32 = arith.truncf %eps : f64 to f32
    %ve = arith.addf %v, %eps32 : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %o = arith.addf %s, %beta : f32
    linalg.yield %o : f32
  } -> tensor<128x64x8x8xf32>
  %e219 = tensor.empty() : tensor<128x64x8x8xf32>
  %add220 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bn218, %relu200 : tensor<128x64x8x8xf32>, tensor<128x64x8x8xf32>) outs(%e219 : tensor<128x64x8x8xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<128x64x8x8xf32>
  %e221 = tensor.empty() : tensor<128x64x8x8xf32>
  %relu222 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%add220 : tensor<128x64x8x8xf32>) outs(%e221 : tensor<128x64x8x8xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.maximumf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x64x8x8xf32>
  %e223 = tensor.empty() : tensor<128x64xf32>
  %z224 = linalg.fill ins(%zero : f32) outs(%e223 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %sum225 = linalg.generic {indexing_maps = [#id4, #pool], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%relu222 : tensor<128x64x8x8xf32>) outs(%z224 : tensor<128x64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<128x64xf32>
  %e226 = tensor.empty() : tensor<128x64xf32>
  %avg227 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%sum225 : tensor<128x64xf32>) outs(%e226 : tensor<128x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.constant 6.400000e+01 : f32
    %a = arith.divf %v, %n : f32
    linalg.yield %a : f32
  } -> tensor<128x64xf32>
  %e228 = tensor.empty() : tensor<64x10xf32>
  %wt229 = linalg.transpose ins(%fc_w : tensor<10x64xf32>) outs(%e228 : tensor<64x10xf32>) permutation = [1, 0]
  %e230 = tensor.empty() : tensor<128x10xf32>
  %bias231 = linalg.generic {indexing_maps = [#bias2, #id2], iterator_types = ["parallel", "parallel"]} ins(%fc_b : tensor<10xf32>) outs(%e230 : tensor<128x10xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<128x10xf32>
  %logits232 = linalg.matmul ins(%avg227, %wt229 : tensor<128x64xf32>, tensor<64x10xf32>) outs(%bias231 : tensor<128x10xf32>) -> tensor<128x10xf32>
  return %logits232 : tensor<128x10xf32>
}
