#!/usr/bin/python3
"""The same model, the same numbers: a PyTorch model imported by
qtrain-import-torch and trained by qtrain-run in fp32, against PyTorch
training the same module from the same initial weights on the same batches
in the same order, step for step.

    /usr/bin/python3 benchmarks/import/torch_curves.py [--models=lenet,convnet]
        [--steps=468] [--compare=100] [--svg=docs/images/torch-curves.svg]

For each model: torch.manual_seed(0), build the module
(examples/torch/<model>.py), qtrain-import-torch it at batch 128,
qtrain-compile --policy=none (the fp32 step), and qtrain-run it for one
epoch of Fashion-MNIST with --shuffle=none (the data's order) and no
augmentation; then train the same module in PyTorch on the same batches
(the first 128 x steps training images in file order, normalized as
qtrain-run does: (pixel / 255 - 0.2860) / 0.3530), SGD lr 0.05, momentum
0.9, weight decay 5e-4 on both. Prints the largest relative difference of
the losses over the first --compare steps and over the whole run, and
writes both curves to an SVG. Exit status 1 when the first --compare steps
differ by more than 1e-3 relative.
"""
import argparse
import copy
import csv
import gzip
import os
import struct
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "torch"))

import qtrain_torch  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.2860, 0.3530
BATCH = 128
LR, MOMENTUM, WD = 0.01, 0.9, 5e-4
MODELS = {"lenet": ("lenet", "LeNet"), "convnet": ("convnet", "ConvNet")}


def read_idx(path):
    name = path if os.path.exists(path) else path + ".gz"
    opener = open if os.path.exists(path) else gzip.open
    with opener(name, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).reshape(shape)


def build(name):
    module, cls = MODELS[name]
    torch.manual_seed(0)
    return getattr(__import__(module), cls)()


def qtrain_losses(name, model, steps, work, bin_dir, threads, lr):
    mlir = os.path.join(work, f"{name}.mlir")
    with open(mlir, "w") as f:
        f.write(qtrain_torch.export(model, torch.zeros(BATCH, 1, 28, 28)))
    bundle = os.path.join(work, f"{name}.qtb")
    subprocess.run([os.path.join(bin_dir, "qtrain-compile"), mlir, "--policy=none", "-o", bundle],
                   check=True, stdout=subprocess.DEVNULL)
    out = os.path.join(work, f"{name}-run")
    t0 = time.time()
    subprocess.run([os.path.join(bin_dir, "qtrain-run"), bundle, "--epochs=1", "--shuffle=none",
                    f"--train-limit={steps * BATCH}", "--test-limit=1000", f"--lr={lr}",
                    f"--momentum={MOMENTUM}", f"--weight-decay={WD}", "--progress=none",
                    f"--threads={threads}", f"--out={out}", "--overwrite"],
                   check=True, stdout=subprocess.DEVNULL)
    seconds = time.time() - t0
    with open(os.path.join(out, "steps.csv")) as f:
        return [float(r["loss"]) for r in csv.DictReader(f)], seconds


def torch_losses(model, steps, threads, lr, dtype=torch.float32):
    if threads:
        torch.set_num_threads(threads)
    model = model.to(dtype)
    images = read_idx(os.path.join(DATA, "train-images-idx3-ubyte"))
    labels = read_idx(os.path.join(DATA, "train-labels-idx1-ubyte"))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=MOMENTUM, weight_decay=WD)
    model.train()
    losses = []
    t0 = time.time()
    for s in range(steps):
        x = images[s * BATCH:(s + 1) * BATCH].float()
        x = ((x / 255.0 - MEAN) / STD).reshape(BATCH, 1, 28, 28).to(dtype)
        y = labels[s * BATCH:(s + 1) * BATCH].long()
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, time.time() - t0


def svg(curves, path, compare):
    """Loss per step, qtrain and PyTorch, one panel per model, and the
    relative difference below (log scale)."""
    width, panel_h, pad = 720, 220, 50
    height = len(curves) * (2 * panel_h + pad) + pad
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    y0 = pad
    for name, (ours, theirs, exact) in curves.items():
        n = len(ours)
        top = max(max(ours), max(theirs))

        def px(i):
            return 60 + (width - 80) * i / max(n - 1, 1)

        def py(v):
            return y0 + panel_h - (panel_h - 20) * v / top

        out.append(f'<text x="60" y="{y0 - 8}" font-weight="bold">{name}: training loss per '
                   f'step, qtrain-run (fp32, imported) and PyTorch</text>')
        out.append(f'<line x1="60" y1="{y0 + panel_h}" x2="{width - 20}" y2="{y0 + panel_h}" stroke="black"/>')
        out.append(f'<line x1="60" y1="{y0}" x2="60" y2="{y0 + panel_h}" stroke="black"/>')
        for v in (0, top / 2, top):
            out.append(f'<text x="55" y="{py(v) + 4}" text-anchor="end">{v:.2f}</text>')
        for i in range(0, n, 100):
            out.append(f'<text x="{px(i)}" y="{y0 + panel_h + 14}" text-anchor="middle">{i}</text>')
        for values, color, dash in ((theirs, "#d62728", ""), (ours, "#1f77b4", ' stroke-dasharray="4 3"')):
            pts = " ".join(f"{px(i):.1f},{py(v):.1f}" for i, v in enumerate(values))
            out.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="1.2"{dash}/>')
        out.append(f'<text x="{width - 200}" y="{y0 + 14}" fill="#d62728">PyTorch (solid)</text>')
        out.append(f'<text x="{width - 200}" y="{y0 + 28}" fill="#1f77b4">qtrain (dashed)</text>')
        y0 += panel_h + pad
        diff = [abs(a - b) / abs(b) for a, b in zip(ours, theirs)]
        noise = [abs(a - b) / abs(b) for a, b in zip(theirs, exact)]
        lo, hi = -9, 0

        def ry(v):
            import math
            e = math.log10(max(v, 1e-9))
            return y0 + panel_h - (panel_h - 20) * (e - lo) / (hi - lo)

        out.append(f'<text x="60" y="{y0 - 8}">{name}: relative loss difference, qtrain vs '
                   f'PyTorch (black), PyTorch vs fp64 (orange)</text>')
        out.append(f'<rect x="60" y="{y0}" width="{px(min(compare, n - 1)) - 60}" height="{panel_h}" fill="#eeeeee"/>')
        out.append(f'<line x1="60" y1="{y0 + panel_h}" x2="{width - 20}" y2="{y0 + panel_h}" stroke="black"/>')
        out.append(f'<line x1="60" y1="{y0}" x2="60" y2="{y0 + panel_h}" stroke="black"/>')
        for e in range(lo, hi + 1, 3):
            out.append(f'<text x="55" y="{ry(10.0 ** e) + 4}" text-anchor="end">1e{e}</text>')
        out.append(f'<line x1="60" y1="{ry(1e-3)}" x2="{width - 20}" y2="{ry(1e-3)}" stroke="gray" stroke-dasharray="2 2"/>')
        for values, color in ((noise, "#ff7f0e"), (diff, "black")):
            pts = " ".join(f"{px(i):.1f},{ry(v):.1f}" for i, v in enumerate(values))
            out.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="1"/>')
        for i in range(0, n, 100):
            out.append(f'<text x="{px(i)}" y="{y0 + panel_h + 14}" text-anchor="middle">{i}</text>')
        y0 += panel_h + pad
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def rel(a, b):
    return [abs(x - y) / abs(y) for x, y in zip(a, b)]


def agreeing(r, limit=1e-3):
    """Steps from the start whose relative difference stays within limit."""
    for i, v in enumerate(r):
        if v > limit:
            return i
    return len(r)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="lenet,convnet")
    ap.add_argument("--steps", type=int, default=468, help="steps (468: one epoch)")
    ap.add_argument("--compare", type=int, default=100)
    ap.add_argument("--lr", type=float, default=LR)
    ap.add_argument("--threads", type=int, default=0,
                    help="threads of both (0: each one's default, all cores)")
    ap.add_argument("--svg", default=None)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="qtrain-curves-")
    curves, failed = {}, False
    n = args.compare
    print(f"lr {args.lr}, momentum {MOMENTUM}, weight decay {WD}, batch {BATCH}, "
          f"{args.steps} steps, data in file order; relative loss differences over the "
          f"first {n} steps (max) and the steps that agree within 1e-3 from the start")
    print(f"{'model':8} {'qtrain vs PyTorch':>18} {'agree':>6} {'PyTorch fp32 vs fp64':>21} "
          f"{'agree':>6} {'qtrain vs fp64':>15} {'whole run q/t':>14} {'last loss q/t':>20} "
          f"{'qtrain s':>9} {'torch s':>8}")
    for name in args.models.split(","):
        model = build(name)
        ours, q_s = qtrain_losses(name, model, args.steps, work, args.bin, args.threads, args.lr)
        theirs, t_s = torch_losses(copy.deepcopy(model), args.steps, args.threads, args.lr)
        exact, _ = torch_losses(copy.deepcopy(model), min(args.steps, n), args.threads, args.lr,
                                torch.float64)
        r, noise, q64 = rel(ours, theirs), rel(theirs, exact), rel(ours, exact)
        failed |= max(r[:n]) > 1e-3
        curves[name] = (ours, theirs, exact)
        print(f"{name:8} {max(r[:n]):18.2e} {agreeing(r):6} {max(noise[:n]):21.2e} "
              f"{agreeing(noise):6} {max(q64[:n]):15.2e} {max(r):14.2e} "
              f"{ours[-1]:9.5f}/{theirs[-1]:<9.5f} {q_s:9.1f} {t_s:8.1f}")
    if args.svg:
        svg(curves, args.svg, n)
        print(f"wrote {args.svg}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
