"""A legal bot that writes a line to stderr just before each reply: ``MATCH_ID reply ID``.

Standard library only, as a bot from outside would be.  A test plays several
matches with one process and holds each match's log to the lines of that match:
the last line before the last reply reaches the pipe just before the reply does.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    match_id = "?"
    for raw in sys.stdin:
        message = json.loads(raw)
        kind = message.get("type")
        if kind == "hello":
            print(json.dumps({"type": "ready", "name": "tells", "protocol": 1}), flush=True)
        elif kind == "match_start":
            match_id = message["match_id"]
        elif kind == "request":
            print(f"{match_id} reply {message['id']}", file=sys.stderr, flush=True)
            reply = {"type": "reply", "id": message["id"], "choice": message["default"]}
            print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
