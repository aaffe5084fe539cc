"""Text for people: events in words (``render``) and output that is never cut (``printing``)."""
