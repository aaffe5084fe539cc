"""Bots that each break one rule of SPEC.md, for ``newmarket check``'s tests."""
