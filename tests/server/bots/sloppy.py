"""Behaves in newmarket check's scripted matches (their ids say so) and in the first
competition match of each of its processes, then in every later one of that process
answers its first request with a choice that is not legal: one fault a match, whose wire
transcript only its owner may read.

A bot that waits like this passes any check with a fixed number of matches per process
(the admission's matches as a table plays them give each process one match: a duplicate
group needs a fresh process per rotation), and faults in play, where a table reuses its
processes.  No finite check catches it; the server's watch flags it (docs/server.md)."""

import json
import re
import sys

played = 0  # matches of the competition's form in this process
faulty = False
for line in sys.stdin:
    message = json.loads(line)
    kind = message.get("type")
    if kind == "hello":
        print(json.dumps({"type": "ready", "name": "sloppy", "protocol": 1}), flush=True)
    elif kind == "match_start":
        if re.fullmatch(r"g\d+r\d+", message["match_id"]):
            played += 1
            faulty = played > 1
    elif kind == "request":
        choice = "not-a-card" if faulty else message["default"]
        faulty = False
        print(json.dumps({"type": "reply", "id": message["id"], "choice": choice}), flush=True)
    elif kind == "shutdown":
        break
