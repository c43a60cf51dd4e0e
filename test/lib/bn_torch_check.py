#!/usr/bin/env python3
"""Trains one small CNN with batch norm in qtrain and in PyTorch, side by side.

usage: bn_torch_check.py BINDIR WORKDIR [--steps N] [--tol T]

The model is conv 1->4 (3x3, padding 1, no bias) -> BatchNorm2d(4) -> ReLU ->
global average pool -> linear 4->3, with PyTorch's initial weights written
into an eval-mode export in torch-mlir's style (real weights as dense
constants, running mean 0 and variance 1 as constants), compiled with
`qtrain-compile --lift-params --policy=none` (so qtrain-train-batchnorm
trains the batch norm) and trained by qtrain-run on npy data. The training
set is exactly one batch, so every step sees the whole set and the shuffle
order cannot matter. PyTorch trains the same module in train() mode with the
same SGD (momentum 0.9, weight decay 5e-4) and evaluates in eval() mode.

Checks, each within a relative tolerance T (fp32 noise): the training loss
of every step (batch statistics) and the test loss after every epoch, which
eval() computes with the running statistics, so it is wrong if the running
mean or variance is (momentum, unbiased variance, or eval using the batch's).
Prints the largest relative differences and PASS or FAIL.
"""

import argparse
import csv
import os
import struct
import subprocess
import sys

import torch

B, C, H, W, F, K = 16, 1, 8, 8, 4, 3


def fmt(t):
    if t.dim() == 0:
        return "%.9e" % t.item()
    return "[" + ", ".join(fmt(x) for x in t) + "]"


def export(model):
    conv_w = model[0].weight.detach()
    bn_g, bn_b = model[1].weight.detach(), model[1].bias.detach()
    fc_w, fc_b = model[5].weight.detach(), model[5].bias.detach()
    return f"""
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>
#pool = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#bias2 = affine_map<(d0, d1) -> (d1)>
func.func @forward(%x: tensor<{B}x{C}x{H}x{W}xf32>) -> tensor<{B}x{K}xf32> {{
  %zero = arith.constant 0.000000e+00 : f32
  %eps = arith.constant 1.000000e-05 : f64
  %w = arith.constant dense<{fmt(conv_w)}> : tensor<{F}x{C}x3x3xf32>
  %g = arith.constant dense<{fmt(bn_g)}> : tensor<{F}xf32>
  %b = arith.constant dense<{fmt(bn_b)}> : tensor<{F}xf32>
  %rm = arith.constant dense<0.000000e+00> : tensor<{F}xf32>
  %rv = arith.constant dense<1.000000e+00> : tensor<{F}xf32>
  %fw = arith.constant dense<{fmt(fc_w)}> : tensor<{K}x{F}xf32>
  %fb = arith.constant dense<{fmt(fc_b)}> : tensor<{K}xf32>
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  }} : tensor<{B}x{C}x{H}x{W}xf32> to tensor<{B}x{C}x{H + 2}x{W + 2}xf32>
  %e = tensor.empty() : tensor<{B}x{F}x{H}x{W}xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<{B}x{F}x{H}x{W}xf32>) -> tensor<{B}x{F}x{H}x{W}xf32>
  %c = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}} ins(%xp, %w : tensor<{B}x{C}x{H + 2}x{W + 2}xf32>, tensor<{F}x{C}x3x3xf32>) outs(%z : tensor<{B}x{F}x{H}x{W}xf32>) -> tensor<{B}x{F}x{H}x{W}xf32>
  %n = linalg.generic {{indexing_maps = [#id4, #chan, #chan, #chan, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%c, %g, %b, %rm, %rv : tensor<{B}x{F}x{H}x{W}xf32>, tensor<{F}xf32>, tensor<{F}xf32>, tensor<{F}xf32>, tensor<{F}xf32>) outs(%e : tensor<{B}x{F}x{H}x{W}xf32>) {{
  ^bb0(%in: f32, %in_1: f32, %in_2: f32, %in_3: f32, %in_4: f32, %out: f32):
    %0 = arith.truncf %eps : f64 to f32
    %1 = arith.addf %in_4, %0 : f32
    %2 = math.rsqrt %1 : f32
    %3 = arith.subf %in, %in_3 : f32
    %4 = arith.mulf %3, %2 : f32
    %5 = arith.mulf %4, %in_1 : f32
    %6 = arith.addf %5, %in_2 : f32
    linalg.yield %6 : f32
  }} -> tensor<{B}x{F}x{H}x{W}xf32>
  %r = linalg.generic {{indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%n : tensor<{B}x{F}x{H}x{W}xf32>) outs(%e : tensor<{B}x{F}x{H}x{W}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %zero : f32
    linalg.yield %0 : f32
  }} -> tensor<{B}x{F}x{H}x{W}xf32>
  %pe = tensor.empty() : tensor<{B}x{F}xf32>
  %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<{B}x{F}xf32>) -> tensor<{B}x{F}xf32>
  %s = linalg.generic {{indexing_maps = [#id4, #pool], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}} ins(%r : tensor<{B}x{F}x{H}x{W}xf32>) outs(%pz : tensor<{B}x{F}xf32>) {{
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %acc, %in : f32
    linalg.yield %0 : f32
  }} -> tensor<{B}x{F}xf32>
  %a = linalg.generic {{indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}} ins(%s : tensor<{B}x{F}xf32>) outs(%pe : tensor<{B}x{F}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %n64 = arith.constant {float(H * W):e} : f32
    %0 = arith.divf %in, %n64 : f32
    linalg.yield %0 : f32
  }} -> tensor<{B}x{F}xf32>
  %te = tensor.empty() : tensor<{F}x{K}xf32>
  %wt = linalg.transpose ins(%fw : tensor<{K}x{F}xf32>) outs(%te : tensor<{F}x{K}xf32>) permutation = [1, 0]
  %oe = tensor.empty() : tensor<{B}x{K}xf32>
  %bi = linalg.generic {{indexing_maps = [#bias2, #id2], iterator_types = ["parallel", "parallel"]}} ins(%fb : tensor<{K}xf32>) outs(%oe : tensor<{B}x{K}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }} -> tensor<{B}x{K}xf32>
  %y = linalg.matmul ins(%a, %wt : tensor<{B}x{F}xf32>, tensor<{F}x{K}xf32>) outs(%bi : tensor<{B}x{K}xf32>) -> tensor<{B}x{K}xf32>
  return %y : tensor<{B}x{K}xf32>
}}
"""


def write_npy(path, tensor, descr):
    shape = tuple(tensor.shape)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join(f"{d}, " for d in shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    fmtc = {"<f4": "f", "<i8": "q"}[descr]
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (tensor.numel(), fmtc), *tensor.flatten().tolist()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bindir")
    ap.add_argument("work")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--tol", type=float, default=1e-4)
    opts = ap.parse_args()
    os.makedirs(opts.work, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(C, F, 3, padding=1, bias=False), torch.nn.BatchNorm2d(F),
        torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
        torch.nn.Linear(F, K))
    # Learnable data with per-class offsets, and inputs far from zero mean
    # and unit variance so that the running statistics matter in eval().
    def data(n, seed):
        g = torch.Generator().manual_seed(seed)
        y = torch.arange(n) % K
        x = torch.randn(n, C, H, W, generator=g) * 2.0 + 3.0 + y.view(n, 1, 1, 1).float()
        return x, y
    x, y = data(B, 1)
    tx, ty = data(B, 2)
    data_dir = os.path.join(opts.work, "data")
    os.makedirs(data_dir, exist_ok=True)
    write_npy(os.path.join(data_dir, "train_x.npy"), x, "<f4")
    write_npy(os.path.join(data_dir, "train_y.npy"), y, "<i8")
    write_npy(os.path.join(data_dir, "test_x.npy"), tx, "<f4")
    write_npy(os.path.join(data_dir, "test_y.npy"), ty, "<i8")
    mlir = os.path.join(opts.work, "bn.mlir")
    open(mlir, "w").write(export(model))

    bundle = os.path.join(opts.work, "bn.qtb")
    run_dir = os.path.join(opts.work, "run")
    subprocess.run([os.path.join(opts.bindir, "qtrain-compile"), mlir, "--lift-params",
                    "--policy=none", "-o", bundle], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([os.path.join(opts.bindir, "qtrain-run"), bundle, "--data=npy",
                    "--data-dir=" + data_dir, f"--epochs={opts.steps}", "--lr=0.1",
                    "--threads=1", "--progress=none", "--out=" + run_dir],
                   check=True, stdout=subprocess.DEVNULL)
    steps = [float(r["loss"]) for r in csv.DictReader(open(os.path.join(run_dir, "steps.csv")))]
    evals = [float(r["test_loss"]) for r in csv.DictReader(open(os.path.join(run_dir, "epochs.csv")))]

    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    ref_steps, ref_evals = [], []
    for _ in range(opts.steps):
        model.train()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        ref_steps.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            ref_evals.append(torch.nn.functional.cross_entropy(model(tx), ty).item())

    def worst(a, b):
        return max(abs(p - q) / max(abs(q), 1e-6) for p, q in zip(a, b))
    if len(steps) != opts.steps or len(evals) != opts.steps:
        print(f"bn-torch-check: FAIL ({len(steps)} steps, {len(evals)} evaluations)")
        return 1
    ws, we = worst(steps, ref_steps), worst(evals, ref_evals)
    print("bn-torch-check: train losses", " ".join(f"{v:.6f}" for v in steps))
    print("bn-torch-check: pytorch      ", " ".join(f"{v:.6f}" for v in ref_steps))
    print("bn-torch-check: eval losses  ", " ".join(f"{v:.6f}" for v in evals))
    print("bn-torch-check: pytorch eval ", " ".join(f"{v:.6f}" for v in ref_evals))
    print(f"bn-torch-check: max relative difference: train {ws:.2e}, eval {we:.2e} (tolerance {opts.tol:g})")
    ok = ws <= opts.tol and we <= opts.tol
    print("bn-torch-check: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
