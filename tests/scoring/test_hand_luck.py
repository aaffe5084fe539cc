"""The per-hand chance correction (held_boodle_luck): mean 0 over deals, and where it is taken."""

from __future__ import annotations

import random

import pytest

from engine import CARDS, Match, preset
from referee.scoring.luck import held_boodle_luck
from referee.scoring.policies import POLICIES, play_match
from referee.scoring.simulate import formats, group_score

BOODLE = preset("boodle").boodle_cards  # A K Q J of hearts


def test_a_seat_dealt_a_stacked_card_is_credited_its_chips_above_its_share() -> None:
    ace = BOODLE[0]
    others = [c for c in CARDS if c != ace]
    hands = [(ace, *others[:12]), tuple(others[12:25]), tuple(others[25:38]), tuple(others[38:])]
    # 8 chips on the ace: its holder holds 8 where a 13-card hand holds 2 on average
    assert held_boodle_luck(BOODLE, [8, 0, 0, 0], hands) == [6.0, -2.0, -2.0, -2.0]


@pytest.mark.parametrize(
    ("sizes", "seats"),
    [([13, 13, 13, 13], 4), ([13, 13, 13, 13], 3), ([11, 11, 10, 10, 10], 5)],
    ids=["four hands", "three hands and a dead hand", "uneven hands"],
)
def test_the_correction_averages_to_exactly_zero_over_the_deals(
    sizes: list[int], seats: int
) -> None:
    # Deal a shuffled pack by position, then turn the pack 52 times: every card passes
    # through every position once, as often as a uniform deal puts it there.  Over those
    # deals each seat's correction must average to 0 exactly, whatever the stacks: that is
    # what makes it unbiased (the holders after the seats hold the dead hand).
    stacks = [7, 0, 12, 5]
    pack = list(CARDS)
    random.Random(3).shuffle(pack)
    totals = [0.0] * seats
    for turn in range(52):
        turned = pack[turn:] + pack[:turn]
        hands, at = [], 0
        for size in sizes[:seats]:
            hands.append(tuple(turned[at : at + size]))
            at += size
        for seat, value in enumerate(held_boodle_luck(BOODLE, stacks, hands)):
            totals[seat] += value
    assert totals == pytest.approx([0.0] * seats, abs=1e-9)
    # ... while a single deal is not 0: there is something to correct
    assert any(abs(v) > 1 for v in held_boodle_luck(BOODLE, stacks, hands))


def test_stacks_and_boodle_cards_must_match() -> None:
    with pytest.raises(ValueError, match="3 stacks for 4 boodle cards"):
        held_boodle_luck(BOODLE, [1, 2, 3], [()])


@pytest.mark.parametrize("rules_name", ["boodle", "newmarket"])
def test_on_deal_sees_every_hand_once_just_after_its_deal(rules_name: str) -> None:
    # On the newmarket preset the stakes are the players' decisions before the deal:
    # on_deal must see them placed, and the cards as dealt.
    rules = formats(preset(rules_name), 4)["new"].rules
    seen: list[tuple[int, int, tuple[int, ...]]] = []

    def record(match: Match) -> None:
        held = [len(match.hand_of(s)) for s in range(match.players)]
        seen.append((match.hand_number, sum(match.boodle_stacks), (*held, len(match.dead_hand()))))

    match = play_match(rules, 11, [POLICIES["tracker"]] * 4, on_deal=record)
    assert [hand for hand, _, _ in seen] == list(range(1, match.hands_played + 1))
    assert match.hands_played == 4
    first_stacks = seen[0][1]
    stake = rules.stake_total if rules_name == "newmarket" else 3 * 1 + 2  # antes 1, dealer 2
    assert first_stacks == (4 * stake if rules_name == "newmarket" else stake * len(BOODLE))
    assert all(sum(sizes) == 52 for _, _, sizes in seen)  # every card dealt, none played yet
    assert all((sizes[-1] > 0) == rules.dead_hand for _, _, sizes in seen)


def test_hand_luck_leaves_identical_bots_at_exactly_zero() -> None:
    # Identical deterministic bots play both rotations alike: same states, same corrections.
    fmt = formats(preset("boodle"), 4)["hand-luck"]
    tracker = POLICIES["tracker"]
    assert [group_score(fmt, tracker, tracker, 4, 5, g)[0] for g in range(3)] == [0.0] * 3
