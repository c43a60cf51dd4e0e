#!/usr/bin/env python3
"""Kills qtrain-run with SIGKILL at random moments, many times, resuming from
the last checkpoint each time, then lets the run finish. With a checkpoint
every step, some kills land while a checkpoint is being written (its
PATH.tmp is left behind); at least one must. Passes when every
checkpoint left behind was loadable (the run resumed from it, or started
over when none had been written yet) and the final checkpoint and logs are
identical to those of an uninterrupted run: no step lost or repeated.
Every other start is killed as soon as its next checkpoint write begins,
so that kills during a write do not depend on luck.

Each start is killed a random moment after it has written a new checkpoint,
not after a fixed delay: how long a start takes to load the bundle and the
data depends on the machine's load, and kills that all land before the
first checkpoint would test nothing.

    kill_test.py QTRAIN_RUN BUNDLE WORK_DIR KILLS SEED [RUN_ARGS...]
"""
import os
import random
import signal
import subprocess
import sys
import time

run, bundle, work, kills, seed = sys.argv[1:6]
extra = sys.argv[6:]
kills = int(kills)
rng = random.Random(int(seed))
common = [run, bundle, "--checkpoint-every=1", "--progress=none"] + extra


def logs(out):
    """steps.csv and epochs.csv without the wall-clock columns."""
    rows = []
    for name, skip in (("steps.csv", 7), ("epochs.csv", 7)):
        with open(os.path.join(out, name)) as f:
            for line in f:
                fields = line.rstrip("\n").split(",")
                rows.append(",".join(f for i, f in enumerate(fields) if i != skip))
    return rows


def stamp(path):
    """What changes when a new file is renamed onto `path` (None: absent)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


reference = os.path.join(work, "reference")
subprocess.run(common + ["--out=" + reference, "--overwrite"], check=True,
               stdout=subprocess.DEVNULL)

out = os.path.join(work, "killed")
checkpoint = os.path.join(out, "checkpoint.qck")
resumed = killed = during_write = 0
for i in range(kills):
    args = common + ["--out=" + out]
    args += ["--resume=" + checkpoint] if os.path.exists(checkpoint) else ["--overwrite"]
    resumed += os.path.exists(checkpoint)
    before = stamp(checkpoint)
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # Until this start has renamed a new checkpoint into place (or ended,
    # or a minute passed), then a random moment more.
    deadline = time.monotonic() + 60
    while (p.poll() is None and stamp(checkpoint) == before and
           time.monotonic() < deadline):
        time.sleep(0.002)
    if i % 2:
        # Every other start is killed as soon as it starts writing its next
        # checkpoint: a write takes a few milliseconds among a step's work,
        # so kills at random moments alone may all miss one (they did, on a
        # loaded machine). Polled without sleeping, to see the PATH.tmp.
        deadline = time.monotonic() + 10
        while (p.poll() is None and not os.path.exists(checkpoint + ".tmp")
               and time.monotonic() < deadline):
            pass
    else:
        time.sleep(rng.uniform(0.0, 0.3))
    if p.poll() is None:
        p.send_signal(signal.SIGKILL)
        killed += 1
    _, err = p.communicate()
    # A checkpoint being written is PATH.tmp until it is renamed into place.
    if os.path.exists(checkpoint + ".tmp"):
        during_write += 1
    if p.returncode not in (0, -signal.SIGKILL):
        print(f"kill {i}: qtrain-run failed ({p.returncode}): {err.decode()}")
        print("kill-test: FAIL")
        sys.exit(1)
# Finish the run.
args = common + ["--out=" + out]
args += ["--resume=" + checkpoint] if os.path.exists(checkpoint) else ["--overwrite"]
subprocess.run(args, check=True, stdout=subprocess.DEVNULL)

same_checkpoint = open(checkpoint, "rb").read() == open(
    os.path.join(reference, "checkpoint.qck"), "rb").read()
same_logs = logs(out) == logs(reference)
print(f"{killed} of {kills} starts killed ({during_write} while writing a "
      f"checkpoint), {resumed} resumed from a checkpoint; "
      f"final checkpoint identical: {same_checkpoint}; logs identical: {same_logs}")
ok = same_checkpoint and same_logs and killed >= kills // 2 and during_write > 0
print("kill-test: " + ("PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
