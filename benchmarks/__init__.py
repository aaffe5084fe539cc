"""Benchmarks, run as scripts (``python benchmarks/engine.py``); a package so that
``benchmarks/engine.py`` is ``benchmarks.engine`` to mypy and never shadows ``engine``."""
