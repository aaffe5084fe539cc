"""Which of a table worker's bot processes plays a seat, and which idle ones end: the rule alone.

Fairness asks one thing of reusing a bot process: it never plays two matches
dealt from the same cards (a duplicate table's seat rotations share a deal,
and a process that played one has seen every hand at its ``hand_ended``).
The rest is cost: a process started costs its bot's start-up (about 75 ms
of CPU with its end for a sandboxed Python bot, docs/speed.md), a process
kept costs its bot's memory.  The choice lives here, without processes or
trio, so that a test can drive it through a whole 64-bot league in
milliseconds (``tests/pools/test_bot_processes.py``) and the table worker
(``referee.tables.worker.TableSessions``) applies it to real sessions.

The rule:

* a seat takes a live process of its bot that has not played the deal, the
  most recently used first; else a process is started;
* a bot holds at most ``per_bot`` processes (when set): before one of its
  processes starts, its least recently used idle ones beyond that end.  A
  league's table worker plays one seat rotation of every table before the next
  (``referee.tables.local_pool``), so one process per bot is all it can use:
  the process that played rotation 0 of a bot's tables has seen every deal the
  bot meets in that cycle's rotation 1, and only a later cycle could use it;
* at most ``limit`` processes run at once (a table needs its seats whatever
  the limit): before one starts, idle ones end, the one that played last
  first.  Not the least recently used: in a pass over every table each bot
  comes back about once, so the one that played last is needed last, and
  ending the oldest would end each process just before its bot's turn
  (64 bots with 32 per table: 3.3 start-ups per match that way, 2.2 this
  way, 0.17 with 64 per table; ``tests/pools/test_bot_processes.py``'s
  league).  This is the setting that bounds a league's memory (``newmarket
  league --bot-processes``, docs/leagues.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Generic, TypeVar

H = TypeVar("H")


@dataclasses.dataclass(eq=False)
class Held(Generic[H]):
    """One running bot process: whose it is, the deals it has played, and when it last played."""

    bot: int
    handle: H
    dealt: set[int] = dataclasses.field(default_factory=set)  # deal seeds it has played
    used: int = 0  # the match number when it last played (which one ends first)


class ProcessPlan(Generic[H]):
    """The bot processes of one table worker, and the rule that picks, keeps and ends them."""

    def __init__(self, limit: int | None = None, per_bot: int | None = None) -> None:
        self.limit = limit  # processes running at once; None: no bound
        self.per_bot = per_bot  # processes of one bot at once; None: no bound
        self.held: dict[int, list[Held[H]]] = {}
        self.matches = 0

    def __len__(self) -> int:
        return sum(len(pool) for pool in self.held.values())

    def every(self) -> list[Held[H]]:
        return [process for pool in self.held.values() for process in pool]

    def reusable(self, bot: int, seed: int | None, taken: Iterable[Held[H]] = ()) -> Held[H] | None:
        """A process of ``bot`` that has not played deal ``seed`` (None: any), most recent first."""
        busy = set(map(id, taken))
        fits = [
            process
            for process in self.held.get(bot, [])
            if id(process) not in busy and (seed is None or seed not in process.dealt)
        ]
        return max(fits, key=lambda process: process.used, default=None)

    def seat(
        self, bots: Sequence[int], seed: int, given: Mapping[int, Held[H]] | None = None
    ) -> tuple[list[Held[H] | None], list[Held[H]]]:
        """A match of ``bots`` (by seat) dealt ``seed``: each seat's process, and what ends first.

        A seat's process is None where one must start; the second list is the idle
        processes to end before they start (forgotten here).  ``given`` fixes some
        seats' processes (a bot that cannot start keeps its dead one).
        """
        chosen: list[Held[H] | None] = []
        for seat, bot in enumerate(bots):
            fixed = (given or {}).get(seat)
            taken = [process for process in chosen if process is not None]
            chosen.append(fixed if fixed is not None else self.reusable(bot, seed, taken))
        starting = [bot for bot, process in zip(bots, chosen, strict=True) if process is None]
        playing = [process for process in chosen if process is not None]
        return chosen, self.to_end(starting, playing)

    def to_end(self, starting: Sequence[int], playing: Iterable[Held[H]]) -> list[Held[H]]:
        """The idle processes to end before processes of ``starting`` (bots) start; forgotten here.

        ``playing`` are the processes already chosen for the match, never ended.
        """
        busy = set(map(id, playing))
        ending: list[Held[H]] = []

        def idle(pool: Iterable[Held[H]]) -> list[Held[H]]:
            # least recently used first; ties by age (the first started first)
            return sorted((p for p in pool if id(p) not in busy), key=lambda p: p.used)

        if self.per_bot is not None:
            for bot in sorted(set(starting)):
                pool = self.held.get(bot, [])
                over = len(pool) + starting.count(bot) - max(self.per_bot, starting.count(bot))
                ending += idle(pool)[: max(0, over)]
        if self.limit is not None:
            ended = set(map(id, ending))
            over = len(self) - len(ending) + len(starting) - self.limit
            if over > 0:
                rest = idle(p for p in self.every() if id(p) not in ended)
                ending += rest[::-1][:over]  # the one that played last first
        for process in ending:
            self.forget(process)
        return ending

    def add(self, bot: int, handle: H) -> Held[H]:
        process = Held(bot, handle)
        self.held.setdefault(bot, []).append(process)
        return process

    def forget(self, process: Held[H]) -> None:
        """No longer hold ``process`` (it ended, or is ending)."""
        pool = self.held.get(process.bot, [])
        if process in pool:
            pool.remove(process)
        if not pool:
            self.held.pop(process.bot, None)

    def played(self, playing: Iterable[Held[H]], seed: int) -> None:
        """``playing`` are about to play the deal ``seed``: none of them may play it again."""
        self.matches += 1
        for process in playing:
            process.dealt.add(seed)
            process.used = self.matches
