"""Tools around single bots and single logs: ``check`` (a bot through every scenario),
``replay`` (a log verified and printed), ``transcript`` and ``transcript_check`` (a seat's
wire transcript regenerated from a log, and every line of a log held to it)."""
