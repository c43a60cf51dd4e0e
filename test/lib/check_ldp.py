#!/usr/bin/env python3
"""Checks the per-layer bits of an LDP run (qtrain-run on a bundle compiled
with --policy=ldp): every step logs one bitwidth per site within [MIN, MAX],
some site's bits change over training, and the sites end at different
bits. With --lambda-grows, instead of the last two, the logged lambda must
rise (a target cost below the reachable one). Prints what it measured.

    check_ldp.py RUN_DIR MIN MAX [--lambda-grows]
"""
import csv
import sys

run, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = list(csv.DictReader(open(run + "/steps.csv")))
bits = [[int(b) for b in r["site_bits"].split(";")] for r in rows]
lambdas = [float(r["ldp_lambda"]) for r in rows]
ok = bool(bits) and all(lo <= b <= hi for step in bits for b in step)
changes = sum(1 for a, b in zip(bits, bits[1:]) if a != b)
print(f"steps {len(rows)}, sites {len(bits[0]) if bits else 0}; "
      f"first {bits[0] if bits else []}, last {bits[-1] if bits else []}; "
      f"{changes} steps change the bits")
if "--lambda-grows" in sys.argv:
    print(f"lambda {lambdas[0]:g} -> {lambdas[-1]:g}")
    ok = ok and lambdas[-1] > lambdas[0]
else:
    ok = ok and changes > 0 and len(set(bits[-1])) > 1
print("check-ldp: " + ("PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
