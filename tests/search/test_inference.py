"""What leads say about hands: the starter's rule, trust learned per seat, a chain of deals."""

from __future__ import annotations

import random

from bots.sdk import BotSession
from bots.search.bot import SearchBot
from bots.search.inference import DealChain, LeadModel
from bots.search.sampler import Dealer, DealProblem, fits
from bots.starters.boodle import BoodleBot
from engine import Match, preset
from engine.cards import Card
from tests.bots.driver import BotEndpoint, InProcessBot, Policy, Tally, handshake, play_match


def mask(*texts: str) -> int:
    out = 0
    for text in texts:
        out |= 1 << Card.parse(text)
    return out


def random_leads(match: Match) -> object:
    legal = match.legal_actions()
    return legal[(match.hand_number * 7 + len(match.played_cards())) % len(legal)]


def test_the_model_names_every_lead_the_boodle_starter_makes_and_learns_whom_to_trust() -> None:
    # Seat 0 searches (and so learns, from the hands shown at each hand's end);
    # seats 1 and 2 are the boodle starter, seat 3 leads by a fixed rule of its own.
    for rules in (preset("boodle"), preset("boodle").with_options({"rank_order": "aces_low"})):
        search = SearchBot(seed=1, max_samples=4, log=lambda _line: None)
        bots = [InProcessBot(BotSession(bot)) for bot in (search, BoodleBot(), BoodleBot())]
        for bot in bots:
            handshake(bot)
        seats: list[tuple[str, BotEndpoint] | Policy] = [
            ("search", bots[0]),
            ("boodle", bots[1]),
            ("boodle", bots[2]),
            random_leads,
        ]
        play_match(seats, rules.with_options({"hand_limit": 10}), 3, Tally())
        model = search.lead_model
        assert model is not None
        for seat in (1, 2):
            assert model.judged[seat] >= 5
            assert model.agreed[seat] == model.judged[seat]  # every lead, ties included
            assert model.epsilon(seat) < 0.2
        assert model.agreed[3] < model.judged[3]
        assert model.epsilon(3) > model.epsilon(1)


def test_a_deal_that_explains_the_lead_weighs_more_than_one_that_does_not() -> None:
    model = LeadModel(preset("boodle"), 4, prior_epsilon=0.3)
    # Seat 1 led 2H first (nothing gone, no stacks, 10 cards in the dead hand).
    leads = [(1, Card.parse("2H"), 0, (0, 0, 0, 0), 0, 10)]
    played = [(1, Card.parse("2H")), (2, Card.parse("3H"))]
    likelihood = model.likelihood(leads, played)
    explains = likelihood.factor(1, model.codes(mask("7S")))  # 2H, the lower of two singletons
    odd = likelihood.factor(1, model.codes(mask("9S", "TS", "JS", "QS")))  # it would lead 9S
    epsilon = model.epsilon(1)
    assert explains == 1 - epsilon + epsilon / 2
    assert odd == epsilon / 2 < explains
    assert likelihood.factor(2, model.codes(mask("9S"))) == 1.0  # seat 2 led nothing
    # Under the change-of-suit rules leads are not read.
    other = LeadModel(preset("newmarket"), 4).likelihood(leads, played)
    assert not other.informative(1)
    assert other.factor(1, model.codes(mask("9S", "TS", "JS", "QS"))) == 1.0


def test_the_chain_draws_consistent_deals_in_proportion_to_how_well_they_explain_the_leads() -> (
    None
):
    model = LeadModel(preset("boodle"), 3, prior_epsilon=0.2)
    # Seat 1 led 2H from a hand of two cards.  Any other single card ties with 2H
    # and loses on rank, except AS: the top card comes back for certain, so with
    # AS the starter would have led AS.  A deal giving seat 1 the AS is unlikely.
    leads = [(1, Card.parse("2H"), 0, (0, 0, 0, 0), 0, 2)]
    played = [(1, Card.parse("2H"))]
    likelihood = model.likelihood(leads, played)
    epsilon = model.epsilon(1)
    pool = tuple(Card.parse(text) for text in ("AS", "TS", "4D", "8C"))
    # Slots: seat 1 (one card left), seat 2 (two cards, never 8C), the dead hand (one).
    problem = DealProblem(pool, (1, 2, 1), (0, mask("8C"), 0))
    chain = DealChain(Dealer(problem), [1, 2, -1], likelihood, random.Random(5), steps=3)
    # Consistent deals: seat 1 holds 8C in three of them, each other card in one.
    prior = {"AS": 1, "TS": 1, "4D": 1, "8C": 3}
    weight = {
        text: n * (epsilon / 2 if text == "AS" else 1 - epsilon / 2) for text, n in prior.items()
    }
    expected = {text: w / sum(weight.values()) for text, w in weight.items()}
    held = dict.fromkeys(prior, 0)
    rng = random.Random(6)
    draws = 6000
    for _ in range(draws):
        dealt = chain.draw(rng)
        assert fits(problem, dealt)
        held[str(Card(dealt[0][0]))] += 1
    for text, share in expected.items():
        assert abs(held[text] / draws - share) < 0.04, (held, expected)
    assert expected["AS"] < 0.05 < 0.5 < expected["8C"]
