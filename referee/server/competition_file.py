"""A competition's TOML file, read and checked whole before the server starts.

Every mistake is one ``ConfigError`` line, ``FILE: KEY: PROBLEM``, as for a
league file.  The shape (every key optional unless marked)::

    [competition]  name (required), seed (the scheduler's and the groups' public
                   identities, not the cards: those come from a secret key in the
                   database, ``referee.match.dealkey``), public_deals (true: the cards
                   follow from the seed; fixed at the first start), data (directory
                   for the database, uploads and logs; default: "<file stem>-data"),
                   self_registration (bool), runtimes (list of RUNTIMES),
                   house_bots (bundled bots that always play, e.g. ["tracker"])
    [server]       host, port, jobs (tables played at once), secure_cookies (bool),
                   registrations_per_hour (self-registrations per client address),
                   and what one web client may cost (``ClientLimits``): header_timeout,
                   body_timeout, body_rate, send_timeout, connections_per_address,
                   anonymous_per_address, anonymous, downloads_per_minute
    [tables]       players (seats per table, 3..8), hand_limit
    [rules]        preset, options = { option = value, ... }
    [time_control] move_time, time_bank, startup_time, margin, max_faults
    [uploads]      max_kb (one upload), max_files (in an archive), max_unpacked_kb,
                   per_hour (uploads per participant per hour)
    [scheduler]    max_share (the largest fraction of recent table seats one
                   participant may hold while others wait; 0 < x <= 1),
                   settled_per_minute, max_per_minute, settled_overlap (the
                   pace: ``referee.server.pace``)
    [sandbox]      as in a league file (docs/hardening.md; tighter defaults here),
                   and compile_seconds
    [remote]       host, port (where remote bots connect; the section allows
                   the "remote" runtime), wait (seconds a remote bot that drops
                   mid-group is waited for before its seat plays by default)
    [storage]      min_free_mb (play and admission pause while the data
                   directory's disk has less free), stderr_kb (each bot's
                   stderr kept per match), participant_mb (files kept per
                   participant: uploads, unpacked and built), match_logs
                   ("compact" records or "full" JSON lines; match/archive.py)
    [admission]    groups (duplicate groups the check plays as a table would),
                   seconds (their wall clock), watch_matches (real matches
                   compared with the check's fault rate)
    [retention]    days (full match records kept; results are kept for ever),
                   first_groups (every match of each version's first groups
                   kept for ever), every_minutes (how often old records are
                   pruned), operations_log_mb and operations_log_files
                   (DATA/operations.log rotated by size, old files kept),
                   challenge_days (a challenge's records; default: for ever)
                   (``referee.server.retention``)
    [phases]       opens, freeze (submissions close), finals, ends: timezone-aware
                   ISO 8601 times, in that order, each optional
                   (``referee.server.phases``)
    [finals]       groups (duplicate groups of the final evaluation), top (only the
                   ladder's top N play; 0: every participant)
    [challenges]   per_hour (challenges per participant per hour; 0: none),
                   opponents_see (bool: a challenge's opponents see it on their page)
    [fair_tables]  collusion_z (the flow beyond prediction, in standard errors, above
                   which a pair is listed), collusion_matches (the fewest shared matches
                   a pair needs to be judged)

Every section is declared as a ``referee.settings.sections.Section`` struct; the
sections a league file has too ([rules], [time_control], [sandbox], [remote]) are
the league's (``referee.settings.shared``), so they mean the same and fail with
the same lines.

Relative paths are taken from the directory holding the file.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, TextIO, cast

import msgspec
from msgspec import Meta

from engine.rules import Rules
from engine.state import MAX_PLAYERS, MIN_PLAYERS
from referee.match.archive import DEFAULT_LOG_FORM, LOG_FORMS, LogForm
from referee.sandbox import MIB, Limits
from referee.server import operations
from referee.server.pace import PaceSettings
from referee.settings.cluster import ClusterSection, ClusterTLS, tls_of
from referee.settings.sections import ConfigError, Section, decode, fail, one_of
from referee.settings.shared import (
    RemoteSettings,
    RulesSection,
    SandboxSection,
    TimeControlSection,
    limit_range,
    parse_toml,
    paths_from,
    read_text,
    rules_of,
    sandbox_of,
    time_control_of,
)
from referee.transport.timecontrol import TimeControl

__all__ = [
    "RUNTIMES",
    "AdmissionSettings",
    "ClientLimits",
    "CompetitionConfig",
    "ConfigError",
    "RetentionSettings",
    "StorageLimits",
    "UploadLimits",
    "load_config",
]

REMOTE = "remote"  # the runtime of a version that connects from its owner's machine
RUNTIMES: tuple[str, ...] = (
    "python3",
    "node",
    "java",
    "c",
    "cpp",
    "rust",
    "go",
    "binary",
    REMOTE,
)
UPLOADED: tuple[str, ...] = RUNTIMES[:-1]  # the default: every runtime that is an upload
KIB = 1024


@dataclasses.dataclass(frozen=True)
class UploadLimits:
    # one upload, as sent: a static Go or C++ bot is 2 to 3 MiB (docs/server.md, "Binaries")
    max_bytes: int = 8192 * KIB
    max_files: int = 200  # files in an archive
    max_unpacked_bytes: int = 16 * MIB  # an archive's files together, unpacked
    per_hour: int = 30  # uploads per participant in any hour


Timeout = Annotated[float, Meta(ge=0.1, le=3600, extra={"unit": "seconds"})]
AtLeastOne = Annotated[int, Meta(ge=1)]


class ClientLimits(Section, frozen=True):
    """What one web client may cost the server (``referee.server.listener``, ``middleware``)."""

    header_timeout: Timeout = 10.0  # seconds for a whole request head
    body_timeout: Timeout = 20.0  # seconds for a body, plus a second per body_rate bytes
    body_rate: AtLeastOne = 500  # bytes a second: the slowest a body may keep coming
    send_timeout: Timeout = 60.0  # seconds an answer may wait for its client to read it
    connections_per_address: AtLeastOne = 64  # open connections from one client address
    anonymous_per_address: AtLeastOne = 8  # requests with a body and nobody signed in, per address
    anonymous: AtLeastOne = 64  # the same, from all addresses together
    downloads_per_minute: AtLeastOne = 30  # match logs a participant (or address) may fetch


@dataclasses.dataclass(frozen=True)
class StorageLimits:
    """What the server keeps on its disk, and how much room it keeps free (docs/server.md)."""

    min_free_bytes: int = 1024 * MIB  # play, admission and uploads pause below this
    stderr_bytes: int = 16 * KIB  # each bot's stderr kept per match: its head and its tail
    participant_bytes: int = 256 * MIB  # a participant's versions' files together


class AdmissionSettings(Section, frozen=True):
    """[admission]: the part of admission that plays as a table plays (``server.admission``)."""

    # duplicate rotation groups: the table's seats once each per group
    groups: Annotated[int, Meta(ge=1, le=10)] = 1
    seconds: Annotated[int, Meta(ge=10, le=24 * 3600)] = 600  # their wall clock, together
    # real matches whose fault rate is compared with the check's
    watch_matches: Annotated[int, Meta(ge=3, le=10_000)] = 12


class CompetitionSection(Section, frozen=True):
    name: str
    seed: Annotated[int, Meta(ge=0)] = 1
    public_deals: bool = False
    data: str | None = None  # default: "<file stem>-data"
    self_registration: bool = False
    # default: every uploaded runtime, and "remote" with a [remote] section
    runtimes: Annotated[list[str], Meta(extra={"expected": "a non-empty list"})] | None = None
    house_bots: Annotated[list[str], Meta(extra={"expected": "a list of bundled bot names"})] = (
        msgspec.field(default_factory=list)
    )


class ServerSection(ClientLimits, frozen=True):
    """[server]: where it listens and how much it does at once, and ``ClientLimits``."""

    host: str = "127.0.0.1"
    port: Annotated[int, Meta(ge=0, le=65535)] = 8000
    jobs: Annotated[int, Meta(ge=1, le=64)] = 2  # tables played at once
    secure_cookies: bool = True
    registrations_per_hour: AtLeastOne = 5  # self-registrations per client address


class TablesSection(Section, frozen=True):
    players: Annotated[int, Meta(ge=MIN_PLAYERS, le=MAX_PLAYERS)] = 3
    hand_limit: AtLeastOne | None = None  # None: the rules'


class UploadsSection(Section, frozen=True):
    """[uploads], in KiB: ``UploadLimits`` in bytes."""

    max_kb: AtLeastOne = UploadLimits.max_bytes // KIB
    max_files: AtLeastOne = UploadLimits.max_files
    max_unpacked_kb: AtLeastOne = UploadLimits.max_unpacked_bytes // KIB
    per_hour: AtLeastOne = UploadLimits.per_hour


class SchedulerSection(Section, frozen=True):
    # the largest share of recent table seats one participant may hold while others wait
    max_share: Annotated[float, Meta(ge=0.01, le=1.0)] = 1.0
    # The pace (``referee.server.pace``): matches a minute while the ranking is settled, the
    # cap at full speed (none if absent), and the ranks two neighbours may share, settled.
    settled_per_minute: Annotated[float, Meta(gt=0, le=100_000)] = PaceSettings.settled_per_minute
    max_per_minute: Annotated[float, Meta(gt=0, le=100_000)] | None = None
    settled_overlap: Annotated[int, Meta(ge=0, le=1000)] = PaceSettings.settled_overlap


class StorageSection(Section, frozen=True):
    """[storage], in MiB and KiB: ``StorageLimits`` in bytes."""

    min_free_mb: Annotated[int, Meta(ge=0, le=1 << 30)] = StorageLimits.min_free_bytes // MIB
    stderr_kb: Annotated[int, Meta(ge=1, le=1 << 20)] = StorageLimits.stderr_bytes // KIB
    participant_mb: Annotated[int, Meta(ge=1, le=1 << 30)] = StorageLimits.participant_bytes // MIB

    # How each match's log is kept: a compact record (a few kB), or full JSON lines.
    match_logs: Annotated[str, one_of(LOG_FORMS)] = DEFAULT_LOG_FORM


class RetentionSettings(Section, frozen=True):
    """[retention]: how long a match's full record stays on disk (``server.retention``)."""

    # Days a finished match's record (its log and what is stored beside it) is kept; 0: only
    # the kept ones stay. Its result (the matches and seats rows) is kept for ever.
    days: Annotated[float, Meta(ge=0, le=100 * 365)] = 7.0
    # Every match of each version's first this-many groups is kept for ever: its debut.
    first_groups: Annotated[int, Meta(ge=0, le=1000)] = 2
    every_minutes: Annotated[float, Meta(ge=0.1, le=24 * 60)] = 60.0  # between two passes
    # DATA/operations.log is rotated past this size, and this many old files are kept
    # (``referee.server.log_rotation``).
    operations_log_mb: Annotated[int, Meta(ge=1, le=1 << 20)] = operations.MAX_MB
    operations_log_files: Annotated[int, Meta(ge=1, le=1000)] = operations.OLD_FILES
    # Days a challenge's match records are kept; absent: for ever (a match someone asked
    # for). Finals matches are always kept (``referee.server.retention``).
    challenge_days: Annotated[float, Meta(ge=0, le=100 * 365)] | None = None


class CompetitionSandbox(SandboxSection, frozen=True):
    """The league's [sandbox], tighter by default (a competition runs strangers' code for
    weeks), and the seconds a version's build may take."""

    memory_mb: Annotated[int, limit_range("memory_mb")] | bool | None = 1024
    processes: Annotated[int, limit_range("processes")] | bool | None = 64
    file_size_mb: Annotated[int, limit_range("file_size_mb")] | bool | None = 64
    compile_seconds: Annotated[int, Meta(ge=1, le=3600)] = 60


# ---------------------------------------------------------------- contest: phases and after
# One block: the dates of a contest and the settings of its finals, challenges and fair
# tables (docs/server.md, "Phases").  ``referee.server.phases`` enforces the dates.

PHASE_NAMES: tuple[str, ...] = ("opens", "freeze", "finals", "ends")


class PhasesSection(Section, frozen=True):
    """[phases]: when the contest opens, when submissions close, when the finals start, the end."""

    opens: str | None = None
    freeze: str | None = None  # submissions close
    finals: str | None = None
    ends: str | None = None


class FinalsSection(Section, frozen=True):
    groups: Annotated[int, Meta(ge=1, le=100_000)] = 30  # duplicate groups of the finals
    top: Annotated[int, Meta(ge=0, le=10_000)] = 0  # only the ladder's top N; 0: everyone


class ChallengesSection(Section, frozen=True):
    per_hour: Annotated[int, Meta(ge=0, le=1000)] = 3  # per participant; 0: no challenges
    opponents_see: bool = True  # a challenged participant sees it on its own page


class FairTablesSection(Section, frozen=True):
    collusion_z: Annotated[float, Meta(ge=1.0, le=100.0)] = 4.0
    collusion_matches: Annotated[int, Meta(ge=1, le=1_000_000)] = 12


@dataclasses.dataclass(frozen=True)
class PhaseDates:
    """The file's dates (UTC-aware), None where it gives none; the organiser may move them
    (``newmarket serve move-phase``), which ``referee.server.phases`` reads over these."""

    opens: datetime | None = None
    freeze: datetime | None = None
    finals: datetime | None = None
    ends: datetime | None = None


@dataclasses.dataclass(frozen=True)
class ContestSettings:
    phases: PhaseDates = dataclasses.field(default_factory=PhaseDates)
    finals: FinalsSection = dataclasses.field(default_factory=FinalsSection)
    challenges: ChallengesSection = dataclasses.field(default_factory=ChallengesSection)
    fair_tables: FairTablesSection = dataclasses.field(default_factory=FairTablesSection)


def parse_moment(text: str) -> datetime:
    """A timezone-aware ISO 8601 time (``2026-12-01T18:00Z``); ``ValueError`` with why not."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"{text!r} is not an ISO 8601 time (write e.g. 2026-12-01T18:00Z)"
        ) from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"{text!r} has no time zone (add Z for UTC, or +01:00)")
    return moment


def check_phase_order(dates: PhaseDates) -> str | None:
    """Why the dates are out of order (one line), or None: each after the one before it."""
    given = [(name, getattr(dates, name)) for name in PHASE_NAMES if getattr(dates, name)]
    for (first, at), (then, later) in itertools.pairwise(given):
        if later <= at:
            return f"{then} ({later.isoformat()}) must come after {first} ({at.isoformat()})"
    return None


def contest_settings(data: dict[str, object], path: Path) -> ContestSettings:
    """The [phases], [finals], [challenges] and [fair_tables] sections, one line per mistake."""
    raw = data.get("phases")
    if isinstance(raw, dict):  # TOML's own datetimes are read as the text they stand for
        raw = {k: v.isoformat() if isinstance(v, datetime) else v for k, v in raw.items()}
    section = decode(raw or {}, PhasesSection, path, "phases")
    moments: dict[str, datetime | None] = {}
    for name in PHASE_NAMES:
        text = getattr(section, name)
        try:
            moments[name] = None if text is None else parse_moment(text)
        except ValueError as error:
            fail(path, f"phases.{name}", str(error))
    dates = PhaseDates(**moments)
    wrong = check_phase_order(dates)
    if wrong is not None:
        fail(path, "phases", wrong)
    return ContestSettings(
        dates,
        decode(data.get("finals", {}), FinalsSection, path, "finals"),
        decode(data.get("challenges", {}), ChallengesSection, path, "challenges"),
        decode(data.get("fair_tables", {}), FairTablesSection, path, "fair_tables"),
    )


# ---------------------------------------------------------------- end of the contest block
class WebhookSection(Section, frozen=True):
    """[webhook]: the organiser's receiver, POSTed each event (``referee.server.webhook``)."""

    url: str
    timeout: Annotated[float, Meta(gt=0, le=120)] = 10.0  # seconds a delivery may take


class CompetitionFile(Section, frozen=True):
    """A competition file: its sections, in the order ``unknown key`` lists them."""

    competition: CompetitionSection
    server: ServerSection = ServerSection()
    tables: TablesSection = TablesSection()
    rules: RulesSection = RulesSection()
    time_control: TimeControlSection = TimeControlSection()
    uploads: UploadsSection = UploadsSection()
    scheduler: SchedulerSection = SchedulerSection()
    sandbox: CompetitionSandbox = CompetitionSandbox()
    remote: RemoteSettings | None = None  # None: no remote bots
    storage: StorageSection = StorageSection()
    admission: AdmissionSettings = AdmissionSettings()
    retention: RetentionSettings = RetentionSettings()
    # the contest block's sections, read by ``contest_settings`` (not by this struct)
    phases: dict[str, Any] | None = None
    finals: dict[str, Any] | None = None
    challenges: dict[str, Any] | None = None
    fair_tables: dict[str, Any] | None = None
    webhook: WebhookSection | None = None  # None: no webhook
    cluster: ClusterSection | None = None  # --cluster over TLS (referee.settings.cluster)


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
    admission: AdmissionSettings = dataclasses.field(default_factory=AdmissionSettings)
    clients: ClientLimits = dataclasses.field(default_factory=ClientLimits)
    public_deals: bool = False  # the cards follow from the seed (research), not a secret key
    retention: RetentionSettings = dataclasses.field(default_factory=RetentionSettings)
    pace: PaceSettings = dataclasses.field(default_factory=PaceSettings)
    # phases, finals, challenges, fair tables
    contest: ContestSettings = dataclasses.field(default_factory=ContestSettings)
    webhook: WebhookSection | None = None  # None: no webhook
    cluster: ClusterTLS | None = None  # [cluster]: the certificates of a TLS Dask cluster
    match_logs: LogForm = DEFAULT_LOG_FORM  # how each match's log is kept ([storage])

    @property
    def database(self) -> Path:
        return self.data / "competition.sqlite"

    @property
    def uploads_dir(self) -> Path:
        return self.data / "versions"

    @property
    def logs_dir(self) -> Path:
        return self.data / "logs"

    def operations_log(
        self, format: operations.Format = "human", stream: TextIO | None = sys.stderr
    ) -> operations.OperationsLog:
        """The competition's operations log (``DATA/operations.log``, rotated as
        ``[retention]`` says): the server's, and a management command's (``stream=None``)."""
        return operations.OperationsLog.for_data(
            self.data,
            format,
            stream=stream,
            max_mb=self.retention.operations_log_mb,
            old_files=self.retention.operations_log_files,
        )


def load_config(path: Path) -> CompetitionConfig:
    """Read and check ``path``; raises ``ConfigError`` with one line."""
    return _Reader(path).read(parse_toml(read_text(path), path))


class _Reader:
    """Reads a decoded competition file into a ``CompetitionConfig``, one line per mistake."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self, data: dict[str, object]) -> CompetitionConfig:
        if "competition" not in data:
            fail(self.path, "competition", "missing: the file needs [competition] with a name")
        remote = data.get("remote")
        if isinstance(remote, dict) and "tokens" in remote:
            fail(self.path, "remote.tokens", "a remote version's token is on its page, not a file")
        base = self.path.resolve().parent
        file = decode(data, CompetitionFile, self.path, dec_hook=paths_from(base))
        competition, server = file.competition, file.server
        _options, rules = rules_of(
            file.rules, file.tables.hand_limit, "tables.hand_limit", self.path
        )
        level, limits = sandbox_of(file.sandbox, self.path)
        return CompetitionConfig(
            path=self.path,
            name=self.name(competition),
            seed=competition.seed,
            data=(self.path.parent / (competition.data or f"{self.path.stem}-data")).resolve(),
            self_registration=competition.self_registration,
            runtimes=self.runtimes(competition, file.remote is not None),
            house_bots=self.house_bots(competition),
            host=server.host,
            port=server.port,
            jobs=server.jobs,
            secure_cookies=server.secure_cookies,
            registrations_per_hour=server.registrations_per_hour,
            players=file.tables.players,
            rules=rules,
            time_control=time_control_of(file.time_control, self.path),
            uploads=self.uploads(file.uploads),
            max_share=file.scheduler.max_share,
            sandbox_level=level,
            sandbox_limits=limits,
            compile_seconds=file.sandbox.compile_seconds,
            remote=file.remote,
            storage=self.storage(file.storage, file.uploads),
            admission=file.admission,
            retention=file.retention,
            pace=PaceSettings(
                file.scheduler.settled_per_minute,
                file.scheduler.max_per_minute,
                file.scheduler.settled_overlap,
            ),
            public_deals=competition.public_deals,
            webhook=self.webhook(file.webhook),
            cluster=tls_of(file.cluster, self.path),
            match_logs=cast(LogForm, file.storage.match_logs),
            clients=ClientLimits(
                **{name: getattr(server, name) for name in ClientLimits.__struct_fields__}
            ),
            contest=contest_settings(data, self.path),
        )

    def name(self, competition: CompetitionSection) -> str:
        if not competition.name.strip():
            fail(self.path, "competition.name", "must not be empty")
        return competition.name

    def runtimes(self, competition: CompetitionSection, remote: bool) -> tuple[str, ...]:
        """The runtimes a version may have: the file's, or every uploaded one (and remote)."""
        runtimes = competition.runtimes or ([*UPLOADED, REMOTE] if remote else list(UPLOADED))
        for runtime in runtimes:
            if runtime not in RUNTIMES:
                known = ", ".join(RUNTIMES)
                fail(
                    self.path,
                    "competition.runtimes",
                    f"unknown runtime {runtime!r} (known: {known})",
                )
        if REMOTE in runtimes and not remote:
            fail(self.path, "competition.runtimes", "'remote' needs a [remote] section (its port)")
        return tuple(runtimes)

    def house_bots(self, competition: CompetitionSection) -> tuple[str, ...]:
        try:
            import bots.registry as registry
        except ImportError:
            return tuple(competition.house_bots)
        for bot_name in competition.house_bots:
            if registry.resolve(bot_name) is None:
                fail(self.path, "competition.house_bots", f"{bot_name!r} is not a bundled bot")
        return tuple(competition.house_bots)

    def uploads(self, section: UploadsSection) -> UploadLimits:
        return UploadLimits(
            max_bytes=section.max_kb * KIB,
            max_files=section.max_files,
            max_unpacked_bytes=section.max_unpacked_kb * KIB,
            per_hour=section.per_hour,
        )

    def webhook(self, section: WebhookSection | None) -> WebhookSection | None:
        if section is not None and not section.url.startswith(("http://", "https://")):
            fail(self.path, "webhook.url", f"{section.url[:60]!r} is not an http(s):// address")
        return section

    def storage(self, section: StorageSection, uploads: UploadsSection) -> StorageLimits:
        storage = StorageLimits(
            min_free_bytes=section.min_free_mb * MIB,
            stderr_bytes=section.stderr_kb * KIB,
            participant_bytes=section.participant_mb * MIB,
        )
        if storage.participant_bytes < (uploads.max_kb + uploads.max_unpacked_kb) * KIB:
            fail(
                self.path,
                "storage.participant_mb",
                f"must hold at least one upload and its files ({uploads.max_kb} KiB "
                f"+ {uploads.max_unpacked_kb} KiB, [uploads])",
            )
        return storage
