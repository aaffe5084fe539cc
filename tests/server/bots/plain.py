"""A standalone Python bot (stdlib only, as a participant would upload it): plays each default.

It tells its stderr a "secret" at every match, which only its owner may see.
"""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    kind = message.get("type")
    if kind == "hello":
        print(json.dumps({"type": "ready", "name": "plain", "protocol": 1}), flush=True)
    elif kind == "match_start":
        sys.stderr.write("plain bot: my secret strategy is the default\n")
        sys.stderr.flush()
    elif kind == "request":
        print(
            json.dumps({"type": "reply", "id": message["id"], "choice": message["default"]}),
            flush=True,
        )
    elif kind == "shutdown":
        break
