"""``newmarket check``: one bot through scripted scenarios, judged by the real referee.

A conformance check is only worth trusting if it judges a bot exactly as a
league would, so this package adds no judge of its own.  Every scenario is a
real ``play_match`` on the bot's one session, with the referee's own fault
machinery (``malformed``, ``illegal``, ``timeout``, ``protocol``, ``crash``...)
deciding whether each reply is acceptable: a conformant bot is one that
collects zero faults.  What the check adds is only what a league does not
need:

* **Scripted tables.**  A scenario fixes the rules, the seat, the first
  dealer and (for the awkward cases) the deal itself (``play_match``'s
  ``dealer`` and ``deals``), so a single legal lead, a stop at once, going out
  on a lead, a passed lead, a blocked hand, an auction the bot must bid in
  and the rest happen whatever the bot chooses.  Each scenario says what it
  must have shown the bot (``Expect``); if a scenario ever fails to, that is
  a bug of the check, reported as such, never blamed on the bot.
* **Opponents in the process.**  The other seats are tiny scripted bots on
  in-memory streams (``open_stream_bot``): no process to start, nothing that
  can be slow, and policies a scenario needs (an auctioneer, a bot that hangs
  up so that the bot under test sees ``seat_disqualified``).
* **The lifecycle.**  All scenarios run on one process, in order, with a
  message of an unknown type between two matches (SPEC.md 2: it must be
  ignored); then ``shutdown``, after which the process must exit with status
  0; then a second process whose input simply ends, which must exit 0 too.
* **A transcript for people.**  On a failure the lines sent to the bot are
  taken from the connection (``Connection.on_send``) and interleaved with the
  match log's records for the bot's seat (its replies, the referee's
  verdicts, the defaults applied), so the reader sees the failing step in
  context, numbered, next to the bot's own stderr.

The check stops at the first failure: everything after it would be judged on
a bot already known to be wrong, and the first transcript is the useful one.

**Random matches** (``random_scenarios``, ``newmarket check --matches N``)
come after the scripted ones: the bot in each seat in turn, under the rules
the user chose, against in-process opponents that pick uniformly among the
legal choices, every deal and choice from one recorded seed.  They have no
``Expect``: they stress a bot where the scripts cannot reach (long matches,
eliminations, whatever the rules' options make happen), judged the same way.

The match logs go to a temporary directory that is always removed (the
report carries the transcript), unless the caller keeps them in a directory
of its own (``keep_logs``, ``--log-dir``).  A scripted table's log header names
the dealer and deals the script chose (``play_match`` writes them), so every kept
log replays and verifies with ``newmarket replay`` like a league's.

The modules, one concept each: ``opponents`` (the in-process seats),
``expectations`` (what a scenario promises), ``scenarios`` (the scripted,
random and secretly dealt tables), ``running`` (playing them on the bot),
``evidence`` (the transcript), ``verdict`` (stages, the failure, the report
as data) and ``rendering`` (the report as text).  This file is the public
surface: ``newmarket check`` and a competition's admission import from here.
"""

from referee.tools.check.evidence import CRASH_HINT, Line, WireTap, build_transcript, seen_of
from referee.tools.check.expectations import (
    Expect,
    Seen,
    asked,
    every_lead_single,
    never_asked,
    passed_lead_changes_suit,
    stopped_at_top_by_king,
    told,
)
from referee.tools.check.opponents import (
    HangUp,
    Message,
    Policy,
    auctioneer,
    by_default,
    hang_up,
    play_opponent,
    random_policy,
)
from referee.tools.check.rendering import (
    render_footer,
    render_header,
    render_report,
    render_stage,
    render_stderr,
    render_transcript,
)
from referee.tools.check.running import (
    SHUTDOWN_GRACE,
    UNKNOWN_MESSAGE,
    check_bot,
    check_end_of_input,
    check_scenarios,
    check_shutdown,
    run_check,
    scripted_table,
)
from referee.tools.check.scenarios import (
    SCENARIOS,
    Scenario,
    deal,
    random_scenarios,
    secret_scenarios,
)
from referee.tools.check.verdict import (
    KINDS,
    LIFECYCLE,
    CheckReport,
    Failure,
    Stage,
    judge,
    latency_summary,
)

__all__ = [
    "CRASH_HINT",
    "KINDS",
    "LIFECYCLE",
    "SCENARIOS",
    "SHUTDOWN_GRACE",
    "UNKNOWN_MESSAGE",
    "CheckReport",
    "Expect",
    "Failure",
    "HangUp",
    "Line",
    "Message",
    "Policy",
    "Scenario",
    "Seen",
    "Stage",
    "WireTap",
    "asked",
    "auctioneer",
    "build_transcript",
    "by_default",
    "check_bot",
    "check_end_of_input",
    "check_scenarios",
    "check_shutdown",
    "deal",
    "every_lead_single",
    "hang_up",
    "judge",
    "latency_summary",
    "never_asked",
    "passed_lead_changes_suit",
    "play_opponent",
    "random_policy",
    "random_scenarios",
    "render_footer",
    "render_header",
    "render_report",
    "render_stage",
    "render_stderr",
    "render_transcript",
    "run_check",
    "scripted_table",
    "secret_scenarios",
    "seen_of",
    "stopped_at_top_by_king",
    "told",
]
