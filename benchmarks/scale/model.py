#!/usr/bin/env python3
"""The scaling model of data-parallel qtrain (docs/scale-out.md).

    step = compute + max(0, exchange - overlap)
    exchange = 2 (P - 1) / P * bytes / bandwidth + 2 (P - 1) * latency

(a ring all-reduce of the gradients, which is also what qtrain's
reduce-scatter + all-gather sends), with weak scaling: every worker keeps
its batch of 128 samples, so compute per step does not change with P.

Compute per sample is measured on this machine's core for LeNet and
ConvNet (throughput.sh's one-thread runs, read from --measured), and
derived for ResNet-20 and ResNet-50 from their multiply-accumulates at
ConvNet's measured rate (modelled). Accelerator workers are modelled at an
assumed sustained rate (ACCEL_FLOPS). Gradient bytes per element: fp32 4,
bf16 2, int8 2 up to 258 workers (int16 sums), 4 beyond (int32 sums).
Overlap: qtrain today exchanges after the whole step (overlap 0); "with
overlap" models a bucketed exchange that hides behind the backward pass
(two thirds of compute).

    python3 benchmarks/scale/model.py --measured=/tmp/qtrain-throughput.json
"""
import argparse
import json

BATCH = 128
# Parameters, and forward multiply-accumulates per sample: qtrain-compile's
# manifests (sites[].macs / batch) for the first three; ResNet-50 at 224x224
# from its paper (He et al. 2016: 25.6 M parameters, 4.1 G multiply-adds).
MODELS = {
    "lenet": (61_706, 416_520),
    "convnet": (1_199_882, 11_992_448),
    "resnet20": (272_474, 40_813_184),
    "resnet50": (25_557_032, 4_100_000_000),
}
# A training step is about three forward passes of MACs (forward, input and
# weight gradients), 2 FLOPs each.
TRAIN_FLOPS_PER_MAC = 6
# Assumed sustained training rate of one accelerator: an H200's dense bf16
# peak is 989 TFLOP/s; 40% of it.
ACCEL_FLOPS = 0.4 * 989e12
# Links: bytes per second one way, and the latency of one ring hop.
LINKS = {
    # Measured here: qtrain-bench-allreduce, 2 ranks, fp32 (bus GB/s at 4 Mi
    # elements; the time of a 1 Ki-element all-reduce).
    "on-node (shared memory)": (3.0e9, 6e-6),
    "100 Gb/s network": (100e9 / 8, 5e-6),
    "400 Gb/s network": (400e9 / 8, 5e-6),
    "NVLink (450 GB/s)": (450e9, 2e-6),
}
WORKERS = (8, 64, 1000)


def element_bytes(mode, workers):
    if mode == "fp32":
        return 4
    if mode == "bf16":
        return 2
    return 2 if workers * 127 <= 32767 else 4


def exchange_seconds(params, mode, workers, link):
    bandwidth, latency = LINKS[link]
    if workers == 1:
        return 0.0
    payload = params * element_bytes(mode, workers)
    if mode == "int8":
        payload += 4 * -(-params // 4096)
    return (2 * (workers - 1) / workers * payload / bandwidth +
            2 * (workers - 1) * latency)


def step(compute, params, mode, workers, link, overlap):
    exchange = exchange_seconds(params, mode, workers, link)
    hidden = 2 / 3 * compute if overlap else 0.0
    return compute + max(0.0, exchange - hidden), exchange


def compute_per_sample(measured):
    """Seconds per training sample on one core of this machine."""
    out = {}
    for name in ("lenet", "convnet"):
        out[name] = 1.0 / measured[name]["one_thread"]
    rate = MODELS["convnet"][1] / out["convnet"]  # forward MACs per second
    for name in ("resnet20", "resnet50"):
        out[name] = MODELS[name][1] / rate
    return out


def table(title, compute, overlap, link):
    print(f"\n{title}, {link}: efficiency (step time)\n")
    print("| model | compute per step | exchange | " +
          " | ".join(f"{p} workers" for p in WORKERS) + " |")
    print("|---|---|---|" + "---|" * len(WORKERS))
    for name, (params, _) in MODELS.items():
        c = compute[name] * BATCH
        for mode in ("fp32", "bf16", "int8"):
            cells = []
            for p in WORKERS:
                total, _ = step(c, params, mode, p, link, overlap)
                cells.append(f"{100 * c / total:.0f}% ({ms(total)})")
            print(f"| {name} | {ms(c)} | {mode} | " + " | ".join(cells) + " |")


def ms(seconds):
    return f"{1e3 * seconds:.3g} ms"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--measured", required=True,
                        help="throughput.sh's JSON (samples/s of this machine)")
    args = parser.parse_args()
    measured = json.load(open(args.measured))
    cpu = compute_per_sample(measured)

    print("## This machine, 2 ranks on one node (measured vs modelled)\n")
    print("| model | 1 process, 1 thread | 2 ranks measured | 2 ranks modelled | "
          "exchange measured | exchange modelled |")
    print("|---|---|---|---|---|---|")
    for name in ("lenet", "convnet"):
        m = measured[name]
        # One rank: half the global batch at one thread.
        c = cpu[name] * BATCH / 2
        total, x = step(c, MODELS[name][0], "fp32", 2, "on-node (shared memory)", False)
        print(f"| {name} | {m['one_thread']:.0f}/s | {m['two_ranks']:.0f}/s | "
              f"{BATCH / total:.0f}/s | {m['exchange_ms']:.2f} ms | {1e3 * x:.2f} ms |")

    print("\nModelled scaling, per-worker batch "
          f"{BATCH} (weak scaling); efficiency = compute / step time.")
    for link in ("100 Gb/s network", "400 Gb/s network"):
        table("### Workers like this machine's core, qtrain today (no overlap)",
              cpu, False, link)
    accel = {n: TRAIN_FLOPS_PER_MAC * MODELS[n][1] / ACCEL_FLOPS for n in MODELS}
    for link in ("400 Gb/s network", "NVLink (450 GB/s)"):
        table("### Accelerators (assumed 396 TFLOP/s sustained), no overlap",
              accel, False, link)
        table("### Accelerators, exchange overlapped with the backward pass",
              accel, True, link)

if __name__ == "__main__":
    main()
