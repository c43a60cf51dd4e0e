#!/usr/bin/env python3
"""Compares the loss curves of two qtrain-run steps.csv files.

    compare_losses.py A.csv B.csv --rtol=R [--steps=N]

Prints the largest relative difference |a - b| / |a| over the first N steps
(all common steps by default) and the step it is at; exits 1 when it is
above R or the files have no step in common.
"""
import argparse
import csv
import sys


def losses(path):
    with open(path) as f:
        return {int(r["step"]): float(r["loss"]) for r in csv.DictReader(f)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--rtol", type=float, required=True)
    parser.add_argument("--steps", type=int, default=0)
    args = parser.parse_args()
    a, b = losses(args.a), losses(args.b)
    steps = sorted(set(a) & set(b))
    if args.steps:
        steps = [s for s in steps if s < args.steps]
    if not steps:
        print("compare_losses: no step in common", file=sys.stderr)
        return 1
    worst, at = max((abs(a[s] - b[s]) / abs(a[s]), s) for s in steps)
    print(f"{len(steps)} steps: largest relative difference {worst:.3g} "
          f"at step {at}")
    return 0 if worst <= args.rtol else 1


if __name__ == "__main__":
    sys.exit(main())
