"""A compact record gives back its match's full log byte for byte, and is checked as one.

Real matches are played once per session with ``newmarket match``: bundled bots over
stdio, bots that fault (an illegal lead, a second reply, a crash), one that times out
and then answers late, ones that write garbage, padding and the wrong shape, and bots
over TCP.  Each log is kept as a compact record; the record must rebuild every byte,
``newmarket replay``, ``view`` and ``report`` must read it as they read the log, and a
record changed by hand (a reply, a result, its bytes) must be refused in one line.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path

import msgspec
import pytest
import zstandard

from referee.match import compact
from referee.match.archive import full_log_lines, keep_log, stored_log
from referee.match.log import read_log
from referee.tools.replay import verify_log
from tests.clirun import newmarket
from tests.match_logs import only_log

REPO = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} -m tests.referee.bots."
MATCHES: dict[str, list[str]] = {
    "stdio": ["--bot", "random", "--bot", "tracker", "--bot", "lowest", "--bot", "longest"],
    "faults": [
        "--bot", f"{BOT}illegal", "--bot", f"{BOT}twice", "--bot", f"{BOT}crash 6 3",
        "--bot", "random",
    ],
    "timeout": [
        "--bot", f"{BOT}slow 2 1.5", "--bot", f"{BOT}late", "--bot", "random",
        "--bot", "lowest", "--move-time", "0.4", "--time-bank", "0.2",
    ],
    "garbage": [
        "--bot", f"{BOT}garbage", "--bot", f"{BOT}chatty 3", "--bot", f"{BOT}wrongshape",
        "--bot", f"{BOT}garbage ' padded   '",
    ],
    "tcp": [
        "--bot", "random", "--bot", "tracker", "--bot", "lowest", "--bot", "longest",
        "--transport", "tcp",
    ],
}  # fmt: skip
SETTINGS = ("--hands", "10", "--sandbox", "none")


@pytest.fixture(scope="session")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each kind of match's full log, played once (a few seconds in all)."""
    root = tmp_path_factory.mktemp("compact")
    played = {}
    for name, bots in MATCHES.items():
        # The console script's entry point in this process: the bots are real processes,
        # and no Python start-up of a second is paid for the referee each time.
        code, _out, err = newmarket("match", *bots, *SETTINGS, "--log-dir", str(root / name))
        assert code == 0, err
        played[name] = only_log(root / name)
    return played


def records(full: Path) -> Path:
    """``full``'s compact record, written beside it (the full log stays)."""
    target = full.with_suffix(".nmr")
    if not target.exists():
        target.write_bytes(compact.compact(full.read_bytes()))
    return target


@pytest.mark.parametrize("name", list(MATCHES))
def test_a_record_rebuilds_its_log_byte_for_byte_and_verifies(
    logs: dict[str, Path], name: str
) -> None:
    full = logs[name]
    record = records(full)
    assert b"".join(full_log_lines(record)) == full.read_bytes()
    assert b"".join(full_log_lines(full)) == full.read_bytes()  # a full log reads as it is
    replayed, original = verify_log(record), verify_log(full)
    assert replayed.to_json() | {"log": ""} == original.to_json() | {"log": ""}
    # Much smaller than the log: it keeps what the engine cannot make again.
    assert record.stat().st_size * 20 < full.stat().st_size


@pytest.mark.parametrize("name", ["stdio", "tcp"])
def test_a_four_seat_ten_hand_match_keeps_at_most_2_kb(logs: dict[str, Path], name: str) -> None:
    """Issue 28's goal, a match at a time (benchmarks/records.py measures 280: about 1 kB)."""
    _number, header = next(read_log(logs[name]))
    assert header["players"] == 4 and header["rules"]["hand_limit"] == 10
    assert records(logs[name]).stat().st_size <= 2048


def test_what_went_wrong_survives_in_the_record(logs: dict[str, Path]) -> None:
    """Faults, a timeout, a late reply, garbage lines and stderr, each as the full log has it."""

    def kinds(path: Path) -> list[tuple[str, str]]:
        return [(line["type"], line.get("kind", "")) for _number, line in read_log(path)]

    seen = set()
    for name in ("faults", "timeout", "garbage"):
        assert kinds(records(logs[name])) == kinds(logs[name])
        seen |= {kind for pair in kinds(logs[name]) for kind in pair}
    # (stderr too when a bot's reached the referee in time: the crash's, the chatty one's)
    assert {"fault", "late", "illegal", "protocol", "timeout", "malformed"} <= seen


def test_replay_and_view_read_a_record_as_they_read_the_log(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    record = records(logs["faults"])
    code, out, err = newmarket("replay", str(record), "--json")
    assert code == 0, err
    _, full_out, _ = newmarket("replay", str(logs["faults"]), "--json")
    assert json.loads(out) | {"log": ""} == json.loads(full_out) | {"log": ""}
    code, wire, _ = newmarket("replay", str(record), "--seat", "0", "--wire")
    assert (
        code == 0 and wire == newmarket("replay", str(logs["faults"]), "--seat", "0", "--wire")[1]
    )
    # --feed runs a bot on its seat's rebuilt transcript: lowest, seat 2 of the stdio
    # match, answers every request as it did.
    lowest = f"{sys.executable} -m bots.starters.lowest"
    stdio = str(records(logs["stdio"]))
    code, fed, err = newmarket("replay", stdio, "--seat", "2", "--feed", lowest)
    assert code == 0 and "answered all" in fed and "as the recorded bot did" in fed, fed + err
    code, _out, err = newmarket("view", str(record), "--out", str(tmp_path / "site"))
    assert code == 0, err
    page = (tmp_path / "site" / "index.html").read_text()
    assert '"steps":[{' in page.replace(" ", "") and "illegal" in page


def _repacked(record: Path, change: object) -> bytes:
    """``record`` with its decoded body changed by ``change``, packed again as a forger would."""
    data = record.read_bytes()
    dictionary = compact._dictionary()  # version 1's, which a forger can read here too
    body = zstandard.ZstdDecompressor(dict_data=dictionary).decompress(data[5:])
    codes, streams, literals, digest, size = msgspec.msgpack.decode(body)
    codes, streams, literals = bytearray(codes), [bytearray(s) for s in streams], list(literals)
    change(codes, streams, literals)  # type: ignore[operator]
    again = msgspec.msgpack.encode(
        [bytes(codes), [bytes(s) for s in streams], literals, digest, size]
    )
    return data[:5] + zstandard.ZstdCompressor(dict_data=dictionary).compress(again)


def _replay_error(tmp_path: Path, data: bytes) -> tuple[int, str]:
    forged = tmp_path / "forged.nmr"
    forged.write_bytes(data)
    code, out, err = newmarket("replay", str(forged))
    return code, (out + err).strip()


def test_a_changed_reply_is_refused_naming_what_disagrees(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    record = records(logs["stdio"])
    # The reply to change: the first that named its request's first legal choice when
    # there was a second.  (A request with one legal choice has its default as the "second"
    # a record can name, the same card: that change would still verify.)  The bundled
    # bots reply a legal choice every time, so the record keeps one choice for each
    # received reply, in the log's order.
    received = [r for _, r in read_log(logs["stdio"]) if r["type"] in ("request", "reply")]
    legal_of: dict[tuple[int, int], list[str]] = {}
    replies: list[tuple[int, bool]] = []  # (index named, whether the request had a second)
    for line in received:
        key = (line["seat"], line["id"])
        if line["type"] == "request":
            legal_of[key] = line["legal"]
        else:
            legal = legal_of[key]
            replies.append((legal.index(line["choice"]), len(legal) >= 2))
    target = next(k for k, (index, second) in enumerate(replies) if index == 0 and second)

    def other_choice(codes: bytearray, streams: list[bytearray], _literals: object) -> None:
        choices = streams[compact._CHOICE]
        assert len(choices) == len(replies)  # one a reply: single-byte zigzag indices
        assert choices[target] == 0  # zigzag 0: the first legal choice
        choices[target] = 2  # zigzag 1: the second

    code, said = _replay_error(tmp_path, _repacked(record, other_choice))
    # Another card was played: the engine parts from the record at the first line after it
    # that it cannot make (whose turn it is, the events, the result), named by number.
    assert code == 1 and len(said.splitlines()) == 1, said
    assert "forged.nmr: does not verify: line " in said, said


def test_a_changed_result_is_refused_naming_the_seat(logs: dict[str, Path], tmp_path: Path) -> None:
    record = records(logs["stdio"])

    def first_place_for_seat_0(codes: bytearray, streams: list[bytearray], _: object) -> None:
        measured = bytearray()
        values = list(compact._varints(bytes(streams[compact._MEASURED])))
        values[1] = 1 if values[1] != 1 else 4  # seat 0's place
        for value in values:
            compact._varint(measured, value)
        streams[compact._MEASURED] = measured

    code, said = _replay_error(tmp_path, _repacked(record, first_place_for_seat_0))
    assert code == 1, said
    assert "the result differs: seats[0].place" in said, said


def test_a_changed_time_fails_the_digest_in_one_line_naming_the_file_once(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    record = records(logs["stdio"])

    def one_sent_later(codes: bytearray, streams: list[bytearray], _: object) -> None:
        gaps = list(compact._varints(bytes(streams[compact._SENT_GAP])))
        gaps[3] += 1  # a microsecond: nothing but the digest checks a time
        streams[compact._SENT_GAP] = bytearray()
        for gap in gaps:
            compact._varint(streams[compact._SENT_GAP], gap)

    code, said = _replay_error(tmp_path, _repacked(record, one_sent_later))
    assert code == 1 and len(said.splitlines()) == 1, said
    assert "forged.nmr: does not verify: compact record: the rebuilt log (" in said, said
    assert said.endswith("its digest differs") and said.count("forged.nmr") == 1, said
    code, _out, err = newmarket("replay", str(tmp_path / "forged.nmr"), "--seat", "0", "--wire")
    assert code == 1 and err.count("forged.nmr") == 1 and "digest differs" in err, err

    def an_event_for_a_decision(codes: bytearray, _streams: object, _literals: object) -> None:
        codes[codes.index(compact.DECISION_BOT)] = compact.EVENT

    code, said = _replay_error(tmp_path, _repacked(record, an_event_for_a_decision))
    assert code == 1 and len(said.splitlines()) == 1, said
    assert re.search(
        r"/forged\.nmr: does not verify: line \d+: compact record: no event line can be made "
        r"from it \(the engine has no further event here: .*\)$",
        said,
    ), said


def test_a_damaged_or_foreign_record_is_not_a_match_log(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    data = records(logs["stdio"]).read_bytes()
    code, said = _replay_error(tmp_path, data[: len(data) // 2])
    assert code == 2 and "damaged compact record" in said and len(said.splitlines()) == 1, said
    code, said = _replay_error(tmp_path, b"NMRC\x07" + data[5:])
    assert code == 2 and "version" in said, said
    code, said = _replay_error(tmp_path, data[:-4] + bytes(4))
    assert code in (1, 2) and len(said.splitlines()) == 1, said
    # A few kB that would unpack into 65 MB is refused before anything is unpacked.
    bomb = b"NMRC\x01" + zstandard.ZstdCompressor().compress(bytes(65 << 20))
    code, said = _replay_error(tmp_path, bomb)
    assert code == 2 and "it claims 68157440 bytes" in said, said


def test_keeping_a_log_compacts_it_only_when_the_record_rebuilds_it(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    full = tmp_path / "m.jsonl"
    full.write_bytes(logs["garbage"].read_bytes())
    kept = keep_log(full, "compact")
    assert kept == tmp_path / "m.nmr" and not full.exists()
    assert stored_log(tmp_path, "m") == kept
    assert b"".join(full_log_lines(kept)) == logs["garbage"].read_bytes()
    plain = tmp_path / "p.jsonl"
    plain.write_bytes(logs["stdio"].read_bytes())
    assert keep_log(plain, "full") == plain and not plain.with_suffix(".nmr").exists()
    cut = tmp_path / "cut.jsonl"  # a referee killed mid-line: kept as it is, never lost
    cut.write_bytes(logs["stdio"].read_bytes()[:-30])
    assert keep_log(cut, "compact") == cut and cut.exists()
    assert not list(tmp_path.glob("*.part"))


def test_a_record_that_would_not_give_the_log_back_leaves_the_full_log(
    logs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table checks each record before it removes the log (``checked_compact``): a record
    whose numbers do not read back, or that does not rebuild the log, is never kept."""
    log = logs["faults"].read_bytes()
    real_varint = compact._varint

    def one_off(out: bytearray, value: int) -> None:  # a varint written wrong
        real_varint(out, value + 1 if value == 3 else value)

    full = tmp_path / "numbers.jsonl"
    full.write_bytes(log)
    with monkeypatch.context() as patched:
        patched.setattr(compact, "_varint", one_off)
        assert keep_log(full, "compact") == full
    assert full.read_bytes() == log and not list(tmp_path.glob("*.nmr"))

    # A line the model was asked to make and could not (a referee that spells a request
    # otherwise) is kept whole, and such a record is rebuilt whole before it is kept.
    lines = log.splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if line.startswith(b'{"type":"request"'))
    lines[at] = lines[at].replace(b'"seat":', b'"seat": ', 1)
    respelled = b"".join(lines)
    full = tmp_path / "respelled.jsonl"
    full.write_bytes(respelled)
    with monkeypatch.context() as patched:
        patched.setattr(compact, "rebuild", lambda record: iter([b"another log\n"]))
        assert keep_log(full, "compact") == full
    assert full.read_bytes() == respelled
    kept = keep_log(full, "compact")
    assert kept.suffix == ".nmr" and b"".join(full_log_lines(kept)) == respelled


LEAGUE = """
[league]
seed = 3
table_size = 3
hand_limit = 2
logs = "logs"
{setting}

[[bots]]
command = "random"

[[bots]]
command = "lowest"

[[bots]]
command = "longest"
"""


@pytest.mark.parametrize(("setting", "suffix"), [("", ".nmr"), ('match_logs = "full"', ".jsonl")])
def test_a_league_keeps_compact_records_unless_told_full(
    tmp_path: Path, setting: str, suffix: str
) -> None:
    config = tmp_path / "league.toml"
    config.write_text(LEAGUE.format(setting=setting))
    code, _out, err = newmarket("league", str(config), "--sandbox", "none", "--jobs", "1")
    assert code == 0, err
    kept = sorted(path.suffix for path in (tmp_path / "logs").iterdir() if path.is_file())
    assert kept and set(kept) == {suffix}  # one file a match, in the form asked, nothing else
    with sqlite3.connect(tmp_path / "league.db") as db:
        stored = [Path(path) for (path,) in db.execute("SELECT log_path FROM matches")]
    assert len(stored) == len(kept) and all(path.is_file() for path in stored)
    for path in stored:
        verify_log(path)


def test_a_league_file_with_another_form_of_log_is_refused_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "league.toml"
    config.write_text(LEAGUE.format(setting='match_logs = "gzip"'))
    code, _out, err = newmarket("league", str(config))
    assert code == 2
    assert err.strip().endswith("league.match_logs: 'gzip' is not one of 'compact', 'full'"), err


def test_a_competition_file_names_the_form_of_its_logs(tmp_path: Path) -> None:
    from referee.server.competition_file import load_config

    cup = tmp_path / "cup.toml"
    cup.write_text('[competition]\nname = "cup"\n')
    assert load_config(cup).match_logs == "compact"
    cup.write_text('[competition]\nname = "cup"\n\n[storage]\nmatch_logs = "full"\n')
    assert load_config(cup).match_logs == "full"
