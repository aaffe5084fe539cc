"""From a ``--sandbox`` level to a ``Sandbox``: what each level gives on this machine.

``none`` is the process group only, ``basic`` adds rlimits, ``strict`` adds
cgroups, isolation and no network and is refused with one line naming what
is missing, and ``auto`` takes everything the machine supports and names
what it does not.  The decision is here alone; ``detection`` says what the
machine has and ``protections`` applies the result.
"""

from __future__ import annotations

import dataclasses

from referee.sandbox.detection import Support, detect
from referee.sandbox.isolation import Isolation
from referee.sandbox.protections import Sandbox
from referee.sandbox.setting import LEVELS, Limits, SandboxError


def resolve(level: str, limits: Limits | None = None, support: Support | None = None) -> Sandbox:
    """The sandbox ``level`` gives on this machine; ``SandboxError`` if ``strict`` cannot be had."""
    if level not in LEVELS:
        raise SandboxError(f"{level!r} is not one of {', '.join(LEVELS)}")
    limits = limits or Limits()
    support = support or detect()
    missing: list[str] = []
    if level == "none":
        return Sandbox(level="none", limits=limits, root=support.root)
    rlimits = support.prlimit is not None
    if not rlimits:
        missing.append(f"rlimits: {support.prlimit_why}")
    if level == "basic":
        if limits.processes is not None and support.root:
            missing.append("process count: RLIMIT_NPROC is not enforced for root (level basic)")
        return Sandbox(
            level="basic",
            limits=limits,
            rlimits=rlimits,
            prlimit=support.prlimit,
            root=support.root,
            missing=tuple(missing),
        )
    isolation = _isolation(support, limits, missing)
    if level == "strict":
        _refuse_strict_without_essentials(missing)
    return Sandbox(
        level="strict" if level == "strict" else "auto",
        limits=limits,
        rlimits=rlimits,
        cgroups=dict(support.cgroup_v1),
        cgroup_v2=support.cgroup_v2 if support.cgroup_kill else None,
        netns=support.netns,
        prlimit=support.prlimit,
        root=support.root,
        missing=tuple(missing),
        isolation=isolation,
        shell_limits=support.shell_limits,
    )


def _isolation(support: Support, limits: Limits, missing: list[str]) -> Isolation | None:
    """The isolation ``strict`` and ``auto`` apply, adding to ``missing`` each of the
    protections beyond rlimits (cgroups, isolation, no network) this machine lacks."""
    for controller, what in (("memory", "memory limit"), ("pids", "process count limit")):
        if controller not in support.cgroup_v1:
            missing.append(f"{what}: no {controller} cgroup ({support.cgroup_why})")
    if not support.cgroup_kill:
        missing.append(
            "cgroup.kill: a setsid() escapee is killed only if a v1 cgroup lists it "
            f"({support.cgroup_why or 'no cgroup v2'})"
        )
    isolation = support.isolation
    if isolation is None:
        missing.append(f"isolation: {support.isolation_why}")
    else:
        isolation = dataclasses.replace(isolation, scratch_bytes=limits.scratch_bytes)
        if isolation.seccomp is None:
            missing.append(
                "lock filter: no seccomp filter for this machine's bwrap or architecture: "
                "bots can signal each other through file locks on shared system files"
            )
    if support.netns is None and isolation is None:
        missing.append(f"no-network: {support.netns_why}")
    return isolation


def _refuse_strict_without_essentials(missing: list[str]) -> None:
    # A lock filter exists only for x86_64: elsewhere strict would be impossible.
    optional = ("cgroup.kill", "lock filter")
    essential = [line for line in missing if not line.startswith(optional)]
    if essential:
        raise SandboxError(
            "--sandbox strict is not possible on this machine: "
            + "; ".join(essential)
            + " (use --sandbox auto to run with what is available)"
        )
