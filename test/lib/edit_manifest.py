#!/usr/bin/env python3
"""Edits BUNDLE/manifest.json in place, as a hand edit or a mix-up would.

    edit_manifest.py BUNDLE EDIT...

EDIT is one of
  swap-parameters    parameters[0] and parameters[2] trade places
  shape              parameters[1]'s first dimension halves
  no-sites           "sites": []
  entry-malloc       entry.train becomes "malloc"
  drop-sha           library_sha256 is removed
  sha-of=OTHER       library_sha256 becomes OTHER/manifest.json's
"""
import json
import sys

path = sys.argv[1] + "/manifest.json"
m = json.load(open(path))
for edit in sys.argv[2:]:
    if edit == "swap-parameters":
        p = m["parameters"]
        p[0], p[2] = p[2], p[0]
    elif edit == "shape":
        m["parameters"][1]["shape"][0] //= 2
    elif edit == "no-sites":
        m["sites"] = []
    elif edit == "entry-malloc":
        m["entry"]["train"] = "malloc"
    elif edit == "drop-sha":
        del m["library_sha256"]
    elif edit.startswith("sha-of="):
        other = json.load(open(edit[len("sha-of="):] + "/manifest.json"))
        m["library_sha256"] = other["library_sha256"]
    else:
        sys.exit("unknown edit " + edit)
json.dump(m, open(path, "w"), indent=2)
