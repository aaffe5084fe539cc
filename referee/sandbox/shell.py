"""The shell lines that run just before a bot: join its cgroups, move its pipes, set its limits.

Each fragment is a fixed string; the bot's argv and the cgroup files are passed
to the shell as arguments, never parsed by it.  ``protections.Sandbox.wrap``
puts them together, and ``detection`` checks that ``/bin/sh``'s ``ulimit``
uses the units written here.
"""

from __future__ import annotations

# The shell prelude that puts the bot into its cgroups before anything of it runs (and sets an
# isolated bot's pipes aside): one shell for both, as every exec costs about a millisecond of
# CPU (benchmarks/sandbox.py).  Arguments: the cgroup.procs files, then "--", then the argv.
JOIN_CGROUPS = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; '
EXEC = 'exec "$@"'

# prlimit's name of a limit -> the flag of the shell's ulimit, and its unit in bytes (512 for
# file and core sizes in POSIX shells, KiB for address space; detect() checks /bin/sh's).
ULIMIT_FLAGS = {"core": ("c", 512), "cpu": ("t", 1), "nofile": ("n", 1), "fsize": ("f", 512)}
ULIMIT_FLAGS["as"] = ("v", 1024)

# An isolated bot's pipes travel as fds 3 and 4 through the bubblewrap chain, whose monitor
# processes close every fd above 2 but keep 0 and 1: on 0 and 1 the referee would see no end
# of output when the bot closes its stdout, only when the whole chain exits.
PIPES_ASIDE = "exec 3<&0 4>&1 </dev/null >/dev/null; "
PIPES_BACK = 'exec <&3 >&4 3<&- 4>&-; exec "$@"'

# The shell just before an isolated stdio bot reads this line from the bot's stdin before the
# bot runs: a sandbox is made ready ahead of its bot (referee.transport.process) and waits
# here.  read takes a pipe byte by byte, so the bot's first byte is the first after the line;
# at the end of stdin (its referee gone) the shell exits and nothing of the bot ever ran.
START_LINE = b"start\n"
AWAIT_START = 'read -r line <&3 && [ "$line" = start ] || exit 125; '
