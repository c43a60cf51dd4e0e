#!/usr/bin/env python3
"""Makes DIR and the files in it read-only, runs a command that cannot
write there (as user nobody when run as root, since root ignores
permissions), restores the permissions and prints the command's exit
status and stderr.

    read_only.py DIR COMMAND...
"""
import os
import stat
import subprocess
import sys

directory = sys.argv[1]
paths = [directory] + [os.path.join(directory, name)
                       for name in os.listdir(directory)]
modes = {path: stat.S_IMODE(os.stat(path).st_mode) for path in paths}
for path, mode in modes.items():
    os.chmod(path, mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def unprivileged():
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)


try:
    p = subprocess.run(sys.argv[2:], preexec_fn=unprivileged,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
finally:
    for path, mode in modes.items():
        os.chmod(path, mode)
print(f"exit {p.returncode}")
sys.stdout.write(p.stderr.decode())
