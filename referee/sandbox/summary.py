"""The sandbox in one short line, for the start of ``match`` and ``league``.

``Sandbox.describe()`` names every protection and every reason one is
missing: some 400 characters, the first thing a user saw of every match.
What a user needs at a glance is the level and whether anything is missing;
the full line is behind ``-v`` and in every match log's header
(``Sandbox.to_json``, which ``newmarket replay`` and the report read).
"""

from __future__ import annotations

from referee.sandbox import Sandbox

# What the level gives, in a few words; for auto and strict, only when nothing is missing.
_GIVES = {
    "none": "no limits or isolation, only a process group",
    "basic": "rlimits only, no isolation",
    "auto": "limits, isolation and no network, all active",
    "strict": "limits, isolation and no network, all active",
}

# Even with every protection missing the line stays near 100 characters.
_SHORT = {"process count limit": "process limit", "process count": "process limit"}


def summary(sandbox: Sandbox) -> str:
    """``sandbox LEVEL: ...``: what the level gives and what of it is missing (the name
    before the colon of each of ``Sandbox.missing``), and where the details are."""
    parts = []
    if sandbox.level in ("none", "basic") or not sandbox.missing:
        parts.append(_GIVES.get(sandbox.level, "active"))
    if sandbox.missing:
        names = (line.partition(":")[0] for line in sandbox.missing)
        parts.append("NOT active: " + ", ".join(_SHORT.get(name, name) for name in names))
    return f"sandbox {sandbox.level}: {'; '.join(parts)} (see -v)"
