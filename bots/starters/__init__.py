"""Starter bots on the SDK, each a short tutorial: run one with ``python -m bots.starters.NAME``.

* ``random``: a uniformly random legal choice for every decision.
* ``lowest``: leads its lowest card, to keep its high cards as stops.
* ``longest``: leads from its longest suit, to shed cards in long runs.
* ``tracker``: tracks played and dead cards, and leads runs that come back to it.
* ``boodle``: tracker's runs, plus the boodle stacks they take, may reach or give away
  (the strongest starter).
"""
