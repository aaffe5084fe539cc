"""After the handshake, shrinks its input pipe to one page and never reads it again."""

import fcntl
import json
import sys
import time

F_SETPIPE_SZ = 1031  # Linux
sys.stdin.readline()  # hello
try:
    fcntl.fcntl(0, F_SETPIPE_SZ, 4096)
except OSError as error:
    sys.stderr.write(f"pipe size unchanged: {error}\n")
sys.stdout.write(json.dumps({"type": "ready", "name": "stop_reading", "protocol": 1}) + "\n")
sys.stdout.flush()
time.sleep(3600)
