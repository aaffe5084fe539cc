"""What an organiser writes down: the TOML sections of a league file and a competition file.

``sections`` decodes a TOML table into a declared ``msgspec.Struct`` and words every
mistake as one ``FILE: KEY: PROBLEM`` line; ``shared`` declares the sections both
files have ([rules], [time_control], [sandbox], [remote]); ``rules`` turns a preset,
its options and a hand limit into the engine's ``Rules``, for the files and the
commands alike.  The league (``referee.league.league_file``) and the server
(``referee.server.competition_file``) are both its clients.
"""
