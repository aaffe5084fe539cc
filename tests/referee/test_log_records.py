"""The match log's typed records: the committed schema, and logs and results of today's shape.

The fixtures below are lines and a stored result written by the referee
before its records were structs (a dict per record, ``to_json`` per result),
copied verbatim: every log and league database already on disk has these
shapes, so they must keep decoding, and a log's lines must keep their bytes.
"""

# ruff: noqa: E501 (the fixtures are lines of a real log, kept whole)

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from engine import preset
from referee.match import records
from referee.match.log import LogError, read_log, read_records
from referee.match.referee import play_match
from referee.match.result import decode_result, result_json
from referee.transport.timecontrol import TimeControl
from tests.referee.fakes import FakeWire, Message, fake_table, randomly

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "docs" / "match-log.schema.json"

# One line of each kind from `newmarket match --bot random --bot lowest --bot bad=...
# --seed 3 --hands 1`, where "bad" sent a non-UTF-8 line, a late reply and a reply to a
# request never sent, and wrote to its stderr.
OLD_LINES = [
    '{"type":"header","format":2,"referee":"newmarket 0.1.0","protocol":1,"python":"3.11.7","platform":"linux","started":"2026-11-28T11:17:53+00:00","match_id":"20261128-111752-3","seed":3,"players":3,"chips":[40,40,40],"first_dealer":1,"rules":{"rank_order":"aces_high","boodle_cards":["AS","KH","QC","JD"],"ante":"fixed","ante_per_card":1,"dealer_ante_per_card":2,"stake_total":6,"kitty_ante":0,"starting_chips":40,"dealing":"round_robin","dead_hand":true,"dead_hand_exchange":"off","purchase_fee":4,"lead_suit":"any","payment":"per_card","blocked_hand":"nobody_pays","end_players":2,"hand_limit":1},"time_control":{"move_time":0.2,"time_bank":0.0,"startup_time":10.0,"margin":0.1,"max_faults":10},"sandbox":{"level":"none","active":["process group"],"missing":[],"limits":{"cpu_seconds":3600,"open_files":256,"file_size_bytes":268435456,"processes":128,"memory_bytes":2147483648,"address_space_bytes":null,"scratch_bytes":67108864}},"bots":[{"seat":0,"name":"random","command":["/home/writer/newmarket/.venv/bin/python","-m","bots.starters.random"],"cwd":null,"transport":"stdio","reported_name":"random","reported_version":"1.0","alive":true,"lost":null},{"seat":1,"name":"lowest","command":["/home/writer/newmarket/.venv/bin/python","-m","bots.starters.lowest"],"cwd":null,"transport":"stdio","reported_name":"lowest","reported_version":"1.0","alive":true,"lost":null},{"seat":2,"name":"bad","command":["python3","/tmp/formats-badbot.py"],"cwd":null,"transport":"stdio","reported_name":"bad","reported_version":"","alive":true,"lost":null}]}',
    '{"type":"chance","hand":1,"hands":[["3C","5C","6C","5D","8D","QD","5H","8H","9H","JH","5S","JS","KS"],["JC","4D","7D","JD","2H","TH","QH","KH","AH","6S","7S","8S","QS"],["4C","9C","TC","AC","2D","KD","4H","6H","7H","3S","4S","9S","AS"]],"dead":["2C","7C","8C","QC","KC","3D","6D","9D","TD","AD","3H","2S","TS"]}',
    '{"type":"event","n":0,"event":{"type":"hand_started","hand":1,"dealer":1}}',
    '{"type":"sent","seat":0,"t":2.575,"lines":[{"type":"match_start","match_id":"20261128-111752-3","seat":0,"players":3,"names":["random","lowest","bad"],"rules":{"rank_order":"aces_high","boodle_cards":["AS","KH","QC","JD"],"ante":"fixed","ante_per_card":1,"dealer_ante_per_card":2,"stake_total":6,"kitty_ante":0,"starting_chips":40,"dealing":"round_robin","dead_hand":true,"dead_hand_exchange":"off","purchase_fee":4,"lead_suit":"any","payment":"per_card","blocked_hand":"nobody_pays","end_players":2,"hand_limit":1},"chips":[40,40,40],"move_time_ms":200,"time_bank_ms":0}]}',
    '{"type":"request","seat":2,"hand":1,"id":1,"decision":"lead","legal":["4C","2D","4H","3S"],"default":"4C","time_left_ms":200}',
    '{"type":"received","seat":0,"t":38.905,"line":"{\\"type\\":\\"reply\\",\\"id\\":1,\\"choice\\":\\"5H\\"}"}',
    '{"type":"received","seat":2,"t":32.136,"line_base64":"//4gbm90IHV0Zi04"}',
    '{"type":"reply","seat":0,"id":1,"choice":"5H","latency_ms":6.379}',
    '{"type":"decision","seat":0,"hand":1,"decision":"lead","choice":"5H","by":"bot"}',
    '{"type":"fault","seat":2,"hand":1,"kind":"malformed","detail":"not JSON: invalid character (byte 0) (line: \ufffd\ufffd not utf-8)","id":1,"applied":"4C","count":1,"disqualified":false}',
    '{"type":"decision","seat":2,"hand":1,"decision":"lead","choice":"4C","by":"default"}',
    '{"type":"late","seat":2,"id":2,"choice":"9C"}',
    '{"type":"stderr","seat":2,"text":"bad bot says hello on stderr\\n","bytes":29,"dropped":0}',
    '{"type":"result","match_id":"20261128-111752-3","seed":3,"rules":{"rank_order":"aces_high","boodle_cards":["AS","KH","QC","JD"],"ante":"fixed","ante_per_card":1,"dealer_ante_per_card":2,"stake_total":6,"kitty_ante":0,"starting_chips":40,"dealing":"round_robin","dead_hand":true,"dead_hand_exchange":"off","purchase_fee":4,"lead_suit":"any","payment":"per_card","blocked_hand":"nobody_pays","end_players":2,"hand_limit":1},"hands":1,"reason":"hand_limit","seats":[{"seat":0,"name":"random","place":3,"chips":34,"status":"ok","faults":[],"net_chips":-6,"boodle_chips":0,"hands_won":0,"decisions":4,"defaults":0,"think_ms":15,"cpu_ms":0},{"seat":1,"name":"lowest","place":2,"chips":39,"status":"ok","faults":[],"net_chips":-1,"boodle_chips":8,"hands_won":0,"decisions":4,"defaults":0,"think_ms":16,"cpu_ms":10},{"seat":2,"name":"bad","place":1,"chips":43,"status":"ok","faults":[{"kind":"malformed","hand":1,"detail":"not JSON: invalid character (byte 0) (line: \ufffd\ufffd not utf-8)"},{"kind":"timeout","hand":1,"detail":"no reply to request 2 within 300 ms (200 ms time left + 100 ms margin)"},{"kind":"protocol","hand":1,"detail":"a reply to request 1003, which was never sent (waiting for request 3)"}],"net_chips":3,"boodle_chips":4,"hands_won":1,"decisions":7,"defaults":2,"think_ms":318,"cpu_ms":0}],"log_path":"/tmp/formats-old.jsonl","wall_ms":662}',
]
# The same match's result as a league stored it (json.dumps(result.to_json(), sort_keys=True)).
OLD_STORED_RESULT = '{"hands": 1, "log_path": "/tmp/formats-old.jsonl", "match_id": "20261128-111752-3", "reason": "hand_limit", "rules": {"ante": "fixed", "ante_per_card": 1, "blocked_hand": "nobody_pays", "boodle_cards": ["AS", "KH", "QC", "JD"], "dead_hand": true, "dead_hand_exchange": "off", "dealer_ante_per_card": 2, "dealing": "round_robin", "end_players": 2, "hand_limit": 1, "kitty_ante": 0, "lead_suit": "any", "payment": "per_card", "purchase_fee": 4, "rank_order": "aces_high", "stake_total": 6, "starting_chips": 40}, "seats": [{"boodle_chips": 0, "chips": 34, "cpu_ms": 0, "decisions": 4, "defaults": 0, "faults": [], "hands_won": 0, "name": "random", "net_chips": -6, "place": 3, "seat": 0, "status": "ok", "think_ms": 15}, {"boodle_chips": 8, "chips": 39, "cpu_ms": 10, "decisions": 4, "defaults": 0, "faults": [], "hands_won": 0, "name": "lowest", "net_chips": -1, "place": 2, "seat": 1, "status": "ok", "think_ms": 16}, {"boodle_chips": 4, "chips": 43, "cpu_ms": 0, "decisions": 7, "defaults": 2, "faults": [{"detail": "not JSON: invalid character (byte 0) (line: \\ufffd\\ufffd not utf-8)", "hand": 1, "kind": "malformed"}, {"detail": "no reply to request 2 within 300 ms (200 ms time left + 100 ms margin)", "hand": 1, "kind": "timeout"}, {"detail": "a reply to request 1003, which was never sent (waiting for request 3)", "hand": 1, "kind": "protocol"}], "hands_won": 1, "name": "bad", "net_chips": 3, "place": 1, "seat": 2, "status": "ok", "think_ms": 318}], "seed": 3, "wall_ms": 662}'

KINDS = [json.loads(line)["type"] for line in OLD_LINES]


def test_the_committed_schema_is_the_generated_one() -> None:
    committed = SCHEMA.read_text(encoding="utf-8")
    assert committed == records.schema_text(), (
        "docs/match-log.schema.json is not the schema of referee/match/records.py; "
        "regenerate it: python -m referee.match.records docs/match-log.schema.json"
    )


def test_the_schema_names_every_record_kind() -> None:
    document = json.loads(SCHEMA.read_text(encoding="utf-8"))
    tags = {
        definition["properties"]["type"]["enum"][0]
        for definition in document["$defs"].values()
        if "type" in definition.get("properties", {})
    }
    assert tags == {
        "header", "chance", "event", "request", "reply", "late", "fault",
        "decision", "sent", "received", "lost", "stderr", "result",
    }  # fmt: skip


@pytest.mark.parametrize("line", OLD_LINES, ids=[f"{n}-{k}" for n, k in enumerate(KINDS)])
def test_a_line_of_todays_log_decodes_and_encodes_to_the_same_bytes(line: str) -> None:
    record = msgspec.json.decode(line, type=records.LogRecord)
    assert type(record).__struct_config__.tag == json.loads(line)["type"]
    assert msgspec.json.encode(record).decode() == line


def test_a_log_of_todays_shape_reads_as_records(tmp_path: Path) -> None:
    log = tmp_path / "old.jsonl"
    log.write_text("".join(line + "\n" for line in OLD_LINES), encoding="utf-8")
    read = [record for _, record in read_records(log)]
    header = read[0]
    assert isinstance(header, records.Header)
    assert (header.seed, header.players, header.first_dealer) == (3, 3, 1)
    assert [bot.name for bot in header.bots] == ["random", "lowest", "bad"]
    received = [r for r in read if isinstance(r, records.Received)]
    assert received[1].line is records.UNSET and received[1].line_base64 == "//4gbm90IHV0Zi04"
    end = read[-1]
    assert isinstance(end, records.ResultRecord)
    result = end.result()
    assert result.log_path == Path("/tmp/formats-old.jsonl")
    assert [f.kind for f in result.seats[2].faults] == ["malformed", "timeout", "protocol"]
    # The plain reader gives the same record as JSON values.
    assert [r["type"] for _, r in read_log(log)] == KINDS


def test_a_bad_line_is_named_with_its_file_and_number(tmp_path: Path) -> None:
    log = tmp_path / "bad.jsonl"
    wrong = OLD_LINES[1].replace('"hand":1', '"hand":"one"')
    log.write_text(f"{OLD_LINES[0]}\n{wrong}\nnot json\n", encoding="utf-8")
    with pytest.raises(LogError) as caught:
        list(read_records(log))
    message = str(caught.value)
    assert message.startswith(f"{log}: line 2: not a log record")
    assert "$.hand" in message and "\n" not in message
    log.write_text(f'{OLD_LINES[0]}\n{{"type":"gossip"}}\n', encoding="utf-8")
    with pytest.raises(LogError, match=r"line 2: not a log record: Invalid value 'gossip'"):
        list(read_records(log))


def test_a_result_stored_in_todays_shape_decodes() -> None:
    result = decode_result(OLD_STORED_RESULT)
    assert (result.match_id, result.seed, result.hands, result.reason) == (
        "20261128-111752-3", 3, 1, "hand_limit",
    )  # fmt: skip
    assert result.places == [3, 2, 1]
    assert result.seats[2].faults[1].kind == "timeout"
    assert result.log_path == Path("/tmp/formats-old.jsonl")
    # ... and is stored again as the same JSON values.
    assert result_json(result) == json.loads(OLD_STORED_RESULT)


def test_a_result_stored_before_the_later_fields_decodes_with_their_defaults() -> None:
    old = json.loads(OLD_STORED_RESULT)
    for key in ("reason", "wall_ms", "log_path"):
        del old[key]
    for seat in old["seats"]:
        for key in ("decisions", "defaults", "think_ms", "cpu_ms"):
            del seat[key]
    result = decode_result(json.dumps(old))
    assert (result.reason, result.wall_ms, result.log_path) == ("", 0, None)
    assert [(s.decisions, s.think_ms, s.cpu_ms) for s in result.seats] == [(0, 0, None)] * 3


def test_a_stored_result_with_a_wrong_field_is_refused_by_name() -> None:
    bad = OLD_STORED_RESULT.replace('"hands": 1', '"hands": "1"')
    with pytest.raises(msgspec.ValidationError, match=r"\$\.hands"):
        decode_result(bad)


async def test_every_line_the_referee_writes_is_a_record(
    autojump_clock: object, tmp_path: Path
) -> None:
    """A match with a fault, a disqualification and defaults: each line decodes, and the
    structs encode back to the line's very bytes."""

    async def cheat(wire: FakeWire, request: Message) -> None:
        await wire.reply(request, "XX" if wire.requests <= 3 else request["default"])

    log = tmp_path / "m.jsonl"
    control = TimeControl()
    policies = [randomly(1), randomly(2), cheat]
    async with fake_table(policies, control) as (sessions, _wires):
        result = await play_match(
            sessions, preset("boodle"), 11, time_control=control, match_id="t", log_path=log
        )
    lines = log.read_bytes().splitlines()
    read = [record for _, record in read_records(log)]
    assert len(read) == len(lines)
    kinds = {type(record) for record in read}
    assert {records.Header, records.FaultLine, records.Decision, records.ResultRecord} <= kinds
    for line, record in zip(lines, read, strict=True):
        assert msgspec.json.encode(record) == line
    end = read[-1]
    assert isinstance(end, records.ResultRecord)
    assert end.result() == result
