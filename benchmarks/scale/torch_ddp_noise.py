#!/usr/bin/env python3
"""The fp32 reduction noise of data parallelism, in PyTorch: LeNet
(examples/torch/lenet.py) trained on Fashion-MNIST in file order at batch
128, once on whole batches and once as DistributedDataParallel computes it
with 2 workers (each half of the batch's gradient, averaged), from the same
weights, for 100 steps at lr 0.01 and 0.05 (momentum 0.9, wd 5e-4). Prints
the largest relative loss difference and the first step above 1e-3: what
curves.sh's qtrain figures are measured against.

    /usr/bin/python3 benchmarks/scale/torch_ddp_noise.py
"""
import copy
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "import"))
from torch_curves import BATCH, DATA, MEAN, MOMENTUM, STD, WD, build, read_idx  # noqa: E402

STEPS = 100


def losses(model, lr, workers):
    torch.set_num_threads(1)
    images = read_idx(os.path.join(DATA, "train-images-idx3-ubyte"))
    labels = read_idx(os.path.join(DATA, "train-labels-idx1-ubyte"))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=MOMENTUM, weight_decay=WD)
    out = []
    part = BATCH // workers
    for s in range(STEPS):
        x = images[s * BATCH:(s + 1) * BATCH].float()
        x = ((x / 255.0 - MEAN) / STD).reshape(BATCH, 1, 28, 28)
        y = labels[s * BATCH:(s + 1) * BATCH].long()
        opt.zero_grad()
        grads, total = None, 0.0
        for w in range(workers):
            model.zero_grad()
            loss = F.cross_entropy(model(x[w * part:(w + 1) * part]), y[w * part:(w + 1) * part])
            loss.backward()
            g = [p.grad.clone() for p in model.parameters()]
            grads = g if grads is None else [a + b for a, b in zip(grads, g)]
            total += loss.item()
        for p, g in zip(model.parameters(), grads):
            p.grad = g / workers
        opt.step()
        out.append(total / workers)
    return out


def main():
    for lr in (0.01, 0.05):
        model = build("lenet")
        one = losses(copy.deepcopy(model), lr, 1)
        two = losses(copy.deepcopy(model), lr, 2)
        d = [abs(a - b) / abs(a) for a, b in zip(one, two)]
        first = next((i for i, v in enumerate(d) if v > 1e-3), None)
        print(f"PyTorch lr {lr}: {STEPS} steps, largest relative difference {max(d):.2e} "
              f"(step {d.index(max(d))}); first above 1e-3: "
              f"{'none' if first is None else 'step %d' % first}")


if __name__ == "__main__":
    main()
