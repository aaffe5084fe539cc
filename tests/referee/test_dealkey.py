"""The deal key: 256 bits from the OS, a 128-bit seed per identity, public mode as before."""

from __future__ import annotations

import pytest

from engine import Match, preset
from referee.dealkey import KEY_BYTES, SEED_BITS, DealKey, fresh_deal_seed
from referee.league.schedule import build_schedule


def test_a_generated_key_is_256_bits_and_never_the_same_twice() -> None:
    keys = {DealKey.generate().to_text() for _ in range(50)}
    assert len(keys) == 50
    assert all(len(bytes.fromhex(text)) == KEY_BYTES for text in keys)


def test_the_same_key_and_identity_give_the_same_seed_and_a_text_round_trip_keeps_it() -> None:
    key = DealKey.generate()
    again = DealKey.from_text(key.to_text())
    assert again == key
    assert [again.deal_seed(n) for n in range(20)] == [key.deal_seed(n) for n in range(20)]


def test_seeds_are_128_bits_and_independent_per_identity_and_per_key() -> None:
    key, other = DealKey.generate(), DealKey.generate()
    identities = range(2000)
    seeds = [key.deal_seed(n) for n in identities]
    assert len(set(seeds)) == len(seeds)  # no two identities share a deal
    assert all(0 <= seed < 1 << SEED_BITS for seed in seeds)
    # Big: the top 16 bits are not all zero across 2000 draws (a short seed would be).
    assert max(seeds) >= 1 << (SEED_BITS - 16)
    assert not set(seeds) & {other.deal_seed(n) for n in identities}
    # A seed is not its identity, nor near it: nothing of the public number shows.
    assert not any(abs(seed - n) < 1 << 64 for n, seed in zip(identities, seeds, strict=True))


def test_public_mode_deals_todays_seeds_exactly() -> None:
    public = DealKey.public()
    assert public.is_public and not DealKey.generate().is_public
    assert DealKey.from_text(public.to_text()) == public
    for match in build_schedule(5, 3, 23):
        assert public.deal_seed(match.seed) == match.seed
    # And so the same cards as the engine dealt from that seed before deal keys existed.
    seed = build_schedule(5, 3, 23)[0].seed
    rules = preset("boodle")
    assert Match(rules, 3, public.deal_seed(seed)).hand_of(0) == Match(rules, 3, seed).hand_of(0)


def test_a_secret_key_deals_other_cards_than_the_public_seed() -> None:
    rules = preset("boodle")
    seed = build_schedule(5, 3, 23)[0].seed
    secret = Match(rules, 3, DealKey.generate().deal_seed(seed))
    public = Match(rules, 3, seed)
    assert [secret.hand_of(s) for s in range(3)] != [public.hand_of(s) for s in range(3)]


def test_the_key_never_shows_in_its_repr_and_a_short_key_is_refused() -> None:
    key = DealKey.generate()
    assert key.to_text() not in repr(key) and repr(key) == "DealKey(<secret>)"
    assert repr(DealKey.public()) == "DealKey(public)"
    with pytest.raises(ValueError, match="at least 128 bits"):
        DealKey(b"short")
    with pytest.raises(ValueError):
        DealKey.from_text("not hex")


def test_fresh_seeds_for_one_match_differ_every_time() -> None:
    seeds = {fresh_deal_seed() for _ in range(100)}
    assert len(seeds) == 100 and max(seeds) >= 1 << (SEED_BITS - 16)
