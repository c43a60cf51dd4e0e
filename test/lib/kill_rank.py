#!/usr/bin/env python3
"""Kills one rank of a running MPI job, as a crashed machine would.

    kill_rank.py --rank=R --when=FILE -- mpirun ... qtrain-run ...

Starts the command, waits until FILE exists (a checkpoint the run writes),
then sends SIGKILL to the process of rank R (found by the OMPI_COMM_WORLD_RANK
in its environment, among the command's descendants) and waits for the job
to end. Prints the job's stderr and its exit status; exits 1 when the job
ended by itself before FILE appeared or R was found, else 0.
"""
import argparse
import os
import signal
import subprocess
import sys
import time


def descendants(pid):
    """The pids below `pid` in the process tree."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError):
            continue
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def rank_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            for item in f.read().split(b"\0"):
                if item.startswith(b"OMPI_COMM_WORLD_RANK="):
                    return int(item.split(b"=", 1)[1])
    except OSError:
        pass
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--when", required=True)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    job = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.time() + args.timeout
    killed = None
    while time.time() < deadline and job.poll() is None:
        if os.path.exists(args.when):
            for pid in descendants(job.pid):
                if rank_of(pid) == args.rank and "qtrain-run" in open(
                        f"/proc/{pid}/cmdline", "rb").read().decode(
                            errors="replace"):
                    os.kill(pid, signal.SIGKILL)
                    killed = pid
                    break
            if killed:
                break
        time.sleep(0.005)
    if not killed:
        job.kill()
    _, err = job.communicate()
    sys.stdout.write(err)
    print(f"kill_rank: job exit status {job.returncode}")
    if not killed:
        print("kill_rank: the job ended before rank "
              f"{args.rank} could be killed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
