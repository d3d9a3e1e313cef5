"""Swaps pairs of paths with renameat2(RENAME_EXCHANGE) in a tight loop: a local user racing the server's host-side
work on a workspace it may write. Runs on the host (never in a sandbox), as an ordinary user, and acts only on the
paths it is given, which the test made for it. Prints "ready" once looping; stops itself after `seconds` or
`rounds`, whichever comes first (the test also kills it by pid).

usage: swapper.py SECONDS ROUNDS A1 B1 [A2 B2 ...]
"""
import ctypes
import os
import sys
import time

AT_FDCWD = -100
RENAME_EXCHANGE = 2

libc = ctypes.CDLL(None, use_errno=True)
renameat2 = libc.renameat2
renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]

seconds, rounds = float(sys.argv[1]), int(sys.argv[2])
paths = [p.encode() for p in sys.argv[3:]]
pairs = list(zip(paths[0::2], paths[1::2]))
end = time.monotonic() + seconds
print("ready", flush=True)
n = 0
while n < rounds:
    for a, b in pairs:
        renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    n += 1
    # Still swapping all the time, but letting the server's side of the race run on a busy machine.
    os.sched_yield()
    if n % 512 == 0 and time.monotonic() > end:
        break
print("swapped %d" % n, flush=True)
