"""In-process stand-ins for a contest's tests: a table that plays policies, admitted versions.

``PolicyTable`` plays each match with the engine and a policy per version
(``referee.scoring.policies``), its cards from the key's ``deal_seed`` as a
worker's would be: the same key gives the same match, card for card, so a
finals' re-run is tested without a process.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx
from starlette.types import ASGIApp

from engine.rules import Rules
from referee.bots import BotSpec
from referee.match.key import MatchKey
from referee.match.result import MatchResult, SeatResult
from referee.scoring.policies import Policy, play_match
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import load_config


class PolicyTable:
    """A ``play.Table`` that plays every version by its policy, in this process."""

    def __init__(self, policies: Mapping[int, Policy]) -> None:
        self.policies = policies
        self.played: list[str] = []

    async def play(
        self, key: MatchKey, rules: Rules, specs: Mapping[int, BotSpec], keep: Iterable[int]
    ) -> MatchResult:
        self.played.append(key.match_id)
        seats = [self.policies[version] for version in key.bots]
        rngs = [random.Random(f"{key.deal_seed}/{seat}") for seat in range(len(seats))]
        outcome = play_match(rules, key.deal_seed, seats, rngs).outcome()
        return MatchResult(
            match_id=key.match_id,
            seed=key.deal_seed,
            rules={},
            hands=outcome.hands_played,
            seats=[
                SeatResult(
                    seat=seat,
                    name=f"v{version}",
                    place=outcome.places[seat],
                    chips=outcome.chips[seat],
                    status="ok",
                    faults=[],
                    net_chips=outcome.net_chips[seat],
                    boodle_chips=0,
                    hands_won=0,
                )
                for seat, version in enumerate(key.bots)
            ],
            log_path=None,
            reason=outcome.reason,
        )

    async def aclose(self) -> None:
        pass


def admitted(store: CompetitionStore, name: str) -> tuple[int, int, str]:
    """A participant ``name`` with one admitted version: (participant, version, token)."""
    participant, token = store.add_participant(name)
    version = store.add_version(participant.id, "python3", "main.py", "", 1)
    store.decide(version.id, "admitted", "ok", "", BotSpec(name, ("x",)).to_json())
    return participant.id, version.id, token


People = dict[str, tuple[int, int, str]]  # name: (participant, version, token)


@contextmanager
def contest(
    tmp_path: Path, text: str, names: Iterable[str]
) -> Iterator[tuple[Competition, People]]:
    """A competition from the file ``text`` (written as ``tmp_path/cup.toml``) with an
    admitted version for each of ``names``; its store closed at the end."""
    path = tmp_path / "cup.toml"
    path.write_text(text)
    config = load_config(path)
    competition = Competition(config, CompetitionStore.open(config.database))
    try:
        yield competition, {name: admitted(competition.store, name) for name in names}
    finally:
        competition.store.close()


def asgi_client(app: ASGIApp, address: str = "203.0.113.7") -> httpx.AsyncClient:
    """An HTTP client of ``app`` in this process, as if from ``address``."""
    transport = httpx.ASGITransport(app=app, client=(address, 4321))
    return httpx.AsyncClient(transport=transport, base_url="http://cup")
