"""The one place the server turns its ``[sandbox]`` section into a ``referee.sandbox.Sandbox``.

Compilers (``build``), the admission check (``admission``) and the table
workers (``worker_table``, the setting in their setup) all start their processes
through ``referee.transport.process.start_process`` with this sandbox, so when the
isolation work (bubblewrap, in ``referee/sandbox.py``) lands, every process the
server starts gets it with no change here beyond, perhaps, the level's name.
"""

from __future__ import annotations

import functools
import json

from referee.sandbox import Limits, Sandbox, resolve, setting_to_env
from referee.server.competition_file import CompetitionConfig


@functools.cache
def _resolved(level: str, limits_json: str) -> Sandbox:
    return resolve(level, Limits.from_json(json.loads(limits_json)))


def competition_sandbox(config: CompetitionConfig) -> Sandbox:
    """The sandbox every process of this competition starts under (resolved once)."""
    return _resolved(config.sandbox_level, json.dumps(config.sandbox_limits.to_json()))


def sandbox_setting(config: CompetitionConfig) -> str:
    """The setting as ``NEWMARKET_SANDBOX`` text, for child processes that resolve it."""
    return setting_to_env(config.sandbox_level, config.sandbox_limits)
