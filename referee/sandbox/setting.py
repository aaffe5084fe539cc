"""The operator's sandbox setting: a level and per-bot limits, and how it reaches a worker.

One small module, imported by the config readers and the commands, so that
reading a setting never imports the detection or the process machinery.  A
league or server hands the setting to its table workers as JSON in the
environment (``ENV_SANDBOX``), and each worker resolves it on its own machine,
since that is where the bots run.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from typing import Literal

Level = Literal["none", "basic", "strict", "auto"]
LEVELS: tuple[Level, ...] = ("none", "basic", "strict", "auto")
DEFAULT_LEVEL: Level = "auto"

MIB = 1 << 20

ENV_SANDBOX = "NEWMARKET_SANDBOX"
"""How a league hands its sandbox setting to its table workers (local or Dask):
``{"level": ..., "limits": {...}}`` as JSON, or just a level.  Each worker
resolves it on its own machine, since that is where the bots run."""


class SandboxError(ValueError):
    """A level this machine cannot give (``strict`` without cgroups, say), or bad limits."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """Per-bot limits; ``None`` leaves one unlimited.

    ``cpu_seconds`` is per bot *process*, over its whole life: a league keeps
    one process for many matches, and restarts a bot killed by the limit
    before its next match, so a long league loses at most one match to it.
    ``processes`` is the cgroup's ``pids.max`` (RLIMIT_NPROC counts every
    process of the user and root ignores it: see ``resolve``).
    ``address_space_bytes`` (RLIMIT_AS) is opt-in: the JVM and V8 reserve far
    more address space than they use and fail to start under it.
    """

    cpu_seconds: int | None = 3600
    open_files: int | None = 256
    file_size_bytes: int | None = 256 * MIB
    processes: int | None = 128
    memory_bytes: int | None = 2048 * MIB
    address_space_bytes: int | None = None
    scratch_bytes: int | None = 64 * MIB  # the isolated bot's tmpfs; None: tmpfs's own default

    def to_json(self) -> dict[str, int | None]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Limits:
        fields = {field.name for field in dataclasses.fields(cls)}
        values: dict[str, int | None] = {}
        for key, value in data.items():
            if key not in fields:
                raise SandboxError(f"sandbox limits: unknown limit {key!r}")
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise SandboxError(f"sandbox limits: {key} must be a whole number or none")
            if value is not None and value < 1:
                raise SandboxError(f"sandbox limits: {key} must be at least 1, got {value}")
            values[key] = value
        return cls(**values)


def setting_to_env(level: str, limits: Limits) -> str:
    return json.dumps({"level": level, "limits": limits.to_json()})


def setting_from_env(text: str | None = None) -> tuple[str, Limits]:
    """The level and limits in ``NEWMARKET_SANDBOX`` (default: auto, the default limits)."""
    if text is None:
        text = os.environ.get(ENV_SANDBOX, "")
    text = text.strip()
    if not text:
        return DEFAULT_LEVEL, Limits()
    if not text.startswith("{"):
        return text, Limits()
    try:
        data = json.loads(text)
    except ValueError as error:
        raise SandboxError(f"{ENV_SANDBOX}: not JSON: {error}") from None
    if not isinstance(data, dict):
        raise SandboxError(f"{ENV_SANDBOX}: must be a level or a JSON object")
    limits = data.get("limits") or {}
    if not isinstance(limits, dict):
        raise SandboxError(f"{ENV_SANDBOX}: limits must be an object")
    return str(data.get("level", DEFAULT_LEVEL)), Limits.from_json(limits)
