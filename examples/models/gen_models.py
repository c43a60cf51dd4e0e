#!/usr/bin/env python3
"""Writes the papers' CNNs as forward graphs in linalg on tensors.

The graphs look like torch-mlir's linalg-on-tensors output of the PyTorch
model in eval mode: every batch norm is one linalg.generic reading the
running mean and variance as constants (dense<0> and dense<1>, a fresh
model's), with eps an f64 constant truncated in the body; qtrain-compile's
qtrain-train-batchnorm turns them into training-mode batch norms. Weights
are {qtrain.param} arguments (PyTorch's layouts: conv FCHW, linear [out,
in] transposed before the matmul), so the runtime initializes them.

  gen_models.py resnet --depth=20 [--batch=128] [--in-channels=3] [--size=32]
  gen_models.py resnet18 [--batch=32] [--size=32]
  gen_models.py mbv2block [--batch=128] [--in-channels=3] [--size=32]
  ... --export   torch-mlir's standard output as shared: batch 1, @main, the
                 weights and running statistics elided
                 (dense_resource<__elided__>), ml_program.global @global_seed,
                 the eval-mode cf.assert (qtrain-compile --lift-params
                 --batch=N takes it)

resnet: the CIFAR ResNet-(6n+2) of He et al. (16/32/64 channels, 3x3 basic
blocks, 1x1 projection + batch norm where the shape changes), as the LDP
and CPT papers train on CIFAR-10. resnet18: torchvision's ResNet-18 layout
(64..512 channels) with a 3x3 stem for 32x32 inputs. mbv2block: a
MobileNetV2-style model of inverted residual blocks (1x1 expand, 3x3
depthwise, 1x1 project, batch norm after each, ReLU6).
"""

import argparse
import sys


class Graph:
    def __init__(self, batch, export=False):
        self.batch = batch
        self.export = export
        self.lines = []
        self.params = []
        self.constants = []
        self.count = 0

    def fresh(self, prefix):
        self.count += 1
        return f"%{prefix}{self.count}"

    def emit(self, line):
        self.lines.append("  " + line)

    def t4(self, c, h, w):
        return f"tensor<{self.batch}x{c}x{h}x{w}xf32>"

    def param(self, name, shape):
        ty = "tensor<" + "x".join(str(d) for d in shape) + "xf32>"
        if self.export:
            self.constants.append(f"  %{name} = arith.constant dense_resource<__elided__> : {ty}")
        else:
            self.params.append(f"%{name}: {ty} {{qtrain.param}}")
        return f"%{name}"

    def zeros(self, ty):
        e, z = self.fresh("e"), self.fresh("z")
        self.emit(f"{e} = tensor.empty() : {ty}")
        self.emit(f"{z} = linalg.fill ins(%zero : f32) outs({e} : {ty}) -> {ty}")
        return z

    def conv(self, x, shape, cout, k, stride, name, groups=1):
        c, h, w = shape
        pad = k // 2
        if pad:
            xp = self.fresh("pad")
            self.emit(f"{xp} = tensor.pad {x} low[0, 0, {pad}, {pad}] high[0, 0, {pad}, {pad}] {{")
            self.emit("^bb0(%i0: index, %i1: index, %i2: index, %i3: index):")
            self.emit("  tensor.yield %zero : f32")
            self.emit(f"}} : {self.t4(c, h, w)} to {self.t4(c, h + 2 * pad, w + 2 * pad)}")
            x = xp
        ho = (h + 2 * pad - k) // stride + 1
        wo = (w + 2 * pad - k) // stride + 1
        out_ty = self.t4(cout, ho, wo)
        init = self.zeros(out_ty)
        y = self.fresh("conv")
        attrs = (f"{{dilations = dense<1> : vector<2xi64>, "
                 f"strides = dense<{stride}> : vector<2xi64>}}")
        in_ty = self.t4(c, h + 2 * pad, w + 2 * pad)
        if groups == 1:
            wt = self.param(name + "_w", [cout, c, k, k])
            self.emit(f"{y} = linalg.conv_2d_nchw_fchw {attrs} ins({x}, {wt} : {in_ty}, "
                      f"tensor<{cout}x{c}x{k}x{k}xf32>) outs({init} : {out_ty}) -> {out_ty}")
        else:
            assert groups == c == cout
            wt = self.param(name + "_w", [c, k, k])
            self.emit(f"{y} = linalg.depthwise_conv_2d_nchw_chw {attrs} ins({x}, {wt} : {in_ty}, "
                      f"tensor<{c}x{k}x{k}xf32>) outs({init} : {out_ty}) -> {out_ty}")
        return y, (cout, ho, wo)

    def batchnorm(self, x, shape, name):
        c, h, w = shape
        g = self.param(name + "_g", [c])
        b = self.param(name + "_b", [c])
        mean, var = self.fresh("rm"), self.fresh("rv")
        stat = "dense_resource<__elided__>" if self.export else None
        self.emit(f"{mean} = arith.constant {stat or 'dense<0.000000e+00>'} : tensor<{c}xf32>")
        self.emit(f"{var} = arith.constant {stat or 'dense<1.000000e+00>'} : tensor<{c}xf32>")
        ty = self.t4(c, h, w)
        e, y = self.fresh("e"), self.fresh("bn")
        self.emit(f"{e} = tensor.empty() : {ty}")
        self.emit(f"{y} = linalg.generic {{indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], "
                  f"iterator_types = [\"parallel\", \"parallel\", \"parallel\", \"parallel\"]}} "
                  f"ins({x}, {g}, {b}, {mean}, {var} : {ty}, tensor<{c}xf32>, tensor<{c}xf32>, "
                  f"tensor<{c}xf32>, tensor<{c}xf32>) outs({e} : {ty}) {{")
        self.emit("^bb0(%in: f32, %gamma: f32, %beta: f32, %m: f32, %v: f32, %out: f32):")
        self.emit("  %eps32 = arith.truncf %eps : f64 to f32")
        self.emit("  %ve = arith.addf %v, %eps32 : f32")
        self.emit("  %r = math.rsqrt %ve : f32")
        self.emit("  %d = arith.subf %in, %m : f32")
        self.emit("  %n = arith.mulf %d, %r : f32")
        self.emit("  %s = arith.mulf %n, %gamma : f32")
        self.emit("  %o = arith.addf %s, %beta : f32")
        self.emit("  linalg.yield %o : f32")
        self.emit(f"}} -> {ty}")
        return y

    def elementwise(self, ins, shape, body, prefix):
        ty = self.t4(*shape)
        e, y = self.fresh("e"), self.fresh(prefix)
        self.emit(f"{e} = tensor.empty() : {ty}")
        maps = ", ".join(["#id4"] * (len(ins) + 1))
        args = ", ".join(f"%a{i}: f32" for i in range(len(ins)))
        self.emit(f"{y} = linalg.generic {{indexing_maps = [{maps}], iterator_types = "
                  f"[\"parallel\", \"parallel\", \"parallel\", \"parallel\"]}} "
                  f"ins({', '.join(ins)} : {', '.join([ty] * len(ins))}) outs({e} : {ty}) {{")
        self.emit(f"^bb0({args}, %out: f32):")
        for line in body:
            self.emit("  " + line)
        self.emit(f"}} -> {ty}")
        return y

    def relu(self, x, shape):
        return self.elementwise([x], shape, ["%r = arith.maximumf %a0, %zero : f32",
                                             "linalg.yield %r : f32"], "relu")

    def relu6(self, x, shape):
        return self.elementwise([x], shape, ["%r = arith.maximumf %a0, %zero : f32",
                                             "%r6 = arith.minimumf %r, %six : f32",
                                             "linalg.yield %r6 : f32"], "relu6")

    def add(self, a, b, shape):
        return self.elementwise([a, b], shape, ["%r = arith.addf %a0, %a1 : f32",
                                                "linalg.yield %r : f32"], "add")

    def head(self, x, shape, classes):
        c, h, w = shape
        pooled_ty = f"tensor<{self.batch}x{c}xf32>"
        z = self.zeros(pooled_ty)
        s = self.fresh("sum")
        self.emit(f"{s} = linalg.generic {{indexing_maps = [#id4, #pool], iterator_types = "
                  f"[\"parallel\", \"parallel\", \"reduction\", \"reduction\"]}} "
                  f"ins({x} : {self.t4(c, h, w)}) outs({z} : {pooled_ty}) {{")
        self.emit("^bb0(%v: f32, %acc: f32):")
        self.emit("  %a = arith.addf %acc, %v : f32")
        self.emit("  linalg.yield %a : f32")
        self.emit(f"}} -> {pooled_ty}")
        e, avg = self.fresh("e"), self.fresh("avg")
        self.emit(f"{e} = tensor.empty() : {pooled_ty}")
        self.emit(f"{avg} = linalg.generic {{indexing_maps = [#id2, #id2], iterator_types = "
                  f"[\"parallel\", \"parallel\"]}} ins({s} : {pooled_ty}) outs({e} : {pooled_ty}) {{")
        self.emit("^bb0(%v: f32, %o: f32):")
        self.emit(f"  %n = arith.constant {float(h * w):e} : f32")
        self.emit("  %a = arith.divf %v, %n : f32")
        self.emit("  linalg.yield %a : f32")
        self.emit(f"}} -> {pooled_ty}")
        wt = self.param("fc_w", [classes, c])
        bias = self.param("fc_b", [classes])
        te, tw = self.fresh("e"), self.fresh("wt")
        self.emit(f"{te} = tensor.empty() : tensor<{c}x{classes}xf32>")
        self.emit(f"{tw} = linalg.transpose ins({wt} : tensor<{classes}x{c}xf32>) "
                  f"outs({te} : tensor<{c}x{classes}xf32>) permutation = [1, 0]")
        out_ty = f"tensor<{self.batch}x{classes}xf32>"
        be, bi = self.fresh("e"), self.fresh("bias")
        self.emit(f"{be} = tensor.empty() : {out_ty}")
        self.emit(f"{bi} = linalg.generic {{indexing_maps = [#bias2, #id2], iterator_types = "
                  f"[\"parallel\", \"parallel\"]}} ins({bias} : tensor<{classes}xf32>) "
                  f"outs({be} : {out_ty}) {{")
        self.emit("^bb0(%b: f32, %o: f32):")
        self.emit("  linalg.yield %b : f32")
        self.emit(f"}} -> {out_ty}")
        y = self.fresh("logits")
        self.emit(f"{y} = linalg.matmul ins({avg}, {tw} : {pooled_ty}, tensor<{c}x{classes}xf32>) "
                  f"outs({bi} : {out_ty}) -> {out_ty}")
        return y, out_ty

    def text(self, comment, in_shape, logits, out_ty):
        c, h, w = in_shape
        head = [f"// {line}" if line else "//" for line in comment]
        head += [
            "",
            "#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>",
            "#chan = affine_map<(n, c, h, w) -> (c)>",
            "#pool = affine_map<(n, c, h, w) -> (n, c)>",
            "#id2 = affine_map<(n, k) -> (n, k)>",
            "#bias2 = affine_map<(n, k) -> (k)>",
            "",
        ]
        if self.export:
            head += ['module attributes {torch.debug_module_name = "Net"} {',
                     "ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>",
                     f"func.func @main(%x: {self.t4(c, h, w)}) -> {out_ty} {{",
                     "  %true = arith.constant true",
                     '  cf.assert %true, "training is not supported for now"']
            head += self.constants
        else:
            head.append("func.func @forward(")
            head += [f"    {p}," for p in self.params]
            head.append(f"    %x: {self.t4(c, h, w)}) -> {out_ty} {{")
        head.append("  %zero = arith.constant 0.000000e+00 : f32")
        head.append("  %six = arith.constant 6.000000e+00 : f32")
        head.append("  %eps = arith.constant 1.000000e-05 : f64")
        tail = [f"  return {logits} : {out_ty}", "}"] + (["}"] if self.export else []) + [""]
        return "\n".join(head + self.lines + tail)


def basic_block(g, x, shape, cout, stride, name):
    y, s1 = g.conv(x, shape, cout, 3, stride, name + "_conv1")
    y = g.relu(g.batchnorm(y, s1, name + "_bn1"), s1)
    y, s2 = g.conv(y, s1, cout, 3, 1, name + "_conv2")
    y = g.batchnorm(y, s2, name + "_bn2")
    skip = x
    if stride != 1 or shape[0] != cout:
        skip, ss = g.conv(x, shape, cout, 1, stride, name + "_down")
        skip = g.batchnorm(skip, ss, name + "_down_bn")
    return g.relu(g.add(y, skip, s2), s2), s2


def resnet(g, in_shape, stages, blocks, classes):
    y, shape = g.conv("%x", in_shape, stages[0], 3, 1, "stem")
    y = g.relu(g.batchnorm(y, shape, "stem_bn"), shape)
    for s, (width, count) in enumerate(zip(stages, blocks)):
        for b in range(count):
            stride = 2 if s > 0 and b == 0 else 1
            y, shape = basic_block(g, y, shape, width, stride, f"s{s + 1}b{b + 1}")
    return g.head(y, shape, classes)


def inverted_residual(g, x, shape, cout, expand, stride, name):
    c = shape[0]
    hidden = c * expand
    y, s = g.conv(x, shape, hidden, 1, 1, name + "_expand")
    y = g.relu6(g.batchnorm(y, s, name + "_bn1"), s)
    y, s = g.conv(y, s, hidden, 3, stride, name + "_dw", groups=hidden)
    y = g.relu6(g.batchnorm(y, s, name + "_bn2"), s)
    y, s = g.conv(y, s, cout, 1, 1, name + "_project")
    y = g.batchnorm(y, s, name + "_bn3")
    if stride == 1 and c == cout:
        y = g.add(y, x, s)
    return y, s


def mbv2block(g, in_shape, classes):
    y, shape = g.conv("%x", in_shape, 16, 3, 1, "stem")
    y = g.relu6(g.batchnorm(y, shape, "stem_bn"), shape)
    # (out channels, expansion, stride) per block.
    for i, (cout, t, stride) in enumerate([(16, 1, 1), (24, 6, 2), (24, 6, 1),
                                           (32, 6, 2), (32, 6, 1)]):
        y, shape = inverted_residual(g, y, shape, cout, t, stride, f"ir{i + 1}")
    return g.head(y, shape, classes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("arch", choices=["resnet", "resnet18", "mbv2block"])
    ap.add_argument("--depth", type=int, default=20, help="resnet: 6n+2")
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--in-channels", type=int, default=3)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--export", action="store_true",
                    help="torch-mlir's shared form: batch 1, @main, elided weights")
    args = ap.parse_args()
    batch = args.batch or (1 if args.export else 32 if args.arch == "resnet18" else 128)
    in_shape = (args.in_channels, args.size, args.size)
    g = Graph(batch, args.export)
    where = f"{args.in_channels}x{args.size}x{args.size} inputs, batch {batch}, {args.classes} classes"
    if args.arch == "resnet":
        if (args.depth - 2) % 6:
            sys.exit("gen_models.py: --depth must be 6n+2 (20, 32, 44, 56, ...)")
        n = (args.depth - 2) // 6
        logits, ty = resnet(g, in_shape, [16, 32, 64], [n] * 3, args.classes)
        title = f"CIFAR ResNet-{args.depth} (He et al.; LDP and CPT train it on CIFAR-10), {where}."
    elif args.arch == "resnet18":
        logits, ty = resnet(g, in_shape, [64, 128, 256, 512], [2] * 4, args.classes)
        title = f"ResNet-18 (torchvision's layout, 3x3 stem), {where}."
    else:
        logits, ty = mbv2block(g, in_shape, args.classes)
        title = f"MobileNetV2-style inverted residual blocks (1x1 expand, 3x3 depthwise, 1x1 project), {where}."
    comment = [title,
               "Written by examples/models/gen_models.py in the style of torch-mlir's",
               "linalg-on-tensors export of the eval-mode PyTorch model: batch norms",
               "read their running statistics as constants; qtrain-compile trains them",
               "with batch statistics (qtrain-train-batchnorm)."]
    if args.export:
        comment += ["As torch-mlir's standard output is shared: weights and running",
                    "statistics elided; qtrain-compile --lift-params --batch=N",
                    "initializes them as PyTorch does."]
    sys.stdout.write(g.text(comment, in_shape, logits, ty))


if __name__ == "__main__":
    main()
