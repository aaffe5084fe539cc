"""Starter bots on the SDK, each a short tutorial: run one with ``python -m bots.starters.NAME``.

* ``random``: a uniformly random legal choice for every decision.
* ``lowest``: leads its lowest card, to keep its high cards as stops.
* ``longest``: leads from its longest suit, to shed cards in long runs.
* ``boodle``: steers runs towards the boodle cards it holds.
* ``tracker``: tracks played and dead cards, and leads runs that come back to it.
"""
