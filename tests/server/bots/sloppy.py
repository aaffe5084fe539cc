"""Passes newmarket check, then in each competition match (ids ``g<group>r<rotation>``)
answers its first request with a choice that is not legal: one fault a match, whose
wire transcript only its owner may read."""

import json
import re
import sys

faulty = False
for line in sys.stdin:
    message = json.loads(line)
    kind = message.get("type")
    if kind == "hello":
        print(json.dumps({"type": "ready", "name": "sloppy", "protocol": 1}), flush=True)
    elif kind == "match_start":
        faulty = re.fullmatch(r"g\d+r\d+", message["match_id"]) is not None
    elif kind == "request":
        choice = "not-a-card" if faulty else message["default"]
        faulty = False
        print(json.dumps({"type": "reply", "id": message["id"], "choice": choice}), flush=True)
    elif kind == "shutdown":
        break
