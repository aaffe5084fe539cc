"""``newmarket connect``'s one change to the bot's bytes: the token in its ready."""

from __future__ import annotations

import json

from referee.commands.connect import with_token


def test_the_bridge_puts_the_token_into_ready_and_leaves_other_lines_alone() -> None:
    ready = b'{"type":"ready","name":"mine","version":"1","protocol":1}\n'
    sent = json.loads(with_token(ready, "s3cret"))
    assert sent == {
        "type": "ready",
        "name": "mine",
        "version": "1",
        "protocol": 1,
        "token": "s3cret",
    }
    own = b'{"type":"ready","name":"m","version":"1","protocol":1,"token":"old"}\n'
    assert json.loads(with_token(own, "new"))["token"] == "new"
    for line in (b'{"type":"reply","id":1,"choice":"7H"}\n', b"not json\n", b"[1, 2]\n"):
        assert with_token(line, "s3cret") == line
