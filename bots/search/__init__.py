"""A search bot: determinized Monte Carlo over the rules engine.

Run it with ``python -m bots.search`` (``--help`` for its options).  The
pieces, each in its own module so each can be tested alone:

* ``knowledge``: what the seat's events prove about where the unseen cards are;
* ``sampler``: dealing the unseen cards again, consistently with that;
* ``montecarlo``: scoring candidate choices by playing sampled worlds out on
  the engine (``engine.position`` builds each world as an engine ``Match``);
* ``bot``: the SDK bot, its candidates per decision kind and its time control.
"""
