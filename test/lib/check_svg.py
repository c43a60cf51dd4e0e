#!/usr/bin/env python3
"""Checks a plot qtrain-run wrote: every text label lies inside the canvas
(estimating a character at font-size 12 as at least 6 px wide, so that a
label that is cut off fails), and with --markers N the plot has at least N
point markers (circles). Prints what it found.

    check_svg.py FILE.svg [--markers N]
"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
CHAR = 6.0

path = sys.argv[1]
markers = int(sys.argv[sys.argv.index("--markers") + 1]) \
    if "--markers" in sys.argv else 0
root = ET.parse(path).getroot()
width = float(root.get("width"))
view = root.get("viewBox")
if view:
    width = min(width, float(view.split()[2]))
ok = True
for text in root.iter(NS + "text"):
    if text.get("transform") or text.get("x") is None:
        continue
    x, label = float(text.get("x")), text.text or ""
    size = float(text.get("font-size", "12")) / 12.0
    extent = len(label) * CHAR * size
    anchor = text.get("text-anchor", "start")
    lo = x - extent if anchor == "end" else \
        x - extent / 2 if anchor == "middle" else x
    hi = x if anchor == "end" else \
        x + extent / 2 if anchor == "middle" else x + extent
    if lo < 0 or hi > width:
        ok = False
        print(f"cut off: '{label}' spans [{lo:g}, {hi:g}] of [0, {width:g}]")
circles = len(list(root.iter(NS + "circle")))
print(f"{path.split('/')[-1]}: width {width:g}, {circles} markers")
if circles < markers:
    ok = False
print("check-svg: " + ("PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
