"""Every bundled bot, in every preset, over stdio and over TCP: matches end and logs replay.

One bot process per bundled bot plays every match of a transport in turn, as
in a league: start-up is paid once, and a bot that mishandled the end of one
match would fault in the next.  Two extra rule sets bring in the decisions no
preset asks for (the dead hand's exchange, auction and purchase).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bots.registry import BUNDLED
from engine import PRESETS, Rules, preset
from referee.bots import Transport, resolve_bot
from referee.match.referee import play_match
from referee.tools.replay import verify_log
from referee.transport.session import open_bots
from referee.transport.timecontrol import TimeControl

AVAILABLE = [name for name, bundled in BUNDLED.items() if bundled.available()[0]]
MISSING = sorted(set(BUNDLED) - set(AVAILABLE))


def rule_sets() -> dict[str, Rules]:
    sets = {name: preset(name).with_options({"hand_limit": 4}) for name in PRESETS}
    sets["boodle+auction"] = preset("boodle").with_options(
        {"hand_limit": 4, "dead_hand_exchange": "exchange_or_auction"}
    )
    sets["stops+purchase"] = preset("stops").with_options(
        {"hand_limit": 4, "dead_hand_exchange": "purchase"}
    )
    return sets


@pytest.mark.parametrize("transport", ["stdio", "tcp"])
async def test_every_bundled_bot_plays_every_preset_to_the_end(
    tmp_path: Path, transport: Transport
) -> None:
    if MISSING:
        print(f"bundled bots that cannot run here, left out: {', '.join(MISSING)}")
    names = AVAILABLE[:8]  # a table seats at most 8
    assert len(names) >= 3
    control = TimeControl(move_time=5.0, startup_time=30.0)
    specs = [resolve_bot(name, transport=transport) for name in names]
    async with open_bots(specs, control) as sessions:
        assert [s.death for s in sessions] == [None] * len(sessions)
        for number, (label, rules) in enumerate(rule_sets().items()):
            log = tmp_path / f"{label}.jsonl"
            result = await play_match(
                sessions, rules, 100 + number, time_control=control, match_id=label, log_path=log
            )
            troubles = [(s.name, s.faults) for s in result.seats if s.faults]
            assert troubles == [], f"{label} over {transport}: {troubles}"
            assert result.hands >= 1
            replay = verify_log(log)
            assert replay.result.places == result.places
