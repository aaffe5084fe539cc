"""A setuid program in the bot's view gives it nothing.

The view shows the system's ``/usr``, setuid-root programs included (``su``,
``mount``, ``passwd``).  They run with the bot's privileges because every
process of the sandbox has ``no_new_privs`` (which the kernel keeps across
every exec, and which makes it ignore setuid bits and file capabilities),
every mount of the view is ``nosuid``, and no capability is left in any set.
This runs one process under the real sandbox and reads those facts from
inside, as a bot would.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import trio

from referee.sandbox import detect, resolve
from referee.transport.process import clean_environment, start_process

SUPPORT = detect()
pytestmark = pytest.mark.skipif(
    SUPPORT.isolation is None, reason=f"no isolation on this machine: {SUPPORT.isolation_why}"
)

LOOK = """
import json, os
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
mounts = [line.split() for line in open("/proc/self/mountinfo")]
setuid = [p for p in ("/usr/bin/su", "/usr/bin/mount") if os.path.exists(p)]
print(json.dumps({
    "no_new_privs": status["NoNewPrivs"].strip(),
    "caps": {k: status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")},
    "suid_mounts": [m[4] for m in mounts if "nosuid" not in m[5].split(",")],
    "setuid_seen": [p for p in setuid if os.stat(p).st_mode & 0o4000],
}))
"""


async def test_no_setuid_program_or_capability_gives_a_bot_privilege() -> None:
    bot = await start_process(
        [sys.executable, "-c", LOOK],
        cwd=Path(__file__).parent,
        env=clean_environment(),
        stdio=True,
        sandbox=resolve("auto"),
    )
    assert bot.process.stdout is not None
    output = b""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(bot.watch)
        nursery.start_soon(bot.drain_stderr)
        with trio.fail_after(60):
            while data := await bot.process.stdout.receive_some(65536):
                output += data
        await bot.end()
        nursery.cancel_scope.cancel()
    assert output, bot.stderr.text()
    seen = json.loads(output)
    assert seen["no_new_privs"] == "1"
    assert set(seen["caps"].values()) == {"0000000000000000"}, seen["caps"]
    assert seen["suid_mounts"] == [], seen["suid_mounts"]  # every mount of the view: nosuid
    if Path("/usr/bin/su").exists() and Path("/usr/bin/su").stat().st_mode & 0o4000:
        assert "/usr/bin/su" in seen["setuid_seen"]  # there to try, and worthless
