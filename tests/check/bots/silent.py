"""Breaks SPEC.md 6.1: reads everything and never says ``ready`` (no handshake)."""

import sys

if __name__ == "__main__":
    for _line in sys.stdin:
        pass
