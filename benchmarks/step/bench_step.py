#!/usr/bin/python3
"""The training step side by side with what users run instead (issue #20).

For each model of examples/models it times, in one run, PyTorch (Debian's
python3-torch) with the same model, initialization scheme, data, batch,
loss and SGD (lr 0.05, momentum 0.9, weight decay 5e-4):

  torch-fp32   eager fp32
  torch-bf16   bf16 autocast
  torch-cpt    CPT 3-8/8 as the papers' code runs it: an fp32 fake-quant
               simulation of PAPERS.md section 1's quantizers (weights per
               output channel, activations per tensor, nearest; errors per
               tensor at 8 bits, stochastic)

and qtrain-run on qtrain's bundles (fp32, static 8/8, CPT 3-8/8, LDP), at
one thread and at all cores. It prints the median step time of each and its
ratio to PyTorch fp32 at the same thread count (above 1: faster than
PyTorch), and checks that each side trains: the mean loss of the last 5
steps must be below 0.9x the first step's, so a fast but wrong step fails.

    benchmarks/step/bench_step.py [--models lenet,convnet] [--steps 64]
        [--threads 1,2] [--bin build/bin] [--work DIR] [--smoke]

--smoke: mlp only, 16 steps, at one thread and at all cores (at least 2),
as CI runs it (test/benchmarks/step-smoke.test: both sides train; no
timing is asserted). Exit status 1 when a side does not train.
"""
import argparse
import csv
import gzip
import math
import os
import shutil
import statistics
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.2860, 0.3530
BATCH = 128
LR, MOMENTUM, WEIGHT_DECAY = 0.05, 0.9, 5e-4

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    sys.exit("bench_step.py: needs PyTorch: apt-get install python3-torch "
             "(run it with Debian's /usr/bin/python3)")


# --------------------------------------------------------------------------
# Data: the IDX files qtrain-run reads, normalized the same way.
# --------------------------------------------------------------------------

def read_idx(path):
    opener = gzip.open if not os.path.exists(path) else open
    name = path if os.path.exists(path) else path + ".gz"
    with opener(name, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).reshape(shape)


def batches(steps):
    images = read_idx(os.path.join(DATA, "train-images-idx3-ubyte"))
    labels = read_idx(os.path.join(DATA, "train-labels-idx1-ubyte"))
    x = (images[:steps * BATCH].float() / 255.0 - MEAN) / STD
    x = x.reshape(steps, BATCH, 1, 28, 28)
    y = labels[:steps * BATCH].long().reshape(steps, BATCH)
    return x, y


# --------------------------------------------------------------------------
# The models of examples/models, as torch.nn writes them (PyTorch's default
# initialization is the bundles' kaiming_uniform / bias_uniform).
# --------------------------------------------------------------------------

def make_model(name):
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                             nn.Linear(256, 10))
    if name == "lenet":
        return nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
            nn.Linear(84, 10))
    if name == "convnet":
        return nn.Sequential(
            nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(),
            nn.MaxPool2d(2), nn.Flatten(), nn.Linear(9216, 128), nn.ReLU(),
            nn.Linear(128, 10))
    raise SystemExit(f"bench_step.py: unknown model '{name}' (mlp, lenet, convnet)")


# --------------------------------------------------------------------------
# CPT as a fake-quant simulation (PAPERS.md section 1).
# --------------------------------------------------------------------------

def quantize(x, bits, mn, mx, stochastic=False):
    levels = 2 ** bits - 1
    s = torch.clamp((mx - mn) / levels, min=1e-8)
    v = (x - mn) / s
    if stochastic:
        v = v + torch.rand_like(v) - 0.5
    q = torch.round(torch.clamp(v, 0, levels))  # round half to even
    return q * s + mn


class FakeQuant(torch.autograd.Function):
    """Nearest rounding on a min/max grid, straight-through backward."""

    @staticmethod
    def forward(ctx, x, bits, per_channel):
        if per_channel:
            flat = x.reshape(x.shape[0], -1)
            shape = (-1,) + (1,) * (x.dim() - 1)
            mn = flat.min(1).values.reshape(shape)
            mx = flat.max(1).values.reshape(shape)
        else:
            mn, mx = x.min(), x.max()
        return quantize(x, bits, mn, mx)

    @staticmethod
    def backward(ctx, g):
        return g, None, None


class GradQuant(torch.autograd.Function):
    """Identity forward; the error quantized per tensor, stochastically."""

    @staticmethod
    def forward(ctx, x, bits):
        ctx.bits = bits
        return x

    @staticmethod
    def backward(ctx, g):
        return quantize(g, ctx.bits, g.min(), g.max(), stochastic=True), None


def cpt_bits(step, total, lo=3, hi=8, cycles=2):
    period = total // cycles
    value = lo + 0.5 * (hi - lo) * (1 - math.cos(math.pi * (step % period) / period))
    return int(round(value))  # Python rounds half to even, like rint


class CPTModel(nn.Module):
    """Every conv and linear of `model` with quantized W, A and E."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.bits = 8
        self.grad_bits = 8

    def forward(self, x):
        for layer in self.model:
            if isinstance(layer, (nn.Conv2d, nn.Linear)):
                w = FakeQuant.apply(layer.weight, self.bits, True)
                a = FakeQuant.apply(x, self.bits, False)
                if isinstance(layer, nn.Conv2d):
                    x = F.conv2d(a, w, layer.bias, layer.stride, layer.padding)
                else:
                    x = F.linear(a, w, layer.bias)
                x = GradQuant.apply(x, self.grad_bits)
            else:
                x = layer(x)
        return x


def run_torch(name, mode, threads, x, y):
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    model = make_model(name)
    if mode == "cpt":
        model = CPTModel(model)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM,
                          weight_decay=WEIGHT_DECAY)
    steps = x.shape[0]
    times, losses = [], []
    for t in range(steps):
        if mode == "cpt":
            model.bits = cpt_bits(t, steps)
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        if mode == "bf16":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = F.cross_entropy(model(x[t]), y[t])
        else:
            loss = F.cross_entropy(model(x[t]), y[t])
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - start)
        losses.append(float(loss))
    return times, losses


# --------------------------------------------------------------------------
# qtrain
# --------------------------------------------------------------------------

BUNDLES = {
    # bundle: compile flags; runs: (name, qtrain-run flags)
    "cpt": (["--schedule=cpt:3:8", "--bits=3:8", "--grad-bits=8", "--fp32"],
            [("qtrain-fp32", ["--schedule=fp32", "--grad-schedule=fp32"]),
             ("qtrain-static8", ["--schedule=static:8"]),
             ("qtrain-cpt", ["--schedule=cpt:3:8:cycles=2"])]),
    "ldp": (["--policy=ldp", "--bits=3:8", "--grad-bits=8"],
            [("qtrain-ldp", [])]),
}


def compile_bundles(name, bindir, work):
    for bundle, (flags, _) in BUNDLES.items():
        path = os.path.join(work, f"{name}-{bundle}.qtb")
        if os.path.exists(os.path.join(path, "manifest.json")):
            continue
        print(f"compiling {name} ({bundle}) ...", flush=True)
        subprocess.run([os.path.join(bindir, "qtrain-compile"),
                        os.path.join(ROOT, "examples", "models", name + ".mlir"),
                        "-o", path] + flags, check=True, stdout=subprocess.DEVNULL)


def run_qtrain(name, bundle, flags, threads, steps, bindir, work):
    """Step times and losses of qtrain-run, or None where it cannot run."""
    out = os.path.join(work, f"run-{name}-{bundle}-{threads}")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [os.path.join(bindir, "qtrain-run"), os.path.join(work, f"{name}-{bundle}.qtb"),
           "--epochs=1", f"--train-limit={steps * BATCH}", f"--test-limit={BATCH}",
           f"--threads={threads}", "--seed=1", "--progress=none", "--out=" + out] + flags
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
    times, losses = [], []
    with open(os.path.join(out, "steps.csv")) as f:
        for row in csv.DictReader(f):
            times.append(float(row["step_seconds"]))
            losses.append(float(row["loss"]))
    return (times, losses), None


def trains(losses):
    return statistics.fmean(losses[-5:]) < 0.9 * losses[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="lenet,convnet")
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--threads", default=f"1,{os.cpu_count()}")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench-step"))
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.models, args.steps = "mlp", 16
        args.threads = f"1,{max(2, os.cpu_count())}"
    models = args.models.split(",")
    threads = sorted({int(t) for t in args.threads.split(",")})
    os.makedirs(args.work, exist_ok=True)
    warmup = min(5, args.steps // 4)
    x, y = batches(args.steps)
    failed = []
    print(f"batch {BATCH}, {args.steps} steps (median after {warmup} warm-up steps); "
          f"ratio = PyTorch fp32 step / this step at the same threads (>1: faster)")
    for name in models:
        compile_bundles(name, args.bin, args.work)
        for t in threads:
            rows = []
            # PyTorch and qtrain alternate, so that drift hits both alike.
            torch_runs = [("torch-fp32", "fp32"), ("torch-bf16", "bf16"), ("torch-cpt", "cpt")]
            qtrain_runs = [(label, bundle, flags) for bundle, (_, runs) in BUNDLES.items()
                           for label, flags in runs]
            results = {}
            for i in range(max(len(torch_runs), len(qtrain_runs))):
                if i < len(torch_runs):
                    label, mode = torch_runs[i]
                    results[label] = (run_torch(name, mode, t, x, y), None)
                if i < len(qtrain_runs):
                    label, bundle, flags = qtrain_runs[i]
                    results[label] = run_qtrain(name, bundle, flags, t, args.steps,
                                                args.bin, args.work)
            base = statistics.median(results["torch-fp32"][0][0][warmup:])
            print(f"\n{name}, {t} thread{'s' if t > 1 else ''}:")
            print(f"  {'':16s} {'median ms':>10s} {'ratio':>7s} {'loss first':>11s} "
                  f"{'loss last5':>11s}  trains")
            for label, (res, why) in results.items():
                if res is None:
                    print(f"  {label:16s} {'n/a':>10s}   ({why})")
                    continue
                times, losses = res
                med = statistics.median(times[warmup:])
                ok = trains(losses)
                if not ok:
                    failed.append(f"{name} {label} {t} threads")
                print(f"  {label:16s} {med * 1e3:10.2f} {base / med:6.2f}x "
                      f"{losses[0]:11.4f} {statistics.fmean(losses[-5:]):11.4f}  "
                      f"{'yes' if ok else 'NO'}")
    if failed:
        print("\nbench_step.py: does not train: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
