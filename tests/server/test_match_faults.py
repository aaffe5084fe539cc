"""A match page names each fault in words with its evidence, in check's wording (no server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from referee.match.result import FaultRecord
from referee.server.app import build_app
from referee.text.faults import MEANINGS, fault_evidence, fault_line
from tests.server.inprocess import admitted_group, finished, open_competition

# Seat 0's part of a real log (``newmarket match`` with a bot that answers "not-a-card",
# then a line that is not JSON, then too late), as the referee wrote it.
REQUEST = '"decision":"lead","legal":["9D","7H","3S"],"default":"9D","time_left_ms":300'
RECORDS: list[dict[str, Any]] = [
    json.loads(line)
    for line in [
        '{"type":"sent","seat":0,"t":11.0,"lines":[{"type":"request","id":1}]}',
        '{"type":"request","seat":0,"hand":1,"id":1,' + REQUEST + "}",
        '{"type":"received","seat":0,"t":15.5,"line":"{\\"type\\": \\"reply\\", \\"id\\": 1, '
        '\\"choice\\": \\"not-a-card\\"}"}',
        '{"type":"reply","seat":0,"id":1,"choice":"not-a-card","latency_ms":4.546}',
        '{"type":"fault","seat":0,"hand":1,"kind":"malformed","detail":"a lead is a card such '
        'as \\"TH\\", got \\"not-a-card\\"","id":1,"applied":"9D","count":1,'
        '"disqualified":false}',
        '{"type":"sent","seat":0,"t":27.694,"lines":[{"type":"request","id":2}]}',
        '{"type":"request","seat":0,"hand":1,"id":2,' + REQUEST + "}",
        '{"type":"received","seat":0,"t":29.702,"line":"this is not json"}',
        '{"type":"fault","seat":0,"hand":1,"kind":"malformed","detail":"not JSON: invalid '
        'character (byte 4) (line: this is not json)","id":2,"applied":"9D","count":2,'
        '"disqualified":false}',
        '{"type":"sent","seat":0,"t":29.967,"lines":[{"type":"request","id":3}]}',
        '{"type":"request","seat":0,"hand":1,"id":3,' + REQUEST + "}",
        '{"type":"fault","seat":0,"hand":1,"kind":"timeout","detail":"no reply to request 3 '
        'within 400 ms (300 ms time left + 100 ms margin)","id":3,"applied":"9D","count":3,'
        '"disqualified":true}',
        '{"type":"sent","seat":0,"t":441.934,"lines":[{"type":"fault","id":3}]}',
        '{"type":"late","seat":0,"id":3,"choice":"9D"}',
    ]
]


def test_each_fault_has_its_request_what_came_back_and_the_time_used() -> None:
    found = fault_evidence(RECORDS)
    assert [(f.kind, f.came_back, f.time_used_ms) for f in found] == [
        ("malformed", '{"type": "reply", "id": 1, "choice": "not-a-card"}', 4.546),
        ("malformed", "this is not json", 2.008),
        ("timeout", "nothing in time; a late reply 9D came after, ignored", 411.967),
    ]
    first, _second, last = found
    assert (
        first.line == 'malformed fault: request 1: a lead is a card such as "TH", got "not-a-card"'
    )
    assert first.request == (
        "request 1: lead in hand 1; legal: 9D 7H 3S; default 9D; 300 ms to answer"
    )
    assert first.consequence == (
        "the referee played the default 9D for it; fault 1 of this seat in this match"
    )
    assert last.line.startswith("timeout fault: no reply to request 3 within 400 ms")
    assert "disqualified" in last.consequence
    assert last.meaning == MEANINGS["timeout"]


def test_check_and_the_page_say_a_fault_alike() -> None:
    # The check's transcript line (tools/check/evidence.py) is this function's.
    assert (
        fault_line("illegal", "7H is not in hand", 4)
        == "illegal fault: request 4: 7H is not in hand"
    )
    assert fault_line("crash", "exit 1") == "crash fault: exit 1"


async def test_the_match_page_and_api_show_the_evidence_once_the_group_is_over(
    tmp_path: Path,
) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    try:
        group = admitted_group(store)
        log = tmp_path / "g1r0.jsonl"
        log.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
        result = finished("g1r0", 5)
        result.seats[0].faults.append(FaultRecord(kind="timeout", hand=1, detail="no reply"))
        store.record(group, 0, group.versions, result, log, identity=5)
        transport = httpx.ASGITransport(app=build_app(competition))
        async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
            playing = await client.get("/matches/g1r0")
            assert "this is not json" not in playing.text  # its group still plays
            assert (await client.get("/api/matches/g1r0")).json()["fault_evidence"] is None
            for rotation in (1, 2):
                store.record(
                    group, rotation, group.versions, finished(f"g1r{rotation}", 5), None, identity=5
                )
            page = await client.get("/matches/g1r0")
            api = (await client.get("/api/matches/g1r0")).json()
        assert (
            "alice v1, hand 1: timeout: it did not reply within the time it had left" in page.text
        )
        assert "nothing in time; a late reply 9D came after, ignored" in page.text
        assert "411.967 ms" in page.text
        assert [f["kind"] for f in api["fault_evidence"]] == ["malformed", "malformed", "timeout"]
        assert api["fault_evidence"][1]["came_back"] == "this is not json"
    finally:
        store.close()
