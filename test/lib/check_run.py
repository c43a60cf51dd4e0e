#!/usr/bin/env python3
"""Checks a qtrain-run output directory: the mean training loss falls from
the first epoch to the last and the final test accuracy is at least
MIN_ACCURACY (a fraction); prints what it measured.

    check_run.py RUN_DIR MIN_ACCURACY
"""
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1] + "/epochs.csv")))
first, last = float(rows[0]["train_loss"]), float(rows[-1]["train_loss"])
accuracy = float(rows[-1]["test_accuracy"])
print(f"epochs {len(rows)}: train loss {first:.4f} -> {last:.4f}, "
      f"test accuracy {accuracy:.4f}")
ok = last < first and accuracy >= float(sys.argv[2])
print("check-run: " + ("PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
