"""A match page's replay data read back as its frames, as ``static/replay.js`` reads it.

A page carries each frame as what changed since the one before
(``referee.report.pages.page_replay``); a test reads the frames a reader's browser
draws with ``frames_of``.  ``test_browser`` steps the real viewer through them.
"""

from __future__ import annotations

from typing import Any


def frames_of(page_data: dict[str, Any]) -> list[dict[str, Any]]:
    """The frames a page's ``steps`` stand for, as ``static/replay.js`` expands them."""
    frames: list[dict[str, Any]] = []
    for step in page_data["steps"]:
        frame = dict(frames[-1]) if frames else {}
        for key, value in step.items():
            if key == "played+":
                frame["played"] = [*frame["played"], *value]
            elif key == "hands@":
                frame["hands"] = list(frame["hands"])
                for seat, hand in value.items():
                    frame["hands"][int(seat)] = hand
            else:
                frame[key] = value
        frames.append(frame)
    return frames
