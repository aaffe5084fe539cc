"""How a bot finds the referee: standard streams, or TCP named by two environment variables.

The choice is made by the environment only (SPEC.md, "Transports"), never by
command-line flags, so the bot's own arguments stay the bot's and a bot that
knows nothing of TCP still works over stdio.  The parsing of the address is
here so the referee that writes it and the SDK that reads it cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

ENV_CONNECT: Final = "NEWMARKET_CONNECT"
"""``host:port`` to connect to (``[::1]:9000`` for IPv6); unset or empty means stdio."""

ENV_TOKEN: Final = "NEWMARKET_TOKEN"
"""The token to put in ``ready.token``; unset when the referee needs none."""


def parse_connect(value: str) -> tuple[str, int]:
    """``"host:port"`` or ``"[v6]:port"`` as ``(host, port)``; ValueError if it is neither."""
    host, sep, port_text = value.strip().rpartition(":")
    if not sep or not host or not port_text.isdigit():
        raise ValueError(f"{ENV_CONNECT}: expected host:port, got {value!r}")
    port = int(port_text)
    if not 0 < port < 65536:
        raise ValueError(f"{ENV_CONNECT}: port {port} is not 1..65535")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"{ENV_CONNECT}: write an IPv6 address in brackets, as [::1]:9000")
    return host, port


def connect_address(environ: Mapping[str, str]) -> tuple[str, int] | None:
    """The address to connect to, or None for stdio (the variable unset or empty)."""
    value = environ.get(ENV_CONNECT, "")
    return parse_connect(value) if value.strip() else None
