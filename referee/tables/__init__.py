"""Where matches are played: tables, whoever asks for them.

A league (``referee.league``) and the competition server (``referee.server``)
both hand ``TableJob``s to a pool and take back each result; neither knows how
the pool plays them, and neither imports the other.  The modules, from the
match outwards:

* ``job``: the job, ``TableError`` and ``WorkerDied``, ``MATCH_ATTEMPTS``.
* ``messages``: the typed pipe between a pool and a table worker.
* ``worker``: the table worker process, which keeps its bots' sessions.
* ``bot_processes``: which of them plays a seat, and which idle ones end (pure).
* ``process``: the pool's side of one worker, and the one command that starts it.
* ``local_pool``: ``--jobs N`` table workers on this machine.
* ``dask_pool``: the tables as Dask tasks (``--cluster``), imported only then.
* ``remote_pool``: tables with remote bots, played in the client's own process.
"""
