"""The organiser in control, in process: the API, the page's forms, the shell's words, attacks.

Each action is done through the API (as the organiser's script would), the
shell (``newmarket serve WORD``) and, for the CSRF and the refusals, the
page's forms; tests/server/test_organiser_browser.py does them in Chromium.
What each must change is read back where a participant would notice it: a
token that signs in or not, an upload taken or refused, the tables' seats,
the leaderboard's fit, the audit log.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import trio
import trio.testing

from referee.bots import BotSpec
from referee.match.result import FaultRecord
from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore, Group
from referee.server.competition_file import load_config
from referee.server.organiser import SHELL, audit_log, ban, enable, rerun, withdraw
from referee.server.organiser_auth import new_organiser_token
from referee.server.play import GroupQueue
from tests.clirun import newmarket
from tests.server.inprocess import PLAIN_BOT, finished

NAMES = ("alice", "bob", "carol")


def csrf(page: httpx.Response) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None
    return found.group(1)


class Cup:
    """A competition of three participants, two finished groups (the first with a fault)."""

    def __init__(self, tmp_path: Path) -> None:
        self.file = tmp_path / "cup.toml"
        self.file.write_text(
            '[competition]\nname = "Cup"\nhouse_bots = []\nself_registration = true\n'
            "[server]\nsecure_cookies = false\n"
        )
        config = load_config(self.file)
        self.store = CompetitionStore.open(config.database)
        self.competition = Competition(config, self.store)
        self.tokens: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        for name in NAMES:
            participant, self.tokens[name] = self.store.add_participant(name)
            version = self.store.add_version(participant.id, "python3", "main.py", "", 1)
            spec = BotSpec(name, ("x",)).to_json()
            self.store.decide(version.id, "admitted", "ok", "", spec)
            self.versions[name] = version.id
        table = tuple(self.versions[name] for name in NAMES)
        self.faulty = self.play(table, fault=True)
        self.clean = self.play(table, fault=False)
        self.organiser = new_organiser_token(self.store)
        self.transport = httpx.ASGITransport(app=build_app(self.competition))

    def play(self, table: tuple[int, ...], fault: bool) -> Group:
        group = self.store.plan_group(7, table, "test")
        for rotation in range(len(table)):
            result = finished(f"g{group.id}r{rotation}", 7)
            result.seats[0].net_chips, result.seats[1].net_chips = 4, -4
            if fault and rotation == 1:
                result.seats[2].faults.append(FaultRecord("timeout", 1, "no reply in 10 s"))
            self.store.record(group, rotation, table, result, None, identity=7)
        return group

    def client(self, token: str | None = None) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.AsyncClient(transport=self.transport, base_url="http://cup", headers=headers)

    async def signed_in(self, token: str) -> httpx.AsyncClient:
        """A browser signed in with ``token`` (a participant's or the organiser's)."""
        browser = self.client()
        form = await browser.get("/signin")
        signed = await browser.post("/signin", data={"token": token, "csrf": csrf(form)})
        assert signed.status_code == 303, signed.text
        return browser

    async def act(self, action: str, **fields: str) -> httpx.Response:
        async with self.client(self.organiser) as api:
            return await api.post(f"/api/organiser/{action}", json=fields)


@pytest.fixture
async def cup(tmp_path: Path) -> AsyncIterator[Cup]:
    made = Cup(tmp_path)
    yield made
    made.competition.close()
    made.store.close()


async def test_only_the_organiser_finds_the_page_and_the_api(cup: Cup) -> None:
    alice_browser = await cup.signed_in(cup.tokens["alice"])
    async with cup.client() as stranger, cup.client(cup.tokens["alice"]) as alice_api:
        unknown = await stranger.get("/no-such-page")
        assert unknown.status_code == 404
        for client in (stranger, alice_api, alice_browser):
            for method, path in [
                ("GET", "/organiser"),
                ("GET", "/organiser/disable"),
                ("POST", "/organiser/disable"),
                ("GET", "/api/organiser/audit"),
                ("GET", "/api/organiser/participants"),
                ("POST", "/api/organiser/disable"),
            ]:
                answer = await client.request(method, path, data={"name": "bob"})
                # The answer of an unknown address: nothing says the page exists.
                assert (answer.status_code, answer.text) == (404, unknown.text), (method, path)
    await alice_browser.aclose()
    assert cup.store.playing_versions()  # nothing was disabled
    assert audit_log(cup.store) == []

    organiser = await cup.signed_in(cup.organiser)
    page = await organiser.get("/organiser")
    assert page.status_code == 200
    for section in ("organiser-participants", "organiser-reruns", "organiser-audit"):
        assert f'id="{section}"' in page.text
    # A new organiser token ends every organiser session: the copied cookie is dead.
    new_organiser_token(cup.store)
    assert (await organiser.get("/organiser")).status_code == 404
    await organiser.aclose()
    async with cup.client(cup.organiser) as old_token:
        assert (await old_token.get("/api/organiser/audit")).status_code == 404


async def test_the_page_forms_need_their_csrf_token(cup: Cup) -> None:
    organiser = await cup.signed_in(cup.organiser)
    page = await organiser.get("/organiser")
    forged = [{"name": "bob"}, {"name": "bob", "csrf": "0" * 40}]
    async with cup.client() as other_browser:  # another browser's token is not this one's
        forged.append({"name": "bob", "csrf": csrf(await other_browser.get("/signin"))})
    for fields in forged:
        refused = await organiser.post("/organiser/disable", data=fields)
        assert refused.status_code == 403 and "CSRF" in refused.text
    assert len(cup.store.playing_versions()) == 3 and audit_log(cup.store) == []
    done = await organiser.post("/organiser/disable", data={"name": "bob", "csrf": csrf(page)})
    assert done.status_code == 200 and "disabled: its versions leave the tables" in done.text
    assert [row["action"] for row in audit_log(cup.store)] == ["disable"]
    refused = await organiser.post("/organiser/disable", data={"name": "bob", "csrf": csrf(page)})
    assert refused.status_code == 400 and "already disabled" in refused.text
    # Signing out ends the session: the cookie, copied before, opens nothing.
    copied = organiser.cookies.get("nm_organiser")
    out = await organiser.post("/organiser/signout", data={"csrf": csrf(page)})
    assert out.status_code == 303 and (await organiser.get("/organiser")).status_code == 404
    await organiser.aclose()
    async with cup.client() as thief:
        thief.cookies.set("nm_organiser", str(copied))
        assert (await thief.get("/organiser")).status_code == 404


async def test_rotate_and_revoke_end_sessions_and_old_tokens(cup: Cup) -> None:
    alice = await cup.signed_in(cup.tokens["alice"])
    assert "sign out" in (await alice.get("/p/alice")).text
    rotated = await cup.act("rotate-token", name="alice")
    assert rotated.status_code == 200, rotated.text
    new = rotated.json()["token"]
    assert "1 session(s) ended" in rotated.json()["done"]
    assert "sign out" not in (await alice.get("/p/alice")).text  # the session ended
    async with cup.client(cup.tokens["alice"]) as old, cup.client(new) as fresh:
        assert (await old.get("/api/me")).status_code == 401  # the rotated token is refused
        assert (await fresh.get("/api/me")).json()["name"] == "alice"
    form = await alice.get("/signin")
    stale = {"token": cup.tokens["alice"], "csrf": csrf(form)}
    assert (await alice.post("/signin", data=stale)).status_code == 403
    await alice.aclose()

    revoked = await cup.act("revoke-token", name="alice")
    assert revoked.status_code == 200 and "token revoked" in revoked.json()["done"]
    async with cup.client(new) as fresh:
        assert (await fresh.get("/api/me")).status_code == 401
    assert (await cup.act("rotate-token", name="nobody")).json() == {
        "error": "no participant named 'nobody'"
    }
    whos = {(row["who"], row["via"], row["action"]) for row in audit_log(cup.store)}
    assert whos == {("organiser", "api", "rotate-token"), ("organiser", "api", "revoke-token")}


async def upload(cup: Cup, token: str) -> httpx.Response:
    async with cup.client(token) as client:
        return await client.post(
            "/api/versions", data={"runtime": "python3"}, files={"bot": ("main.py", PLAIN_BOT)}
        )


async def test_disable_and_enable_take_a_participant_off_the_tables_and_back(cup: Cup) -> None:
    assert (await cup.act("disable", name="bob")).status_code == 200
    assert cup.versions["bob"] not in [v.id for v in cup.store.playing_versions()]
    assert cup.versions["bob"] not in [v.id for v in cup.store.ranked_versions()]
    refused = await upload(cup, cup.tokens["bob"])
    assert refused.status_code == 403 and "disabled" in refused.json()["error"]
    async with cup.client(cup.tokens["bob"]) as bob:  # still signs in, to read its page
        assert (await bob.get("/api/me")).status_code == 200
    await cup.competition.refresh_board()
    assert set(cup.competition.board.scores) == {cup.versions["alice"], cup.versions["carol"]}
    assert cup.competition.board.matches == 6  # its results stay in the fit

    enabled = await cup.act("enable", name="bob")
    assert enabled.status_code == 200, enabled.text
    assert cup.versions["bob"] in [v.id for v in cup.store.playing_versions()]
    assert (await upload(cup, cup.tokens["bob"])).status_code == 201


async def test_a_ban_refuses_sign_in_upload_and_the_name_and_may_exclude_results(
    cup: Cup,
) -> None:
    carol = await cup.signed_in(cup.tokens["carol"])
    await cup.competition.refresh_board()
    assert cup.competition.board.matches == 6
    banned = await cup.act("ban", name="carol", results="exclude")
    assert banned.status_code == 200, banned.text
    assert "its matches leave the fit" in banned.json()["done"]
    assert "sign out" not in (await carol.get("/p/carol")).text
    form = await carol.get("/signin")
    again = await carol.post("/signin", data={"token": cup.tokens["carol"], "csrf": csrf(form)})
    assert again.status_code == 403
    assert (await upload(cup, cup.tokens["carol"])).status_code == 401
    for name in ("carol", "Carol", "caro1"):  # the name, and what looks like it, stay taken
        form = await carol.get("/register")
        taken = await carol.post("/register", data={"name": name, "csrf": csrf(form)})
        assert taken.status_code == 400 and "taken" in taken.text, name
    await carol.aclose()
    assert (
        (await cup.act("rotate-token", name="carol"))
        .json()["error"]
        .endswith("is banned: enable it first to give it a token")
    )
    await cup.competition.refresh_board()
    assert cup.competition.board.matches == 0  # every match carol sat in left the fit
    assert cup.versions["carol"] not in cup.competition.board.scores

    # Lifted: its results count again; its token must be rotated to sign in.
    assert (await cup.act("enable", name="carol")).status_code == 200
    await cup.competition.refresh_board()
    assert cup.competition.board.matches == 6
    async with cup.client(cup.tokens["carol"]) as old:
        assert (await old.get("/api/me")).status_code == 401


async def test_withdraw_unsuspend_rerun_and_rerate_through_the_api(
    cup: Cup, capsys: pytest.CaptureFixture[str]
) -> None:
    alice, bob = cup.versions["alice"], cup.versions["bob"]
    cup.store.suspend(bob, "its table failed 3 times", [{"match": "g1r0", "what": "died"}])
    assert (await cup.act("unsuspend", version=str(bob))).status_code == 200
    assert cup.store.version(bob).status == "admitted"  # type: ignore[union-attr]
    (lifted,) = cup.store.suspensions(bob)
    assert lifted["lifted_by"] == "the organiser's API"

    # A group with a failure is played again with new cards; the old leaves the fit.
    await cup.competition.refresh_board()
    queue = GroupQueue(cup.competition)
    rerun = await cup.act("rerun", target=f"g{cup.faulty.id}")
    assert rerun.status_code == 200, rerun.text
    replacement, done = await queue.next_group()
    assert (replacement.versions, done) == (cup.faulty.versions, set())
    assert replacement.seed != cup.faulty.seed and replacement.id > cup.clean.id
    await cup.competition.refresh_board()
    assert cup.competition.board.matches == 3  # the clean group only, until the re-run plays
    assert "newmarket serve: organiser (api): rerun g1: group 1 as group 3" in (
        capsys.readouterr().err
    )
    twice = await cup.act("rerun", target=f"g{cup.faulty.id}")
    assert twice.json()["error"].endswith(f"group {cup.faulty.id} was re-run already")
    # A window: only its groups that show a failure (the clean one has none).
    window = await cup.act("rerun", target="2000-01-01T00:00..2100-01-01T00:00")
    assert window.status_code == 400
    assert "was re-run already" in window.json()["error"]
    still = await cup.act("rerun", target=f"g{replacement.id}")
    assert f"group {replacement.id} is still being played" in still.json()["error"]
    bad = await cup.act("rerun", target="yesterday")
    assert "neither a group (g12) nor a window" in bad.json()["error"]

    withdrawn = await cup.act("withdraw", version=str(alice), results="keep")
    assert withdrawn.status_code == 200, withdrawn.text
    assert cup.store.version(alice).status == "withdrawn"  # type: ignore[union-attr]
    assert alice not in [v.id for v in cup.store.playing_versions()]
    assert (await cup.act("withdraw", version=str(alice), results="maybe")).status_code == 400
    bob_participant = cup.store.participant_by_name("bob")
    assert bob_participant is not None
    waiting = cup.store.add_version(bob_participant.id, "python3", "main.py", "", 1)
    pending = await cup.act("withdraw", version=str(waiting.id), results="keep")
    assert "pending its check: withdraw it after" in pending.json()["error"]
    rerate = await cup.act("rerate")
    assert rerate.status_code == 200 and "refitted" in rerate.json()["done"]
    await cup.competition.refresh_board()
    assert cup.competition.board.matches == 3 and alice not in cup.competition.board.scores

    async with cup.client(cup.organiser) as api:
        listed = (await api.get("/api/organiser/audit")).json()["entries"]
        assert [row["action"] for row in listed] == ["rerate", "withdraw", "rerun", "unsuspend"]
        assert all(row["who"] == "organiser" and row["via"] == "api" for row in listed)
        older = await api.get("/api/organiser/audit", params={"before": listed[1]["id"]})
        assert [row["action"] for row in older.json()["entries"]] == ["rerun", "unsuspend"]
        people = (await api.get("/api/organiser/participants")).json()["participants"]
        assert [p["standing"] for p in people] == ["active"] * 3
        assert (await api.post("/api/organiser/ban", content=b"[1")).status_code == 400
        assert (await api.post("/api/organiser/ban", json={"name": "bob"})).status_code == 400
        assert (await api.post("/api/organiser/fly", json={})).status_code == 404


async def test_a_withdrawal_excluded_after_a_ban_stays_excluded_when_the_ban_is_lifted(
    cup: Cup,
) -> None:
    ban(cup.store, SHELL, "carol", "exclude")
    withdraw(cup.store, SHELL, str(cup.versions["carol"]), "exclude")
    enable(cup.store, SHELL, "carol")
    await cup.competition.refresh_board()
    assert cup.competition.board.matches == 0  # carol v1 sat in all six


async def test_a_rerun_waits_while_paused_then_plays_and_replaces_the_old_group(
    cup: Cup, autojump_clock: trio.testing.MockClock
) -> None:
    cup.store.set_paused(True)
    rerun(cup.store, SHELL, f"g{cup.faulty.id}", 1)
    queue = GroupQueue(cup.competition)  # a server started after the re-run, while paused
    with trio.move_on_after(60):  # a minute of the virtual clock: nothing is handed out
        await queue.next_group()
        raise AssertionError("a re-run was played while the competition was paused")
    cup.store.set_paused(False)
    group, done = await queue.next_group()
    assert group.versions == cup.faulty.versions and done == set()
    for rotation in range(3):  # its table plays it: it counts where the old one did
        result = finished(f"g{group.id}r{rotation}", group.seed)
        cup.store.record(group, rotation, group.versions, result, None, identity=group.seed)
    await cup.competition.refresh_board()
    assert cup.competition.board.matches == 6
    mids = {m["match_id"] for m in cup.store.recent_matches(limit=20)}
    assert mids >= {f"g{cup.faulty.id}r0", f"g{group.id}r2"}  # the old results are kept


def test_every_action_from_the_shell_is_audited_as_the_shell(tmp_path: Path) -> None:
    made = Cup(tmp_path)
    made.competition.close()
    made.store.close()
    file = str(made.file)

    def serve(*words: str) -> tuple[int, str, str]:
        return newmarket("serve", *words, file)

    code, token, err = serve("organiser-token")
    assert code == 0 and token.startswith("org-") and "organiser's token" in err
    code, new, err = serve("rotate-token", "alice")
    assert code == 0 and len(new) >= 32 and "'alice': new token" in err
    assert serve("revoke-token", "alice")[0] == 0
    assert serve("disable", "bob")[0] == 0
    assert serve("enable", "bob")[0] == 0
    assert serve("rerun", f"g{made.faulty.id}")[0] == 0
    assert serve("ban", "carol", "keep")[0] == 0
    assert serve("withdraw", str(made.versions["bob"]), "exclude")[0] == 0
    assert serve("rerate")[0] == 0
    code, _out, err = serve("ban", "carol", "sometimes")
    assert (code, err) == (2, "error: serve ban: results: say keep or exclude, not 'sometimes'\n")
    code, _out, err = serve("unsuspend", "alice")
    assert code == 2 and "newmarket serve flags" in err
    code, listing, _err = serve("audit")
    actions = [line.split("  ")[2].split()[0] for line in listing.splitlines()]
    assert actions == [
        "rerate",
        "withdraw",
        "ban",
        "rerun",
        "enable",
        "disable",
        "revoke-token",
        "rotate-token",
        "organiser-token",
    ]
    assert all("shell (cli)" in line for line in listing.splitlines())
    store = CompetitionStore.open(load_config(made.file).database)
    try:
        assert store.participant_by_token(new) is None  # revoked after it was rotated
        assert [v.participant_name for v in store.playing_versions()] == ["alice"]
    finally:
        store.close()
