#!/usr/bin/env python3
"""Checks that every schedule example in a tool's --help parses: reads the
help text, takes the examples of its --schedule and --grad-schedule entries
(the words after "e.g.", up to the ';' that ends the list) and runs
`qtrain-schedule EXAMPLE --steps=STEPS` on each. Prints one line per
example, "ok" or "FAIL" with qtrain-schedule's error, then a summary.

    help_schedules.py HELP_FILE QTRAIN_SCHEDULE [STEPS]
"""
import re
import subprocess
import sys

help_file, schedule_tool = sys.argv[1], sys.argv[2]
steps = sys.argv[3] if len(sys.argv) > 3 else "64000"
lines = open(help_file).read().splitlines()

# The text of each --schedule / --grad-schedule entry: its first line and
# the continuation lines indented below it.
entries = []
for i, line in enumerate(lines):
    if re.match(r"\s+--(grad-)?schedule=", line):
        text = line
        for more in lines[i + 1:]:
            if re.match(r"\s+--", more) or not more.startswith("     "):
                break
            text += " " + more.strip()
        entries.append(text)

examples = []
for text in entries:
    for match in re.finditer(r"e\.g\.\s+([^;)]*)", text):
        for word in re.split(r"[,\s]+", match.group(1)):
            if word and word not in ("or", "and"):
                examples.append(word)

failed = 0
for example in examples:
    result = subprocess.run([schedule_tool, example, "--steps=" + steps],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    if result.returncode == 0:
        print("ok " + example)
    else:
        failed += 1
        print("FAIL " + example + ": " + result.stderr.strip())
print(f"help-schedules: {len(examples)} examples, {failed} failed")
sys.exit(1 if failed or not examples else 0)
