#!/usr/bin/env python3
"""Compile time of qtrain-compile against depth, on one core.

Compiles the CIFAR ResNet-8/20/32/56 (examples/models/gen_models.py resnet)
and a ResNet-18 (gen_models.py resnet18, batch 32) with --schedule=cpt:3:8
(CPT 3-8/8 forward variants, 8-bit backward) under `taskset -c 0`, and
prints a table of depth, CPU seconds, wall seconds and peak RSS (from
/usr/bin/time), then the least-squares slope of CPU seconds per layer over
the CIFAR ResNets.

  benchmarks/compile/compile_time.py [--build=build] [--depths=8,20,32,56]
      [--batch=8] [--no-resnet18] [--work=DIR]
"""

import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def generate(args, path):
    with open(path, "w") as out:
        subprocess.run([sys.executable, os.path.join(ROOT, "examples/models/gen_models.py")] + args,
                       stdout=out, check=True)


def compile_once(build, model, out_dir):
    """CPU seconds (user + sys), wall seconds and peak RSS (MiB) of one compile."""
    report = out_dir + ".time"
    cmd = ["taskset", "-c", "0", "/usr/bin/time", "-f", "%U %S %e %M", "-o", report,
           os.path.join(build, "bin/qtrain-compile"), model, "-o", out_dir,
           "--schedule=cpt:3:8"]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"qtrain-compile {model} failed:\n{done.stderr}")
    user, system, wall, rss = open(report).read().split()[-4:]
    return float(user) + float(system), float(wall), int(rss) / 1024


def slope(points):
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    return sxy / sxx, my - sxy / sxx * mx


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--depths", default="8,20,32,56")
    parser.add_argument("--batch", type=int, default=8, help="batch of the CIFAR ResNets")
    parser.add_argument("--no-resnet18", action="store_true")
    parser.add_argument("--work", help="keep models and bundles here")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="qtrain-compile-time-")
    os.makedirs(work, exist_ok=True)

    rows, points = [], []
    for depth in (int(d) for d in args.depths.split(",")):
        model = os.path.join(work, f"resnet{depth}.mlir")
        generate(["resnet", f"--depth={depth}", f"--batch={args.batch}"], model)
        cpu, wall, rss = compile_once(args.build, model, os.path.join(work, f"resnet{depth}.qtb"))
        rows.append((f"ResNet-{depth}", depth, args.batch, cpu, wall, rss))
        points.append((depth, cpu))
        print(f"  ResNet-{depth}: {cpu:.1f} s", file=sys.stderr, flush=True)
    if not args.no_resnet18:
        model = os.path.join(work, "resnet18.mlir")
        generate(["resnet18", "--batch=32"], model)
        cpu, wall, rss = compile_once(args.build, model, os.path.join(work, "resnet18.qtb"))
        rows.append(("ResNet-18", 18, 32, cpu, wall, rss))

    print("| model | layers | batch | CPU s | wall s | peak RSS MiB |")
    print("|---|---|---|---|---|---|")
    for name, depth, batch, cpu, wall, rss in rows:
        print(f"| {name} | {depth} | {batch} | {cpu:.1f} | {wall:.1f} | {rss:.0f} |")
    if len(points) >= 2:
        s, b = slope(points)
        print(f"\nslope over the CIFAR ResNets: {s:.2f} s per layer (intercept {b:.1f} s)")


if __name__ == "__main__":
    main()
