"""What the league and the server keep on disk, and how: files only their organiser can read."""
