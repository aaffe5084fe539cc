"""Scores and statistics of results: duplicate chips scores, luck, intervals, ratings.

Pure functions of match results (and, for the luck, of the rules and the seed),
used by ``newmarket sprt``, the league standings and the report.  See
docs/fidelity.md for the definitions and the measurements behind the defaults.
"""
