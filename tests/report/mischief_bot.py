"""A test bot for the report: an untrusted name and stderr, and one illegal lead per match.

Standard library only (a league runs bots in a clean environment).  It plays
each request's ``default`` except its first lead of every match, where it
leads a card that is not legal: one ``illegal`` fault per match, never a
disqualification, so the report has faults with a transcript to show.  Its
stderr holds HTML that must be shown as text, never run.
"""

import json
import sys


def main() -> None:
    out = sys.stdout
    out.write(json.dumps({"type": "ready", "name": "<img src=x onerror=alert(1)>", "protocol": 1}))
    out.write("\n")
    out.flush()
    faulted = False
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "match_start":
            faulted = False
            print(f"<script>alert('match {message.get('match_id')}')</script>", file=sys.stderr)
            sys.stderr.flush()
        elif kind == "request":
            choice = message["default"]
            illegal = [card for card in message["hand"] if card not in message["legal"]]
            if message["decision"] == "lead" and illegal and not faulted:
                faulted = True
                choice = illegal[-1]
                print(f"leading {choice} & hoping </pre><b>nobody</b> notices", file=sys.stderr)
                sys.stderr.flush()
            out.write(json.dumps({"type": "reply", "id": message["id"], "choice": choice}))
            out.write("\n")
            out.flush()
        elif kind == "shutdown":
            return


if __name__ == "__main__":
    main()
