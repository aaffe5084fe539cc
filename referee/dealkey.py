"""Where a match's cards come from: a secret key, and the match's public identity.

The engine deals a match from its seed alone (``engine.deal``) and is open
source, so whoever knows a match's seed knows every card of it, the dead hand
included; and a seed drawn from a small or published space (a league file's
``seed = 5``, the schedule's 48-bit seeds) is found from a bot's own first hand
in well under a second.  So the seed the engine deals from is never a number a
participant can know or search: it is ``HMAC-SHA256(key, identity)``, 128 bits,
where ``identity`` is the match's public place (the schedule's 48-bit seed,
which stays in the schedule, the database and the pages) and ``key`` is a
secret of 256 bits drawn from the operating system when a league or a
competition first starts and kept only in its database.

Only the process that owns the database holds the key (the league process,
the server); what it sends to a table worker or a Dask worker is the derived
seed of one match, never the key.  ``DealKey.public()`` is the opt-in for
research (``public_deals = true``): the identity is the seed, as before, and
anyone who knows the league's seed knows every card.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

KEY_BYTES = 32  # 256 bits from the OS: far past any search
SEED_BITS = 128  # the engine's seed: any int; 128 bits cannot be enumerated
PUBLIC = "public"  # how a database records that its league opted in to public deals


class DealKey:
    """The secret behind a league's or a competition's deals (or none: ``public()``).

    Its ``repr`` never shows the key, so a traceback or a debug print cannot leak it.
    """

    __slots__ = ("_key",)

    def __init__(self, key: bytes | None) -> None:
        if key is not None and len(key) < 16:
            raise ValueError(f"a deal key needs at least 128 bits, got {len(key) * 8}")
        self._key = key

    @classmethod
    def generate(cls) -> DealKey:
        """A fresh key from the operating system's random source."""
        return cls(secrets.token_bytes(KEY_BYTES))

    @classmethod
    def public(cls) -> DealKey:
        """No key: every deal seed is its public identity (reproducible, and known to all)."""
        return cls(None)

    @classmethod
    def from_text(cls, text: str) -> DealKey:
        """The key as ``to_text`` wrote it (hex, or ``public``); ``ValueError`` if damaged."""
        if text == PUBLIC:
            return cls.public()
        return cls(bytes.fromhex(text))

    def to_text(self) -> str:
        """How a database keeps it: hex, or ``public``.  Only for the operator's database."""
        return PUBLIC if self._key is None else self._key.hex()

    @property
    def is_public(self) -> bool:
        return self._key is None

    def deal_seed(self, identity: int) -> int:
        """The engine's seed for the match whose public identity is ``identity``.

        The same key and identity give the same seed (a resumed league deals the
        same cards; the rotations of a duplicate group share theirs); without the
        key, one identity's seed says nothing of another's.
        """
        if self._key is None:
            return identity
        message = f"newmarket/deal-seed/{identity}".encode()
        digest = hmac.new(self._key, message, hashlib.sha256).digest()
        return int.from_bytes(digest[: SEED_BITS // 8], "big")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DealKey):
            return NotImplemented
        return self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return "DealKey(public)" if self._key is None else "DealKey(<secret>)"


def fresh_deal_seed() -> int:
    """A deal seed for one match nobody can know: ``newmarket match`` without ``--seed``."""
    return secrets.randbits(SEED_BITS)
