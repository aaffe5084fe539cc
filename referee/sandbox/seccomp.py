"""A seccomp filter that closes the lock and notify channels between isolated bots.

Every isolated bot sees the same read-only system files (``/etc``, ``/usr``),
and a lock is a property of the file, not of the mount or the namespace: a
bot holding ``flock`` on ``/etc/hostname``, or a POSIX record lock on byte N
of ``/etc/passwd`` (read-only opens are enough for both), is seen by every
other bot that asks (``F_GETLK`` even reports the locked range: one call
carries a whole hand).  Two colluding bots at one table used that to tell
each other their cards, in separate pid, mount, ipc and network namespaces,
as different uids.  ``inotify`` (``IN_OPEN``/``IN_ACCESS`` on a shared file)
and ``dnotify`` (``F_NOTIFY``) are the same channel with another signal.

The filter (classic BPF, handed to the inner ``bwrap --seccomp FD``) makes
``flock``, the lock, lease and notify commands of ``fcntl``, and
``inotify_init``/``fanotify_init`` fail: locks with ``ENOLCK`` (a real
answer of ``flock``, which runtimes already handle), notification with
``ENOSYS`` (as if the kernel had none: file watchers fall back to polling).
A bot's own files are in its private scratch, where nobody else could
contend for a lock anyway.  Built for x86_64 (and its i386 and x32 system
call tables, so a 32-bit call cannot go round it); on other machines there
is no filter and the sandbox's line says so.
"""

from __future__ import annotations

import errno
import platform
import struct

# Classic BPF opcodes (linux/filter.h) and seccomp's return values (linux/seccomp.h).
_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_AND = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000

# struct seccomp_data: nr at 0, arch at 4, args[1] (fcntl's cmd; its low word) at 24.
_NR, _ARCH, _ARG1 = 0, 4, 24
_X86_64, _I386 = 0xC000003E, 0x40000003
_X32_BIT = 0x40000000

# System call numbers: (flock, fcntl and fcntl64, the notification ones), per table.
_X86_64_CALLS = {"flock": (73,), "fcntl": (72,), "notify": (253, 294, 300)}
_I386_CALLS = {"flock": (143,), "fcntl": (55, 221), "notify": (291, 332, 338)}
# fcntl commands: F_GETLK, F_SETLK, F_SETLKW, their 64-bit forms (i386), the OFD locks,
# then F_SETLEASE and F_NOTIFY.
_LOCK_COMMANDS = (5, 6, 7, 12, 13, 14, 36, 37, 38, 1024)
_NOTIFY_COMMANDS = (1026,)


class _Program:
    """A few lines of BPF with named jump targets, resolved when the program is done."""

    def __init__(self) -> None:
        self.lines: list[tuple[int, str | None, str | None, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.lines)

    def op(self, code: int, k: int, true: str | None = None, false: str | None = None) -> None:
        self.lines.append((code, true, false, k))

    def assemble(self) -> bytes:
        out = b""
        for index, (code, true, false, k) in enumerate(self.lines):
            jt = 0 if true is None else self.labels[true] - index - 1
            jf = 0 if false is None else self.labels[false] - index - 1
            assert 0 <= jt < 256 and 0 <= jf < 256
            out += struct.pack("=HBBI", code, jt, jf, k)
        return out


def _calls(program: _Program, calls: dict[str, tuple[int, ...]]) -> None:
    for number in calls["flock"]:
        program.op(_JEQ, number, "lock")
    for number in calls["notify"]:
        program.op(_JEQ, number, "notify")
    *first, last = calls["fcntl"]
    for number in first:
        program.op(_JEQ, number, "command")
    program.op(_JEQ, last, "command", "allow")


def lock_filter(*, locks: bool = True) -> bytes | None:
    """The filter for this machine, or None where it has none (not x86_64).

    ``locks=False`` leaves locks alone and closes the notify channel only: a
    compiler's filter.  Go and cargo stop when they cannot lock their own files
    (go.mod, their caches), and a compiler's locks reach no bot: every bot's
    ``flock`` and ``F_GETLK`` are refused before the kernel sees them, so a bot
    can neither set a lock a compiler would see nor see one a compiler set.
    """
    if platform.machine() not in ("x86_64", "AMD64", "amd64"):
        return None
    program = _Program()
    program.op(_LD_ABS, _ARCH)
    program.op(_JEQ, _X86_64, "x86_64")
    program.op(_JEQ, _I386, "i386", "allow")
    program.label("x86_64")
    program.op(_LD_ABS, _NR)
    program.op(_AND, ~_X32_BIT & 0xFFFFFFFF)  # an x32 call is the same number with this bit
    _calls(program, _X86_64_CALLS)
    program.label("i386")
    program.op(_LD_ABS, _NR)
    _calls(program, _I386_CALLS)
    program.label("command")
    program.op(_LD_ABS, _ARG1)
    for command in _LOCK_COMMANDS:
        program.op(_JEQ, command, "lock")
    for command in _NOTIFY_COMMANDS:
        program.op(_JEQ, command, "notify")
    program.label("allow")
    program.op(_RET, _ALLOW)
    program.label("lock")
    program.op(_RET, (_ERRNO | errno.ENOLCK) if locks else _ALLOW)
    program.label("notify")
    program.op(_RET, _ERRNO | errno.ENOSYS)
    return program.assemble()
