"""Ignores SIGTERM (and so does the child it leaves), plays well, and never exits by itself."""

import os
import signal
import time

from tests.hostile.os_bots._play import run, say

signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = os.fork()
if child == 0:
    time.sleep(3600)  # SIGTERM is still ignored here: inherited across fork
    os._exit(0)
say(f"child {child}")
run(name="ignore_sigterm")
time.sleep(3600)  # after shutdown, and SIGTERM ignored: only SIGKILL ends it
