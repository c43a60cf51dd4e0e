#!/usr/bin/env python3
"""Writes a tiny dataset in one of qtrain-run's formats (docs/run.md, "Data"),
for tests: no download, no numpy.

  make_dataset.py cifar10 DIR [--train=N] [--test=N] [--bad-label]
  make_dataset.py cifar100 DIR [--train=N] [--test=N] [--classes=K]
  make_dataset.py npy DIR [--train=N] [--test=N] [--shape=C,H,W | H,W]
                          [--dtype=u1|f4] [--labels=u1|i4|i8] [--bad-label]
                          [--classes=K]
  make_dataset.py tokens DIR [--train=N] [--test=N] [--seq=S] [--vocab=V]
                             [--dtype=u1|i4|i8] [--classes=K] [--bad-id=ID]

Samples are learnable: each class has its own mean brightness per channel,
plus deterministic noise. CIFAR-100's coarse label is the fine one // 5
(--classes bounds the fine labels, default 100). --bad-label puts an out-of-range label (10 for
CIFAR-10, -1 for npy) in the first test sample.

tokens writes npy token ids (N x S) for a text classifier: ids K..V-1 are
noise; a sample of class k holds marker id k at one position and no other
marker, so the label is which marker occurs. --bad-id puts ID at the first
test sample's first position.
"""

import argparse
import os
import struct
import sys


def samples(count, size, classes, seed, channels):
    """(label, pixel bytes) pairs; pixel i of a class-k sample is around
    k * 240 / classes (shifted per channel) plus noise from an LCG."""
    state = seed * 2654435761 % 2**32
    out = []
    plane = size // channels
    for s in range(count):
        label = (s * 7 + seed) % classes
        pixels = bytearray(size)
        for i in range(size):
            state = (state * 1103515245 + 12345) % 2**31
            noise = (state >> 16) % 40
            base = (label * 240 // classes + 30 * (i // plane)) % 216
            pixels[i] = base + noise
        out.append((label, bytes(pixels)))
    return out


def token_samples(count, seq, vocab, classes, seed):
    """(label, ids) pairs: noise ids from an LCG, the label's marker at a
    position drawn from it too."""
    state = seed * 2654435761 % 2**32
    out = []
    for s in range(count):
        label = (s * 7 + seed) % classes
        ids = []
        for _ in range(seq):
            state = (state * 1103515245 + 12345) % 2**31
            ids.append(classes + (state >> 16) % (vocab - classes))
        state = (state * 1103515245 + 12345) % 2**31
        ids[(state >> 16) % seq] = label
        out.append((label, ids))
    return out


def npy(path, descr, shape, data):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(data)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("format", choices=["cifar10", "cifar100", "npy", "tokens"])
    p.add_argument("dir")
    p.add_argument("--train", type=int, default=100)
    p.add_argument("--test", type=int, default=20)
    p.add_argument("--shape", default="3,32,32")
    p.add_argument("--dtype", default="u1", choices=["u1", "f4", "i4", "i8"])
    p.add_argument("--seq", type=int, default=8)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--bad-id", type=int)
    p.add_argument("--labels", default="i8", choices=["u1", "i4", "i8"])
    p.add_argument("--classes", type=int)
    p.add_argument("--bad-label", action="store_true")
    a = p.parse_args()
    os.makedirs(a.dir, exist_ok=True)

    if a.format in ("cifar10", "cifar100"):
        classes = 10 if a.format == "cifar10" else a.classes or 100
        train = samples(a.train, 3072, classes, 1, 3)
        test = samples(a.test, 3072, classes, 2, 3)

        def records(items, bad=False):
            out = bytearray()
            for n, (label, pixels) in enumerate(items):
                if bad and n == 0:
                    label = classes
                if a.format == "cifar100":
                    out += bytes([label // 5])
                out += bytes([label]) + pixels
            return bytes(out)

        if a.format == "cifar10":
            per = (len(train) + 4) // 5
            for b in range(5):
                with open(os.path.join(a.dir, "data_batch_%d.bin" % (b + 1)),
                          "wb") as f:
                    f.write(records(train[b * per:(b + 1) * per]))
            with open(os.path.join(a.dir, "test_batch.bin"), "wb") as f:
                f.write(records(test, a.bad_label))
        else:
            with open(os.path.join(a.dir, "train.bin"), "wb") as f:
                f.write(records(train))
            with open(os.path.join(a.dir, "test.bin"), "wb") as f:
                f.write(records(test, a.bad_label))
        return 0

    if a.format == "tokens":
        classes = a.classes or 4
        code = {"u1": ("|u1", "B"), "i4": ("<i4", "<i"),
                "i8": ("<i8", "<q")}[a.dtype]
        for split, count, seed in (("train", a.train, 1), ("test", a.test, 2)):
            items = token_samples(count, a.seq, a.vocab, classes, seed)
            if a.bad_id is not None and split == "test":
                items[0][1][0] = a.bad_id
            x = b"".join(struct.pack(code[1], v)
                         for _, ids in items for v in ids)
            y = b"".join(struct.pack("<q", label) for label, _ in items)
            npy(os.path.join(a.dir, split + "_x.npy"), code[0],
                [count, a.seq], x)
            npy(os.path.join(a.dir, split + "_y.npy"), "<i8", [count], y)
        return 0

    shape = [int(d) for d in a.shape.split(",")]
    size = 1
    for d in shape:
        size *= d
    channels = shape[0] if len(shape) == 3 else 1
    label_code = {"u1": ("|u1", "B"), "i4": ("<i4", "<i"),
                  "i8": ("<i8", "<q")}[a.labels]
    classes = a.classes or 10
    for split, count, seed in (("train", a.train, 1), ("test", a.test, 2)):
        items = samples(count, size, classes, seed, channels)
        if a.dtype == "u1":
            x = b"".join(pixels for _, pixels in items)
        else:
            x = b"".join(struct.pack("<%df" % size,
                                     *[v / 255.0 for v in pixels])
                         for _, pixels in items)
        labels = [label for label, _ in items]
        if a.bad_label and split == "test":
            labels[0] = -1
        y = b"".join(struct.pack(label_code[1], v) for v in labels)
        npy(os.path.join(a.dir, split + "_x.npy"),
            "|u1" if a.dtype == "u1" else "<f4", [count] + shape, x)
        npy(os.path.join(a.dir, split + "_y.npy"), label_code[0], [count], y)
    return 0


if __name__ == "__main__":
    sys.exit(main())
