"""Playing a finals' or a challenge's duplicate groups on a table: its own cards, its own rows.

The ladder's groups are ``play.play_group``'s; these differ in three ways: the
cards come from the record's own fresh deal key (``referee.match.dealkey``),
the results go to ``contest_matches`` (``contest_db``), never to the ladder's
``matches``, and the match ids say whose they are (``f<finals>g<group>r<rotation>``,
``c<challenge>r<rotation>``).  Everything a group needs is in its record, so the
same record played again deals the same cards (the finals' re-run).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from referee.match.archive import stored_path
from referee.match.dealkey import DealKey
from referee.match.key import MatchKey, derive_seed, rotations
from referee.server.busy import written
from referee.server.competition import Competition
from referee.server.contest_db import record_contest_match
from referee.server.play import Table, specs


def group_keys(
    prefix: str, seed: int, key_text: str, index: int, table: Sequence[int], start_chips: int
) -> list[MatchKey]:
    """The matches of group ``index`` of a record: one per rotation of ``table``."""
    key = DealKey.from_text(key_text)
    identity = derive_seed(seed, prefix, index)
    keys = []
    for rotation, seating in enumerate(rotations(table)):
        keys.append(
            MatchKey(
                match_id=f"{prefix}{rotation}",
                ordinal=index * 8 + rotation,
                round=index,
                table=0,
                rotation=rotation,
                seed=identity,
                bots=seating,
                start_chips=(start_chips,) * len(seating),
                deal_seed=key.deal_seed(identity),
            )
        )
    return keys


async def play_keys(
    competition: Competition,
    table: Table,
    kind: str,
    owner: int,
    index: int,
    keys: Sequence[MatchKey],
    done: set[str],
) -> None:
    """Play ``keys`` not in ``done`` and store each result at once (a restart skips them)."""
    config = competition.config
    for key in keys:
        if key.match_id in done:
            continue
        result = await table.play(key, config.rules, specs(competition, key.bots), key.bots)
        # Where the table kept it, as a ladder match's: a compact record or JSON lines.
        log = stored_path(config.logs_dir, key.match_id, result)
        await written(
            f"recording match {key.match_id}",
            partial(
                record_contest_match,
                competition.store,
                key.match_id,
                kind,
                owner,
                index,
                key.rotation,
                key.seed,
                key.bots,
                result,
                str(log),
            ),
        )
        competition.notify()
