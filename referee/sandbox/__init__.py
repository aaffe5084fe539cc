"""Per-bot limits and isolation: what this machine supports, and how a bot is started under it.

A bot is started by ``referee.transport.process.start_process`` and nowhere else; this
package gives that one place its protections.  The referee asks ``detect()``
once what the machine supports, then ``resolve(level, limits)`` turns a
``--sandbox`` level into a ``Sandbox``: the protections that will really be
applied, and a plain line for each one that will not.

How each protection is applied, and why that way:

* **rlimits** (CPU seconds, open files, file size, processes, optionally
  address space; core dumps off) by an exec wrapper, util-linux ``prlimit
  --LIMIT=N -- argv``, which sets the limits on itself and then execs the
  bot.  Not ``preexec_fn``: Python code between fork and exec is unsafe in a
  process with threads (trio's worker threads, a Dask worker's), because a
  lock held by another thread at the fork stays held for ever in the child.
  Not ``prlimit(pid)`` after the start either: a bot could fork before the
  limit lands.  An isolated stdio bot already has a shell just before it (it
  puts the bot's pipes back on 0 and 1): that shell sets the limits with its
  own ``ulimit`` instead, one exec fewer, where detection found ``/bin/sh``'s
  ``ulimit`` exact (its units are the shell's: ``bash`` outside POSIX mode
  counts file sizes in KiB, ``dash`` in 512-byte blocks).
* **cgroups** (memory, pids, CPU accounting, and ``cgroup.kill``): one
  cgroup per bot in each hierarchy, created beneath the referee's own cgroup
  (so a bot stays inside whatever limits the referee itself runs under).
  The bot joins them *before* its program runs: the first wrapper is
  ``/bin/sh -c 'echo $$ > .../cgroup.procs ...; exec "$@"'`` (the argv is
  passed as arguments, never parsed by the shell), so not even the bot's
  first fork escapes.
* **no network** for stdio bots: a new, empty network namespace (``unshare
  --net``, which keeps the pid, or bubblewrap's ``--unshare-net`` where
  ``unshare`` is not permitted).  TCP bots need the network to reach the
  referee and are never given this.

The process group (``start_new_session``) is always used, at every level: it
is how ``BotProcess.end`` signals the tree.  A cgroup adds what a group
cannot: a grandchild that calls ``setsid()`` leaves the group but never the
cgroup, and ``cgroup.kill`` (or, on cgroup v1, SIGKILL to every member until
none is left) ends it too.

* **isolation** (``referee.sandbox.isolation``): bubblewrap namespaces, a
  read-only view of the machine with a private scratch tmpfs, and, when the
  referee is root, an unprivileged uid of its own per bot process.  Where it
  applies, the bot's network namespace is its own too (the ``unshare --net``
  prefix above is the fallback where bubblewrap is missing).

Levels: ``none`` (the process group only), ``basic`` (+ rlimits), ``strict``
(+ cgroups, isolation and no network; refused with a clear error naming what
is missing where the machine cannot give them), ``auto`` (everything this
machine supports, and a plain line for what it does not).

The modules, one concept each: ``setting`` (a level and its limits, and how
they travel to a worker), ``detection`` (what the machine supports),
``levels`` (``resolve``), ``protections`` (the resolved ``Sandbox`` and the
argv it wraps a bot in), ``shell`` (the shell lines before a bot),
``cgroups`` (one bot's cgroups), ``isolation``, ``seccomp`` and ``forward``.
This file is the public surface the rest of the referee imports.
"""

from referee.sandbox.cgroups import BotCgroups, sweep_stale
from referee.sandbox.detection import BWRAP_NO_NETWORK, Support, detect
from referee.sandbox.levels import resolve
from referee.sandbox.protections import Sandbox
from referee.sandbox.setting import (
    DEFAULT_LEVEL,
    ENV_SANDBOX,
    LEVELS,
    MIB,
    Limits,
    SandboxError,
    setting_from_env,
    setting_to_env,
)
from referee.sandbox.shell import START_LINE

__all__ = [
    "BWRAP_NO_NETWORK",
    "DEFAULT_LEVEL",
    "ENV_SANDBOX",
    "LEVELS",
    "MIB",
    "START_LINE",
    "BotCgroups",
    "Limits",
    "Sandbox",
    "SandboxError",
    "Support",
    "detect",
    "resolve",
    "setting_from_env",
    "setting_to_env",
    "sweep_stale",
]
