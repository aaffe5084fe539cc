"""Sleeps for ``argv[1]`` seconds before it reads hello (longer than the start-up limit)."""

import sys
import time

from tests.hostile.os_bots._play import run

time.sleep(float(sys.argv[1]))
run(name="slow_start")
