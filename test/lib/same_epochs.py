#!/usr/bin/env python3
"""Compares the epoch logs of two runs, every figure but the wall time.

    same_epochs.py RUN_A RUN_B

Reads RUN/epochs.jsonl of both (train_loss and test_loss as the runs wrote
them: round-trip decimal doubles, so equal text means equal bits) and
prints "same epochs: N" when every row matches, or the first difference
and exits 1.
"""
import json
import sys


def rows(run):
    out = []
    with open(run + "/epochs.jsonl") as f:
        for line in f:
            row = json.loads(line)
            row.pop("seconds", None)
            out.append(row)
    return out


a, b = rows(sys.argv[1]), rows(sys.argv[2])
for i in range(max(len(a), len(b))):
    ra = a[i] if i < len(a) else None
    rb = b[i] if i < len(b) else None
    if ra != rb:
        print("epochs differ at row %d:\n  %s: %s\n  %s: %s" %
              (i, sys.argv[1], ra, sys.argv[2], rb))
        sys.exit(1)
print("same epochs: %d" % len(a))
