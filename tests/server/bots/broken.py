"""A broken version: answers the handshake, then replies with a choice that is never legal."""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    kind = message.get("type")
    if kind == "hello":
        print(json.dumps({"type": "ready", "name": "broken", "protocol": 1}), flush=True)
    elif kind == "request":
        print(
            json.dumps({"type": "reply", "id": message["id"], "choice": "not-a-card"}), flush=True
        )
    elif kind == "shutdown":
        break
