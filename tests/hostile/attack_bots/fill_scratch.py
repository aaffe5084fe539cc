"""Fills its scratch space ($TMPDIR) until the write fails, and crashes there."""

import os

from _attack import run, say


def attack() -> None:
    written = 0
    with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "filler"), "wb") as handle:
        while True:
            try:
                handle.write(b"\0" * (1 << 20))
                handle.flush()
            except OSError as error:
                say(f"scratch full after {written} MiB: {error}")
                raise
            written += 1


run(attack, "fill_scratch")
