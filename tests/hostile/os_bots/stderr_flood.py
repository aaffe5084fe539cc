"""After the handshake, writes stderr as fast as it can for ever and never reads stdin."""

import json
import os
import sys

sys.stdin.readline()  # hello
sys.stdout.write(json.dumps({"type": "ready", "name": "stderr_flood", "protocol": 1}) + "\n")
sys.stdout.flush()
chunk = b"flood " * 10922 + b"\n"  # 64 KiB a write
while True:
    os.write(2, chunk)
