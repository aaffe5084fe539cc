"""What a user meets in daily use of ``newmarket``, beyond the shared conventions.

Each test is one thing a bot writer, a league organiser or a host ran into
(Ctrl-C midway, a table piped into a file, help read at 80 columns) and
asserts what they now see.
"""

from __future__ import annotations

from typing import Any, NoReturn

import pytest
import trio

import referee.commands.check
from tests.clirun import newmarket


def test_ctrl_c_inside_a_trio_nursery_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Ctrl-C during `newmarket check` or `sprt` lands in a nursery, which wraps it in an
    # exception group: that used to end in a traceback (and exit 1) instead of exit 130.
    def check_interrupted(*_args: Any, **_kwargs: Any) -> NoReturn:
        async def pressed() -> None:
            raise KeyboardInterrupt

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(pressed)

        trio.run(main)
        raise AssertionError("unreachable")

    monkeypatch.setattr(referee.commands.check, "check_bot", check_interrupted)
    code, _out, err = newmarket("check", "random")
    assert code == 130
    assert err.strip() == "interrupted"
