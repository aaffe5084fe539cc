"""The data directory over virtual days of play and uploads: flat once retention applies.

tests/server/disk_week.py runs the server's table and retention loops under
trio's virtual clock, with uploads admitted, rejected and withdrawn, and the
real operations log rotated by size; what an organiser would see with ``du``
is sampled every six virtual hours.
"""

from __future__ import annotations

from pathlib import Path

from tests.server.disk_week import Sample, Week, simulate

RECORD = 1500  # bytes a stored match record holds
WEEK = Week(
    days=3,
    match_seconds=300,
    records=[b"r" * RECORD],
    participants=6,
    upload_hours=6,
    upload_bytes=20_000,
    files_bytes=200_000,
    retention="days = 0.5\nfirst_groups = 1\nevery_minutes = 60\noperations_log_files = 2",
    operations_log_bytes=4000,
)


def _bounded(sample: Sample) -> int:
    """What retention bounds: the records, the versions' files, the operations log."""
    return sum(sample.parts[part] for part in ("logs", "versions", "operations log"))


def test_the_data_directory_stays_flat_over_days_of_play_and_uploads(tmp_path: Path) -> None:
    samples = simulate(tmp_path, WEEK)
    last = samples[-1]
    assert last.hours >= 3 * 24 - 1 and last.matches >= 3 * 24 * 12 - 10  # it never paused
    per_hour = 3600 / WEEK.match_seconds
    version = WEEK.upload_bytes + WEEK.files_bytes
    for sample in samples:
        versions = WEEK.participants * (1 + sample.hours / WEEK.upload_hours)  # uploaded so far
        # The records: the half day kept and the hour since the last pass, and every
        # version's first group (a table of 3 or 4 matches) for ever: with versions, not time.
        window = min(sample.hours, 12 + 1) * per_hour
        assert sample.parts["logs"] <= (window + 4 * versions) * RECORD
        # The versions: each participant's two newest admitted, and the uploads since the
        # last pass (at most one each, every six hours): never one per upload.
        assert sample.parts["versions"] <= WEEK.participants * 3 * version
        # The operations log: its file and two old ones, each rotated at 4000 bytes.
        assert sample.parts["operations log"] <= 3 * (4000 + 300)
        assert sample.parts["other"] == 0  # nothing else left behind
    # Without retention all of it would be there; with it, a small part.
    uploads = WEEK.days * 24 / WEEK.upload_hours * WEEK.participants
    written = last.matches * RECORD + uploads * version
    assert _bounded(last) < written / 3
    assert last.parts["operations log"] > 2 * 4000  # it did rotate, and kept two
    # The results are kept for ever: the database alone grows with matches, under 2 KB each.
    first = next(s for s in samples if s.hours > 24)
    grown = last.parts["database"] - first.parts["database"]
    assert 0 < grown < 2000 * (last.matches - first.matches)
