"""Reads a peak from stdin ("... (N bytes) ...", as scripts/step-buffers.py
and qtrain-run print it) and says whether it is within the budget in bytes
given as the argument."""
import re
import sys

budget = int(sys.argv[1])
peaks = [int(m) for m in re.findall(r"peak[^\n(]*\((\d+) bytes\)",
                                    sys.stdin.read())]
if not peaks:
    sys.exit("peak-within.py: no peak in the input")
for peak in peaks:
    print(f"peak {peak} bytes: " +
          ("within the budget" if peak <= budget else
           f"over the budget of {budget} bytes"))
