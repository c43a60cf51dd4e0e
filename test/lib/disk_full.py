#!/usr/bin/env python3
"""Runs a command with a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored, so
writes past it fail with EFBIG as on a full disk) and prints its exit
status and stderr.

    disk_full.py LIMIT_BYTES COMMAND...
"""
import resource
import signal
import subprocess
import sys

limit = int(sys.argv[1])


def limited():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


p = subprocess.run(sys.argv[2:], preexec_fn=limited, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)
print(f"exit {p.returncode}")
sys.stdout.write(p.stderr.decode())
