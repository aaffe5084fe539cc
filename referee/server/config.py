"""A competition's TOML file, read and checked whole before the server starts.

Every mistake is one ``ConfigError`` line, ``FILE: KEY: PROBLEM``, as for a
league file.  The shape (every key optional unless marked)::

    [competition]  name (required), seed (the scheduler's and the groups' public
                   identities, not the cards: those come from a secret key in the
                   database, ``referee.dealkey``), public_deals (true: the cards
                   follow from the seed; fixed at the first start), data (directory
                   for the database, uploads and logs; default: "<file stem>-data"),
                   self_registration (bool), runtimes (list of RUNTIMES),
                   house_bots (bundled bots that always play, e.g. ["tracker"])
    [server]       host, port, jobs (tables played at once), secure_cookies (bool),
                   registrations_per_hour (self-registrations per client address),
                   and what one web client may cost (``ClientLimits``): header_timeout,
                   body_timeout, body_rate, send_timeout, connections_per_address,
                   anonymous_per_address, anonymous
    [tables]       players (seats per table, 3..8), hand_limit
    [rules]        preset, options = { option = value, ... }
    [time_control] move_time, time_bank, startup_time, margin, max_faults
    [uploads]      max_kb (one upload), max_files (in an archive), max_unpacked_kb,
                   per_hour (uploads per participant per hour)
    [scheduler]    max_share (the largest fraction of recent table seats one
                   participant may hold while others wait; 0 < x <= 1)
    [sandbox]      as in a league file (docs/hardening.md; tighter defaults here),
                   and compile_seconds
    [remote]       host, port (where remote bots connect; the section allows
                   the "remote" runtime), wait (seconds a remote bot that drops
                   mid-group is waited for before its seat plays by default)
    [storage]      min_free_mb (play and admission pause while the data
                   directory's disk has less free), stderr_kb (each bot's
                   stderr kept per match), participant_mb (files kept per
                   participant: uploads, unpacked and built)
    [admission]    groups (duplicate groups the check plays as a table would),
                   seconds (their wall clock), watch_matches (real matches
                   compared with the check's fault rate)

The sections a league file has too ([rules], [time_control], [sandbox]) are
read by the league's reader (``referee.league.config``), so they mean the same
and fail with the same lines; the server's own sections use its ``Section``.

Relative paths are taken from the directory holding the file.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

from engine.rules import Rules
from engine.state import MAX_PLAYERS, MIN_PLAYERS
from referee.league.config import ConfigError, ConfigReader, RemoteSettings, Section
from referee.sandbox import MIB, Limits
from referee.timecontrol import TimeControl

__all__ = [
    "RUNTIMES",
    "AdmissionSettings",
    "ClientLimits",
    "CompetitionConfig",
    "ConfigError",
    "StorageLimits",
    "UploadLimits",
    "load_config",
]

REMOTE = "remote"  # the runtime of a version that connects from its owner's machine
RUNTIMES: tuple[str, ...] = ("python3", "node", "java", "c", "binary", REMOTE)
UPLOADED: tuple[str, ...] = RUNTIMES[:-1]  # the default: every runtime that is an upload
KIB = 1024
SANDBOX_DEFAULTS = {"memory_mb": 1024, "processes": 64, "file_size_mb": 64}
"""Tighter than a league's: a competition runs strangers' code for weeks."""


@dataclasses.dataclass(frozen=True)
class UploadLimits:
    max_bytes: int = 1024 * KIB  # one upload, as sent
    max_files: int = 200  # files in an archive
    max_unpacked_bytes: int = 16 * MIB  # an archive's files together, unpacked
    per_hour: int = 30  # uploads per participant in any hour


@dataclasses.dataclass(frozen=True)
class ClientLimits:
    """What one web client may cost the server (``referee.server.listener``, ``middleware``)."""

    header_timeout: float = 10.0  # seconds for a whole request head
    body_timeout: float = 20.0  # seconds for a body, plus a second per body_rate bytes
    body_rate: int = 500  # bytes a second: the slowest a body may keep coming
    send_timeout: float = 60.0  # seconds an answer may wait for its client to read it
    connections_per_address: int = 64  # open connections from one client address
    anonymous_per_address: int = 8  # requests with a body and nobody signed in, per address
    anonymous: int = 64  # the same, from all addresses together


@dataclasses.dataclass(frozen=True)
class StorageLimits:
    """What the server keeps on its disk, and how much room it keeps free (docs/server.md)."""

    min_free_bytes: int = 1024 * MIB  # play, admission and uploads pause below this
    stderr_bytes: int = 16 * KIB  # each bot's stderr kept per match: its head and its tail
    participant_bytes: int = 256 * MIB  # a participant's versions' files together


@dataclasses.dataclass(frozen=True)
class AdmissionSettings:
    """The part of admission that plays as a table plays (``referee.server.admission``)."""

    groups: int = 1  # duplicate rotation groups: the table's seats once each per group
    seconds: int = 600  # their wall clock, together
    watch_matches: int = 12  # real matches whose fault rate is compared with the check's


@dataclasses.dataclass(frozen=True)
class CompetitionConfig:
    path: Path
    name: str
    seed: int
    data: Path
    self_registration: bool
    runtimes: tuple[str, ...]
    house_bots: tuple[str, ...]
    host: str
    port: int
    jobs: int
    secure_cookies: bool
    registrations_per_hour: int
    players: int
    rules: Rules
    time_control: TimeControl
    uploads: UploadLimits
    max_share: float
    sandbox_level: str
    sandbox_limits: Limits
    compile_seconds: int
    remote: RemoteSettings | None = None  # None: no remote bots
    storage: StorageLimits = StorageLimits()
    admission: AdmissionSettings = AdmissionSettings()
    clients: ClientLimits = ClientLimits()
    public_deals: bool = False  # the cards follow from the seed (research), not a secret key

    @property
    def database(self) -> Path:
        return self.data / "competition.sqlite"

    @property
    def uploads_dir(self) -> Path:
        return self.data / "versions"

    @property
    def logs_dir(self) -> Path:
        return self.data / "logs"


def load_config(path: Path) -> CompetitionConfig:
    """Read and check ``path``; raises ``ConfigError`` with one line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    return _CompetitionReader(path).competition(data)


class _CompetitionReader(ConfigReader):
    SECTIONS = (
        "competition",
        "server",
        "tables",
        "rules",
        "time_control",
        "uploads",
        "scheduler",
        "sandbox",
        "remote",
        "storage",
        "admission",
    )

    def competition(self, data: dict[str, Any]) -> CompetitionConfig:
        Section(self, data, "").finish(self.SECTIONS)
        if "competition" not in data:
            self.fail("competition", "missing: the file needs [competition] with a name")
        competition = Section(self, data["competition"], "competition")
        name = competition.text("name", None)
        if not name.strip():
            self.fail("competition.name", "must not be empty")
        seed = competition.integer("seed", 1, 0)
        public_deals = competition.boolean("public_deals", False)
        data_text = competition.text("data", f"{self.path.stem}-data")
        self_registration = competition.boolean("self_registration", False)
        default_runtimes = [*UPLOADED, REMOTE] if "remote" in data else list(UPLOADED)
        runtimes = competition.raw("runtimes") or default_runtimes
        if not isinstance(runtimes, list):
            competition.reader.fail("competition.runtimes", "must be a non-empty list")
        for runtime in runtimes:
            if runtime not in RUNTIMES:
                known = ", ".join(RUNTIMES)
                self.fail("competition.runtimes", f"unknown runtime {runtime!r} (known: {known})")
        if REMOTE in runtimes and "remote" not in data:
            self.fail("competition.runtimes", "'remote' needs a [remote] section (its port)")
        house = competition.raw("house_bots") or []
        if not isinstance(house, list) or not all(isinstance(n, str) for n in house):
            self.fail("competition.house_bots", "must be a list of bundled bot names")
        try:
            import bots.registry as registry

            for bot_name in house:
                if registry.resolve(bot_name) is None:
                    self.fail("competition.house_bots", f"{bot_name!r} is not a bundled bot")
        except ImportError:
            pass
        competition.finish(
            (
                "name",
                "seed",
                "public_deals",
                "data",
                "self_registration",
                "runtimes",
                "house_bots",
            )
        )

        server = Section(self, data.get("server", {}), "server")
        host = server.text("host", "127.0.0.1")
        port = server.integer("port", 8000, 0, 65535)
        jobs = server.integer("jobs", 2, 1, 64)
        secure_cookies = server.boolean("secure_cookies", True)
        registrations_per_hour = server.integer("registrations_per_hour", 5, 1)
        clients = self.client_limits(server)
        server.finish(
            (
                "host",
                "port",
                "jobs",
                "secure_cookies",
                "registrations_per_hour",
                *(field.name for field in dataclasses.fields(ClientLimits)),
            )
        )

        tables = Section(self, data.get("tables", {}), "tables")
        players = tables.integer("players", 3, MIN_PLAYERS, MAX_PLAYERS)
        hand_limit = tables.integer("hand_limit", 1, 1) if tables.has("hand_limit") else None
        tables.finish(("players", "hand_limit"))

        _preset, _options, rules = self.rules(data, None, hand_limit)
        control = self.time_control(data)

        uploads_section = Section(self, data.get("uploads", {}), "uploads")
        base = UploadLimits()
        uploads = UploadLimits(
            max_bytes=uploads_section.integer("max_kb", base.max_bytes // KIB, 1) * KIB,
            max_files=uploads_section.integer("max_files", base.max_files, 1),
            max_unpacked_bytes=uploads_section.integer(
                "max_unpacked_kb", base.max_unpacked_bytes // KIB, 1
            )
            * KIB,
            per_hour=uploads_section.integer("per_hour", base.per_hour, 1),
        )
        uploads_section.finish(("max_kb", "max_files", "max_unpacked_kb", "per_hour"))

        scheduler = Section(self, data.get("scheduler", {}), "scheduler")
        max_share = scheduler.raw("max_share")
        if max_share is None:
            max_share = 1.0
        if not isinstance(max_share, int | float) or isinstance(max_share, bool):
            self.fail("scheduler.max_share", "must be a number")
        if not 0.01 <= max_share <= 1.0:
            self.fail("scheduler.max_share", f"must be 0.01 to 1, got {max_share}")
        scheduler.finish(("max_share",))

        storage_section = Section(self, data.get("storage", {}), "storage")
        kept = StorageLimits()
        storage = StorageLimits(
            min_free_bytes=storage_section.integer(
                "min_free_mb", kept.min_free_bytes // MIB, 0, 1 << 30
            )
            * MIB,
            stderr_bytes=storage_section.integer("stderr_kb", kept.stderr_bytes // KIB, 1, 1 << 20)
            * KIB,
            participant_bytes=storage_section.integer(
                "participant_mb", kept.participant_bytes // MIB, 1, 1 << 30
            )
            * MIB,
        )
        storage_section.finish(("min_free_mb", "stderr_kb", "participant_mb"))
        if storage.participant_bytes < uploads.max_bytes + uploads.max_unpacked_bytes:
            self.fail(
                "storage.participant_mb",
                f"must hold at least one upload and its files ({uploads.max_bytes // KIB} KiB "
                f"+ {uploads.max_unpacked_bytes // KIB} KiB, [uploads])",
            )

        admission_section = Section(self, data.get("admission", {}), "admission")
        usual = AdmissionSettings()
        admission = AdmissionSettings(
            groups=admission_section.integer("groups", usual.groups, 1, 10),
            seconds=admission_section.integer("seconds", usual.seconds, 10, 24 * 3600),
            watch_matches=admission_section.integer(
                "watch_matches", usual.watch_matches, 3, 10_000
            ),
        )
        admission_section.finish(("groups", "seconds", "watch_matches"))

        level, limits, compile_seconds = self.competition_sandbox(data)
        remote = None
        if "remote" in data:
            if isinstance(data["remote"], dict) and "tokens" in data["remote"]:
                self.fail("remote.tokens", "a remote version's token is on its page, not a file")
            remote = self.remote(data)
        return CompetitionConfig(
            path=self.path,
            name=name,
            seed=seed,
            data=(self.path.parent / data_text).resolve(),
            self_registration=self_registration,
            runtimes=tuple(runtimes),
            house_bots=tuple(house),
            host=host,
            port=port,
            jobs=jobs,
            secure_cookies=secure_cookies,
            registrations_per_hour=registrations_per_hour,
            players=players,
            rules=rules,
            time_control=control,
            uploads=uploads,
            max_share=float(max_share),
            sandbox_level=level,
            sandbox_limits=limits,
            compile_seconds=compile_seconds,
            remote=remote,
            storage=storage,
            admission=admission,
            public_deals=public_deals,
            clients=clients,
        )

    def client_limits(self, server: Section) -> ClientLimits:
        """[server]'s limits on one web client (docs/server.md, "Slow and abusive clients")."""
        base = ClientLimits()
        seconds = {}
        for key in ("header_timeout", "body_timeout", "send_timeout"):
            value = server.number(key, getattr(base, key))
            if not 0.1 <= value <= 3600:
                self.fail(f"server.{key}", f"must be 0.1 to 3600 seconds, got {value:g}")
            seconds[key] = value
        return ClientLimits(
            header_timeout=seconds["header_timeout"],
            body_timeout=seconds["body_timeout"],
            body_rate=server.integer("body_rate", base.body_rate, 1),
            send_timeout=seconds["send_timeout"],
            connections_per_address=server.integer(
                "connections_per_address", base.connections_per_address, 1
            ),
            anonymous_per_address=server.integer(
                "anonymous_per_address", base.anonymous_per_address, 1
            ),
            anonymous=server.integer("anonymous", base.anonymous, 1),
        )

    def rules(  # type: ignore[override]  # [tables] hand_limit, not [league]'s
        self, data: dict[str, Any], _unused: None, hand_limit: int | None
    ) -> tuple[str, dict[str, object], Rules]:
        """The league's [rules], with [tables] hand_limit as its hand_limit option."""
        rules = data.get("rules", {})
        if hand_limit is not None and isinstance(rules, dict):
            options = rules.get("options", {})
            if isinstance(options, dict) and "hand_limit" in options:
                self.fail("tables.hand_limit", "also set as rules.options.hand_limit")
            if isinstance(options, dict):
                rules = {**rules, "options": {**options, "hand_limit": hand_limit}}
        return super().rules({"rules": rules}, None)

    def competition_sandbox(self, data: dict[str, Any]) -> tuple[str, Limits, int]:
        """The league's [sandbox] with the server's defaults, and compile_seconds."""
        section = Section(self, data.get("sandbox", {}), "sandbox")
        compile_seconds = section.integer("compile_seconds", 60, 1, 3600)
        given = {key: value for key, value in section.data.items() if key != "compile_seconds"}
        level, limits = self.sandbox({"sandbox": {**SANDBOX_DEFAULTS, **given}})
        return level, limits, compile_seconds
