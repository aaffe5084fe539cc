"""A bot that tries to pass what it saw to its own later processes: ``remember.py MARK``.

A table worker reuses a bot's process across deals and starts more of the same bot
(a deal is never played twice by one process, so a duplicate group's rotations go to
different processes of the bot).  If two processes of one bot could share a note,
the one playing a deal's second rotation would know the hands the first held.

Each process leaves its first hand of every hand it is asked about as a note
(``nmremember-<its token>``) in every place it can write, and before each request
looks in every such place (and at every pid it can see) for a note or a process of
another.  It reports on stderr, one line each: ``NOTE <where>: written|refused``,
``REMEMBERED <where> <note>`` for a note of another process, ``SIBLING <pid> ...``
for another process of a bot it can see, ``PROCESS <token> deals <n>``.
Standard library only; plays legal random choices.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import sys

MARK = sys.argv[1] if len(sys.argv) > 1 else "NMREMEMBER"
TOKEN = secrets.token_hex(6)
NOTE = f"nmremember-{TOKEN}"
RNG = random.Random()


def say(text: str) -> None:
    sys.stderr.write(text.replace("\n", " ") + "\n")
    sys.stderr.flush()


def places() -> list[str]:
    """Every directory a process of a bot might write and a later one read."""
    uid = os.getuid()
    found = [
        os.environ.get("TMPDIR", "/tmp"),
        "/tmp",
        "/dev/shm",
        "/var/tmp",
        "/run/lock",
        f"/run/user/{uid}",
        os.environ.get("HOME", "/"),
        os.getcwd(),
        os.path.dirname(os.path.abspath(__file__)),
        "/dev/mqueue",
    ]
    return list(dict.fromkeys(found))


def leave(hand: list[str], deals: int) -> None:
    text = f"{TOKEN} deal{deals} {' '.join(hand)}"
    for place in places():
        try:
            with open(os.path.join(place, NOTE), "w") as note:
                note.write(text)
        except OSError as error:
            say(f"NOTE {place}: refused ({error.strerror})")
        else:
            say(f"NOTE {place}: written")


def look() -> None:
    for place in places():
        try:
            names = os.listdir(place)
        except OSError:
            continue
        for name in names:
            if name.startswith("nmremember-") and name != NOTE:
                try:
                    with open(os.path.join(place, name)) as note:
                        say(f"REMEMBERED {place} {note.read()}")
                except OSError as error:
                    say(f"REMEMBERED {place} {name} (unreadable: {error.strerror})")
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except OSError:
            continue
        if MARK.encode() in cmdline.split(b"\0"):
            what = [f"SIBLING {pid} visible"]
            for part in ("environ", "mem", "fd"):
                try:
                    if part == "fd":
                        os.listdir(f"/proc/{pid}/fd")
                    else:
                        with open(f"/proc/{pid}/{part}", "rb") as handle:
                            handle.read(1)
                    what.append(f"{part} readable")
                except OSError as error:
                    what.append(f"{part} refused ({error.strerror})")
            say(" ".join(what))


def choice(request: dict[str, object]) -> object:
    decision = request["decision"]
    if decision in ("lead", "dead_hand"):
        return RNG.choice(request["legal"])  # type: ignore[arg-type]
    if decision == "bid":
        return RNG.randint(0, int(request["max_bid"]))  # type: ignore[call-overload]
    amounts = [0] * len(request["boodle_cards"])  # type: ignore[arg-type]
    for _ in range(int(request["stake_total"])):  # type: ignore[call-overload]
        amounts[RNG.randrange(len(amounts))] += 1
    return amounts


def main() -> None:
    deals = 0
    noted = False
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            sys.stdout.write(json.dumps({"type": "ready", "name": "remember", "protocol": 1}))
            sys.stdout.write("\n")
            sys.stdout.flush()
        elif kind == "match_start":
            deals += 1
            noted = False
        elif kind == "request":
            look()
            if not noted and isinstance(message.get("hand"), list):
                noted = True
                leave(message["hand"], deals)
            reply = {"type": "reply", "id": message["id"], "choice": choice(message)}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
        elif kind == "shutdown":
            break
    say(f"PROCESS {TOKEN} deals {deals}")


if __name__ == "__main__":
    main()
