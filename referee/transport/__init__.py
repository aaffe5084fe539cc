"""Talking to a bot: its process, its connection, its session and the remote lobby.

Everything between a bot program and the match that plays it: starting the
process (``process``), the line connection over stdio or TCP (``connection``),
the handshaken session that plays many matches (``session``), the clock a
conversation is held to (``timecontrol``), and for bots that connect from
elsewhere the lobby and what guards it (``lobby``, ``tcp_guard``).  No rule of
the game lives here.
"""
