"""Checks that the work of qtrain-promote-accumulators grows linearly.

Arguments: the outputs of qtrain-promote-accumulators=report-work on three
models whose sizes are in arithmetic progression (4, 8, 12 layers). Prints,
per count, 'linear' when the two increments are positive and agree to 1%
(the IR of a deeper model differs by a few shared constants, so the counts
are affine only up to a handful of operations; a quadratic pass differs by
two thirds), and the counts.
"""

import re
import sys

REPORT = re.compile(r"qtrain-promote-accumulators: promoted (\d+) "
                    r"accumulators, looked at (\d+) operations")


def report(path):
    found = REPORT.findall(open(path).read())
    if len(found) != 1:
        sys.exit(f"{path}: expected one report, found {len(found)}")
    return [int(v) for v in found[0]]


reports = [report(path) for path in sys.argv[1:]]
for k, name in enumerate(("promoted", "visited")):
    counts = [r[k] for r in reports]
    steps = [b - a for a, b in zip(counts, counts[1:])]
    ok = steps[0] > 0 and all(abs(s - steps[0]) * 100 <= steps[0]
                              for s in steps)
    print(f"{name}: {'linear' if ok else 'not linear'} {counts}")
