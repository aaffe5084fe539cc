"""A bot's own world: bubblewrap namespaces, a read-only view of the machine, its own uid.

Why bubblewrap (``bwrap``, Debian package ``bubblewrap``) and not namespace
code of our own: it is the small, audited tool Flatpak runs every app in, it
does each step (user, pid, ipc, uts, cgroup, net and mount namespaces, the
mount tree, ``no_new_privs``, dropping capabilities, dying with its parent)
in the right order with the right error checks, and it works both for root
and, through unprivileged user namespaces, for an ordinary user.  Hand-made
``unshare``/``mount`` code gets those details wrong in ways nobody notices
until a bot does.

Two chains, chosen by who runs the referee:

* **root**: an *outer* ``bwrap`` (still root, in the host's user namespace)
  builds the bot's file view: the system directories, the runtime, the
  bot's own directory, all read-only, and a size-capped tmpfs as ``/tmp``.
  It has to be root because a bot's runtime may live where the bot's uid
  cannot go (``/root/.pyenv``).  Then util-linux ``setpriv`` becomes the
  bot's own unprivileged uid (one per bot process, leased from a dedicated
  range, see ``UidPool``), with no supplementary groups, no capabilities
  (inheritable, ambient and bounding sets cleared) and ``no_new_privs``.
  Then an *inner*, unprivileged ``bwrap`` gives the bot its own user, pid,
  ipc, uts, cgroup and network namespaces, forbids further user namespaces,
  mounts a fresh ``/proc`` of its pid namespace and a minimal ``/dev``, and
  makes the outer view read-only except the scratch tmpfs.
* **not root**: the inner ``bwrap`` alone builds the view itself.  Every bot
  then has the operator's uid on the host: separate pid, mount, ipc and
  network namespaces still keep bots from seeing, signalling or reading one
  another and the referee, but a kernel bug in user namespaces or a file the
  view exposes is the operator's, and the machine gives no cgroups to a
  non-root user unless they were delegated.

The bot sees no ``/sys`` (so no cgroup filesystem), no home directory, no
working directory of the referee, and of the host only what ``view`` lists.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import functools
import importlib.util
import os
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from referee.sandbox.seccomp import lock_filter

# Read-only and whole in every bot's view: the system's programs and libraries (the merged-/usr
# links are kept as links).  Not /etc, /opt, /srv or /home: an organiser's competition, league
# or database may live anywhere there, so a bot sees only the few parts ETC_SHOWN names and the
# prefixes of the runtimes its command runs (``view``).
SYSTEM_DIRS = ("/usr",)
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = Path("/etc")
ETC_SHOWN = (
    # the dynamic loader's cache and configuration
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    # CA certificates and OpenSSL's configuration (Debian, Fedora, Arch, Alpine), and the
    # system's crypto policy (Fedora: OpenSSL's and the JDK's configurations include it)
    "/etc/ssl/certs",
    "/etc/ssl/cert.pem",
    "/etc/ssl/openssl.cnf",
    "/etc/pki/tls/certs",
    "/etc/pki/tls/cert.pem",
    "/etc/pki/tls/openssl.cnf",
    "/etc/pki/ca-trust/extracted",
    "/etc/pki/java",
    "/etc/ca-certificates/extracted",
    "/etc/crypto-policies",
    # the time zone
    "/etc/localtime",
    "/etc/timezone",
    # Debian's and Fedora's program links (/usr/bin/java -> /etc/alternatives/java -> the JDK;
    # a shell bot's awk): links only, whose targets are shown only where they are system files
    "/etc/alternatives",
)
ETC_ACCOUNTS = ("/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts")
"""Made for each bot (``etc_files``), never the host's: its accounts are root and nobody, named
by the files alone, and its only host is itself (it has no network)."""
# What marks a prefix (the directory above ``bin``) as a JDK's or JRE's, or a node's.
JVM_MARKS = ("lib/jvm.cfg", "lib/modules", "lib/rt.jar")
NODE_MARKS = ("include/node/node.h", "lib/node_modules")
RUST_MARKS = ("lib/rustlib",)  # a Rust toolchain's sysroot (rustup's lives in ~/.rustup)
LINK_WALK_LIMIT = 20_000  # entries of a runtime's tree looked at for links into /etc
SHELLS = ("sh", "bash", "dash")  # ``sh -c SCRIPT NAME PROGRAM``: PROGRAM's runtime is shown
SCRATCH = "/tmp"  # the bot's only writable place: HOME and TMPDIR point here
ENV_SHARED_DIR = "NEWMARKET_SANDBOX_SHARED_DIR"
"""Set (to anything) in a bot's spec env when its ``cwd`` is not its own directory but a
default shared with others (a league file's directory, which holds the database, the
tokens and the logs): the sandbox then shows only the files its command names.  The
process layer removes it from the environment before the bot starts."""
PROJECT_PACKAGES = ("bots", "protocol", "engine")  # what a bundled Python bot imports

# The dedicated uid (and gid) range bots run as when the referee is root: far above any
# account a distribution or an LDAP directory hands out, and below the 32-bit overflow ids.
UID_BASE = 1_900_000_000
UID_COUNT = 100_000
UID_LOCK_DIR = Path("/run/newmarket-uids")

# Namespaces and protections of the inner bwrap (every level of the chain dies with its parent).
INNER_OPTIONS = (
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup",
    "--unshare-net",
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--hostname",
    "bot",
)


class IsolationError(OSError):
    """The isolation cannot be set up for this bot (no free uid, say)."""


@dataclasses.dataclass
class UidLease:
    """One uid of the pool, held (by an ``flock``) until ``release``."""

    uid: int
    fd: int | None

    def release(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


class UidPool:
    """Unprivileged uids for bots, one per live bot process on this machine.

    Each uid has a lock file; a referee process holds an ``flock`` on it for
    its bot's life, so two table workers (or two leagues) on one machine
    never hand out the same uid, and a referee that dies releases its uids
    with its file descriptors.  Lock files are never deleted (deleting one
    under a lock would let a second holder lock a new file of the same name).
    """

    def __init__(self, directory: Path = UID_LOCK_DIR, base: int = UID_BASE) -> None:
        self.directory = directory
        self.base = base

    def check(self) -> str:
        """'' if uids can be leased here, else why not."""
        try:
            self.directory.mkdir(mode=0o700, exist_ok=True)
        except OSError as error:
            return f"cannot create {self.directory}: {error.strerror or error}"
        if not os.access(self.directory, os.W_OK):
            return f"cannot write {self.directory}"
        return ""

    def lease(self) -> UidLease:
        self.directory.mkdir(mode=0o700, exist_ok=True)
        # The lowest free uid: as many lock files as bots ever ran at once, no more.
        for step in range(UID_COUNT):
            uid = self.base + step
            fd = os.open(self.directory / str(uid), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return UidLease(uid, fd)
        raise IsolationError(f"no free bot uid in {self.base}..{self.base + UID_COUNT - 1}")


@dataclasses.dataclass(frozen=True)
class Isolation:
    """How this machine isolates a bot: the tools, and whether the referee is root."""

    bwrap: str
    setpriv: str | None  # root: the uid switch; None when the referee is not root
    scratch_bytes: int | None
    pool: UidPool = dataclasses.field(default_factory=UidPool)
    seccomp: bytes | None = None  # referee.sandbox.seccomp's filter, where bwrap takes it

    @property
    def own_uids(self) -> bool:
        return self.setpriv is not None

    def describe(self) -> str:
        size = "" if self.scratch_bytes is None else f" {self.scratch_bytes >> 20} MiB"
        scratch = f"scratch tmpfs{size} (and /dev/shm alike)"
        common = (
            "own pid/ipc/uts/cgroup/net/mount namespaces, read-only system and bot directory, "
            f"{scratch}, no_new_privs, no capabilities"
        )
        if self.seccomp is not None:
            common += ", no file locks or inotify (no channel between bots)"
        if self.own_uids:
            return f"bubblewrap: own uid per bot, {common}"
        return f"bubblewrap: {common} (every bot has the operator's uid: the referee is not root)"

    def command(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None,
        env: Mapping[str, str],
        uid: int | None,
        inner_prefix: Sequence[str] = (),
        extra_binds: Iterable[tuple[str, str]] = (),
        own_dir: bool = True,
        seccomp_fd: int | None = None,
        etc_fds: Mapping[str, int] = MappingProxyType({}),
    ) -> list[str]:
        """The argv that runs ``argv`` isolated; ``inner_prefix`` runs inside, before it.

        ``extra_binds`` are (host path, path inside) pairs bound read-write
        (a socket to the referee).  ``uid`` is required when the referee is
        root.  ``seccomp_fd`` is an inherited descriptor the inner bwrap reads
        the seccomp filter from (``seccomp``: a fresh pipe per start, since
        reading consumes it); ``etc_fds`` likewise, for each file of
        ``ETC_ACCOUNTS``, a descriptor its content is read from (``etc_pipes``).
        """
        argv = [*real_interpreter(argv, env)]
        chdir, mounts = self._mounts(argv, cwd, env, inner_prefix, extra_binds, own_dir, etc_fds)
        inner = [self.bwrap, *INNER_OPTIONS]
        if seccomp_fd is not None:
            inner += ["--seccomp", str(seccomp_fd)]
        if self.setpriv is None:
            return [
                *inner,
                *mounts,
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                *self._dev_options(),
                "--remount-ro",
                "/",  # bwrap's root is a tmpfs of half the machine, writable until this
                "--chdir",
                chdir,
                "--",
                *inner_prefix,
                *argv,
            ]
        assert uid is not None, "a root referee runs each bot as its own uid"
        inside = [*inner, *self._inner_view(extra_binds, chdir), *inner_prefix, *argv]
        return [*self._outer_as_uid(uid, mounts), *inside]

    def _mounts(
        self,
        argv: Sequence[str],
        cwd: Path | None,
        env: Mapping[str, str],
        inner_prefix: Sequence[str],
        extra_binds: Iterable[tuple[str, str]],
        own_dir: bool,
        etc_fds: Mapping[str, int],
    ) -> tuple[str, list[str]]:
        """The bot's working directory inside, and the options mounting what it is shown."""
        workdir, binds, files = view(argv, cwd, env, own_dir=own_dir)
        if inner_prefix:
            _, more_binds, more_files = view(inner_prefix, None, env)
            binds += more_binds
            files += more_files
        chdir = str(workdir) if workdir is not None else SCRATCH
        mounts = _mount_options(binds, files, chdir, self.scratch_bytes, etc_fds)
        for source, target in extra_binds:
            mounts += ["--bind", source, target]
        return chdir, mounts

    def _outer_as_uid(self, uid: int, mounts: list[str]) -> list[str]:
        """A root referee's outer bwrap, which shows the mounts and switches to the bot's uid."""
        # Its own pid namespace: --die-with-parent's signal goes to the outer bwrap's child,
        # whose switch of uid (setpriv) clears it, so a SIGKILLed referee left the inner bwrap
        # and the bot running.  As that child is now the init of a pid namespace (bwrap's
        # own, still root), its death ends every process of the bot, whatever it became.
        assert self.setpriv is not None
        outer = [
            self.bwrap,
            "--die-with-parent",
            "--unshare-pid",
            *mounts,
            "--bind",
            "/proc",
            "/proc",
        ]
        outer += ["--dev", "/dev", "--"]
        switch = [
            self.setpriv,
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--ambient-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]
        return [*outer, *switch]

    def _inner_view(self, extra_binds: Iterable[tuple[str, str]], chdir: str) -> list[str]:
        """The inner bwrap's options under the outer one: its view, read-only but the scratch."""
        inside = ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", *self._dev_options()]
        inside += ["--bind", SCRATCH, SCRATCH]
        for _source, target in extra_binds:
            inside += ["--bind", target, target]
        inside += ["--chdir", chdir, "--"]
        return inside

    def _dev_options(self) -> list[str]:
        # bwrap --dev makes /dev a tmpfs of half the machine's memory, writable, with a
        # writable /dev/shm in it: a second scratch past the scratch cap (and past every limit
        # where no memory cgroup charges it).  /dev is made read-only; /dev/shm, where POSIX
        # shared memory and semaphores live, stays, as a tmpfs of its own with the cap.
        size = [] if self.scratch_bytes is None else ["--size", str(self.scratch_bytes)]
        return [*size, "--perms", "1777", "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]


def real_interpreter(argv: Sequence[str], env: Mapping[str, str]) -> Sequence[str]:
    """``argv`` with a shimmed Python (pyenv, asdf: a script that picks a version) replaced.

    A shim needs its version manager's whole tree, which the sandbox does not
    show; the interpreter it would run is asked once, and run directly instead.
    """
    program = argv[0] if argv else ""
    if "/" in program or "python" not in program:
        return argv
    found = shutil.which(program, path=env.get("PATH"))
    if found is None or _python_prefixes(Path(found)) or _under(Path(found).resolve(), SYSTEM_DIRS):
        return argv
    real = _interpreter_behind(found)
    return argv if real is None else [real, *argv[1:]]


@functools.cache
def _interpreter_behind(shim: str) -> str | None:
    try:
        done = subprocess.run(
            [shim, "-c", "import sys; print(sys.executable)"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    real = done.stdout.strip()
    return real if done.returncode == 0 and real.startswith("/") else None


def view(
    argv: Sequence[str], cwd: Path | None, env: Mapping[str, str], *, own_dir: bool = True
) -> tuple[Path | None, list[Path], list[Path]]:
    """What of the host a bot sees: (its working directory, directories, single files).

    The directories are its own (``cwd``, when it is the bot's own: ``own_dir``)
    and its runtimes' (a Python prefix and virtualenv, a JDK or a node outside
    ``/usr``, wherever the program really lives once its links are followed, and
    the project's packages for a bundled Python bot); the files are programs and
    scripts named by absolute path, or, for a bot without a directory of its
    own, by a path relative to its working directory (that directory itself
    is not shown: it may hold the match log, or a league's database), and the
    files under ``/etc`` a runtime's own links point to (Debian's JDK keeps its
    ``jvm.cfg`` and security settings there).  The program a shell wrapper
    runs (``sh -c SCRIPT NAME javac ...``) brings its runtime too.
    """
    directories: list[Path] = []
    files: list[Path] = []
    base = cwd if cwd is not None else Path.cwd()
    if cwd is not None and own_dir:
        own = cwd.resolve()
        if own != Path("/"):
            directories.append(own)
    program = argv[0]
    found = shutil.which(program, path=env.get("PATH")) if "/" not in program else None
    executable = Path(found) if found else base / os.path.expanduser(program)
    runtime = _python_prefixes(executable)
    directories += runtime
    programs = [executable]
    wrapped = _wrapped_program(argv)
    if wrapped is not None:
        other = shutil.which(wrapped, path=env.get("PATH")) if "/" not in wrapped else wrapped
        if other is not None:
            programs.append(Path(other))
    for one in programs:
        more, etc_files = _runtime_prefixes(one)
        directories += [prefix for prefix in more if prefix not in directories]
        files += [path for path in etc_files if path not in files]
    shown_from_base = False  # a module found in the working directory: run there
    if runtime:
        directories += _project_packages()
        if not (cwd is not None and own_dir):
            module_dirs, module_files = _module_in_workdir(argv, base)
            directories += module_dirs
            files += module_files
            shown_from_base = bool(module_dirs)
    files += _named_files(argv, base, found, directories)
    named = any(ETC not in path.parents for path in files)  # (not a runtime's /etc files)
    shown = (cwd is not None and own_dir) or named or shown_from_base
    return (base if shown else None), directories, files


def _module_in_workdir(argv: Sequence[str], base: Path) -> tuple[list[Path], list[Path]]:
    """The package (or module file) ``python -m pkg.bot`` finds in its working directory,
    shown instead of the whole directory: (directories, files)."""
    directories: list[Path] = []
    files: list[Path] = []
    module = _module_argument(argv)
    if module is None:
        return directories, files
    top = base / module.split(".")[0]
    for candidate in (top, top.with_name(top.name + ".py")):
        if candidate.is_dir() and Path(os.path.abspath(candidate)) != Path("/"):
            directories.append(Path(os.path.abspath(candidate)))
        elif candidate.is_file():
            files.append(Path(os.path.abspath(candidate)))
    return directories, files


def _named_files(
    argv: Sequence[str], base: Path, found: str | None, directories: Sequence[Path]
) -> list[Path]:
    """The program and the files ``argv`` names, outside the system and shown directories."""
    files: list[Path] = []
    for index, argument in enumerate(argv):
        if index > 0 and argument.startswith("-"):
            continue
        path = Path(os.path.abspath(base / os.path.expanduser(argument)))
        if index == 0 and found:
            path = Path(found)
        if not _is_file(path) or _under(path, directories):
            continue
        real = path.resolve()
        if _under(real, (*SYSTEM_DIRS, *directories)):
            continue
        # A link in a system directory to a program elsewhere (/usr/local/bin/node ->
        # /opt/node/bin/node): the program where the link leads, so the link works.
        files.append(real if _under(path, SYSTEM_DIRS) else path)
    return files


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; False for a word that cannot be one (longer than a name may
    be: a bot's argument need not be a path at all)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _wrapped_program(argv: Sequence[str]) -> str | None:
    """PROGRAM of ``sh -c SCRIPT NAME PROGRAM ...`` (the server's compile: ``javac``), if any.

    Only that position, which the caller writes: a word elsewhere may be a
    participant's (a class name), and must not choose what the view shows.
    """
    if len(argv) > 4 and Path(argv[0]).name in SHELLS and argv[1] == "-c":
        return argv[4]
    return None


def _module_argument(argv: Sequence[str]) -> str | None:
    """The module of ``python -m MODULE`` (or ``-mMODULE``), if the command runs one."""
    for index, argument in enumerate(argv[1:], start=1):
        if argument == "-m" and index + 1 < len(argv):
            return argv[index + 1]
        if argument.startswith("-m") and len(argument) > 2:
            return argument[2:]
        if not argument.startswith("-"):
            return None  # a script: the interpreter's own options end here
    return None


def _python_prefixes(executable: Path) -> list[Path]:
    """The prefixes (a virtualenv, and the installation it points to) a Python program needs."""
    out: list[Path] = []
    for candidate in (Path(os.path.abspath(executable)), executable.resolve()):
        if candidate.parent.name != "bin" or "python" not in candidate.name:
            continue
        prefix = candidate.parent.parent
        if _under(prefix, SYSTEM_DIRS) or prefix in out:
            continue
        if (prefix / "pyvenv.cfg").is_file() or any(prefix.glob("lib/python3*")):
            out.append(prefix)
    return out


def _runtime_prefixes(executable: Path) -> tuple[list[Path], list[Path]]:
    """A JDK's, node's or Rust toolchain's installation the program belongs to: (prefixes to
    show, /etc files).

    Its prefix (the directory above its ``bin``, where its links lead) is shown
    whole unless it is under ``/usr`` already; a JDK's links into ``/etc`` are
    followed (Debian's keeps ``lib/jvm.cfg``, without which ``java`` does not
    start, and its security settings there).
    """
    prefixes: list[Path] = []
    etc_files: list[Path] = []
    for candidate in (Path(os.path.abspath(executable)), executable.resolve()):
        if candidate.parent.name != "bin":
            continue
        prefix = candidate.parent.parent
        if prefix == Path("/") or str(prefix) in SYSTEM_DIRS:
            continue  # /bin/node, /usr/bin/java: a system program, its links followed below
        jvm = any((prefix / name).exists() for name in JVM_MARKS)
        marks = (*NODE_MARKS, *RUST_MARKS)
        if not jvm and not any((prefix / name).exists() for name in marks):
            continue
        if not _under(prefix, SYSTEM_DIRS) and prefix not in prefixes:
            prefixes.append(prefix)
        if jvm:
            etc_files += [path for path in _etc_links(str(prefix)) if path not in etc_files]
    return prefixes, etc_files


@functools.cache
def _etc_links(prefix: str) -> tuple[Path, ...]:
    """Where the links of a runtime's tree that lead into ``/etc`` lead (once per process)."""
    found: list[Path] = []
    seen = 0
    for directory, subdirectories, names in os.walk(prefix):
        for name in (*subdirectories, *names):
            seen += 1
            path = os.path.join(directory, name)
            if os.path.islink(path):
                target = Path(os.path.realpath(path))
                if ETC in target.parents and target.exists() and target not in found:
                    found.append(target)
        if seen > LINK_WALK_LIMIT:
            break
    return tuple(found)


def etc_files(uid: int) -> dict[str, bytes]:
    """The ``ETC_ACCOUNTS`` files of a bot whose uid is ``uid``.

    Its own uid has no name: a JVM that knows its user's name keeps its
    performance data in ``/tmp/hsperfdata_NAME`` under a file lock, which the
    lock filter refuses, and says so on stdout, the bot's protocol channel.
    """
    accounts = [(0, "root", "/root"), (65534, "nobody", "/nonexistent")]
    accounts = [account for account in accounts if account[0] != uid]
    passwd = "".join(
        f"{name}:x:{number}:{number}:{name}:{home}:/bin/sh\n" for number, name, home in accounts
    )
    group = "".join(f"{name}:x:{number}:\n" for number, name, _home in accounts)
    return {
        "/etc/passwd": passwd.encode(),
        "/etc/group": group.encode(),
        "/etc/nsswitch.conf": b"passwd: files\ngroup: files\nshadow: files\nhosts: files\n",
        "/etc/hosts": b"127.0.0.1 localhost bot\n::1 localhost ip6-localhost ip6-loopback\n",
    }


def etc_pipes(uid: int) -> dict[str, int]:
    """``etc_files(uid)`` in pipes: the read ends, for ``Isolation.command``'s ``etc_fds``."""
    out: dict[str, int] = {}
    try:
        for target, content in etc_files(uid).items():
            out[target] = data_pipe(content)
    except BaseException:
        for fd in out.values():
            os.close(fd)
        raise
    return out


@functools.cache
def _project_packages() -> tuple[Path, ...]:
    """The directories of this project's packages a bundled Python bot imports."""
    out: list[Path] = []
    for name in PROJECT_PACKAGES:
        with contextlib.suppress(ImportError, ValueError):
            spec = importlib.util.find_spec(name)
            if spec is not None and spec.origin is not None:
                out.append(Path(spec.origin).resolve().parent)
    return tuple(out)


def _under(path: Path | str, roots: Iterable[str | Path]) -> bool:
    """Whether ``path`` is one of ``roots`` or lies beneath one (absolute paths, as strings:
    ``Path.parents`` made this the better part of a start's own work in the referee)."""
    text = str(path)
    for root in roots:
        prefix = str(root)
        if text == prefix or text.startswith(prefix if prefix.endswith("/") else prefix + "/"):
            return True
    return False


def _ancestors(path: str) -> Iterator[str]:
    """The directories above an absolute path, nearest first (``/`` last)."""
    while (parent := os.path.dirname(path)) != path:
        yield parent
        path = parent


@functools.cache
def _system_options() -> tuple[str, ...]:
    """bwrap options for ``SYSTEM_DIRS`` and ``SYSTEM_LINKS`` as this machine has them."""
    out: list[str] = []
    for directory in SYSTEM_DIRS:
        if os.path.isdir(directory):
            out += ["--ro-bind", directory, directory]
    for name in SYSTEM_LINKS:
        if os.path.islink(name):
            out += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            out += ["--ro-bind", name, name]
    return tuple(out)


def _mount_options(
    binds: list[Path],
    files: list[Path],
    chdir: str,
    scratch: int | None,
    etc_fds: Mapping[str, int] = MappingProxyType({}),
) -> list[str]:
    """bwrap options that build the view: system dirs, scratch, parents, binds, then /etc's."""
    out = list(_system_options())
    if scratch is not None:
        out += ["--size", str(scratch)]
    out += ["--perms", "1777", "--tmpfs", SCRATCH]
    etc_binds, etc_links = _etc_shown()
    shown = {str(path) for path in (*binds, *files, *etc_binds)}
    kept: list[str] = []
    for target in sorted(shown, key=lambda text: (text.count("/"), text)):
        if not _under(os.path.dirname(target), kept):  # (under another: shown with it)
            kept.append(target)
    links = [(leads_to, str(link)) for leads_to, link in etc_links if not _under(link, kept)]
    parents: set[str] = set()
    for one in [*kept, *etc_fds, *(link for _, link in links)]:
        parents.update(_ancestors(one))
    parents.update([chdir, *(str(parent) for parent in Path(chdir).parents)])
    system = (*SYSTEM_DIRS, *SYSTEM_LINKS)
    for parent in sorted(parents, key=lambda text: (text.count("/"), text)):
        if parent in ("/", SCRATCH) or _under(parent, system) or _under(parent, kept):
            continue
        out += ["--perms", "0755", "--dir", parent]
    for target in kept:
        out += ["--ro-bind", target, target]
    for leads_to, link in links:
        out += ["--symlink", leads_to, link]
    for made_name, fd in etc_fds.items():
        out += ["--perms", "0444", "--ro-bind-data", str(fd), made_name]
    return out


@functools.cache
def _etc_shown() -> tuple[tuple[Path, ...], tuple[tuple[str, Path], ...]]:
    """``ETC_SHOWN`` on this machine: (paths to bind, (target, link) pairs to make).

    A link to a system file (``/etc/localtime`` -> ``/usr/share/zoneinfo/...``)
    stays a link, as programs read the zone's name from it; any other is bound
    as what it leads to.
    """
    binds: list[Path] = []
    links: list[tuple[str, Path]] = []
    for name in ETC_SHOWN:
        path = Path(name)
        if path.is_symlink() and _under(path.resolve(), SYSTEM_DIRS) and path.exists():
            links.append((os.readlink(path), path))
        elif path.exists():
            binds.append(path)
    return tuple(binds), tuple(links)


# ---------------------------------------------------------------- what the machine has


def detect_isolation(root: bool, scratch_bytes: int | None) -> tuple[Isolation | None, str]:
    """The isolation this machine gives, tried once with a real bot-like program; or why not."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, (
            "bubblewrap is not installed (Debian: apt-get install bubblewrap): bots can read "
            "whatever the referee's user can, and see and signal each other"
        )
    setpriv: str | None = None
    pool = UidPool()
    if root:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            return None, "setpriv (util-linux) is not installed: no own uid per bot"
        why = pool.check()
        if why:
            return None, f"no uid pool for bots: {why}"
    isolation = Isolation(bwrap, setpriv, scratch_bytes, pool)
    program = lock_filter()
    if program is not None:  # with the filter first: one try where it works (the usual case)
        filtered = dataclasses.replace(isolation, seccomp=program)
        if not _try(filtered, root):
            return filtered, ""
    why = _try(isolation, root)
    if why:
        return None, f"bubblewrap cannot isolate a bot here: {why}"
    return isolation, ""


def _try(isolation: Isolation, root: bool) -> str:
    """'' if a bot-like program runs under ``isolation`` (its filter too, if it has one)."""
    lease = isolation.pool.lease() if root else None
    fds: dict[str, int] = {}
    try:
        if isolation.seccomp is not None:
            fds["seccomp"] = data_pipe(isolation.seccomp)
        etc = etc_pipes(os.getuid() if lease is None else lease.uid)
        fds.update(etc)
        argv = isolation.command(
            ["/bin/sh", "-c", "test -w /tmp && ! test -e /sys/fs/cgroup && test -r /etc/passwd"],
            cwd=None,
            env={},
            uid=None if lease is None else lease.uid,
            seccomp_fd=fds.get("seccomp"),
            etc_fds=etc,
        )
        return failure_of(argv, pass_fds=tuple(fds.values()))
    finally:
        for fd in fds.values():
            os.close(fd)
        if lease is not None:
            lease.release()


def data_pipe(data: bytes) -> int:
    """The read end of a pipe holding ``data`` whole (the write end is closed).

    For a seccomp filter and ``etc_files``: a few hundred bytes, far below a pipe's buffer.
    """
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, data)
    finally:
        os.close(write_end)
    return read_end


def failure_of(argv: Sequence[str], pass_fds: Sequence[int] = ()) -> str:
    """'' if ``argv`` runs and exits 0 (in ``/``, no input), else its complaint: one line."""
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            timeout=20,
            check=False,
            stdin=subprocess.DEVNULL,
            cwd="/",
            pass_fds=tuple(pass_fds),
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    if done.returncode == 0:
        return ""
    message = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return message[-1] if message else f"exit status {done.returncode}"
