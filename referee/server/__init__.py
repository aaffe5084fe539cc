"""The competition server (``newmarket serve``): participants upload versions, matches never stop.

One process runs three things on one trio loop (``referee.server.run``):

* the **web side** (``app``, ``api``, ``auth``, ``templates/``): hypercorn's
  trio worker serving a Starlette app, pages rendered by Jinja2 with
  autoescaping, a JSON API with an OpenAPI description;
* **admission** (``admission``): every uploaded version is unpacked
  (``unpack``), built (``build``: C and Java are compiled by the server) and
  put through ``newmarket check`` in the sandbox, then plays a group as a
  table plays one, before it may play;
* the **scheduler** (``scheduler``, ``play``, ``tables``): table worker
  processes (or Dask workers, ``cluster``) play duplicate rotation groups
  chosen to shrink the leaderboard's uncertainty fastest, and every finished
  match is written to the store at once; remote versions connect to the
  league's lobby and play at a remote table in this process (``remote``).

The store (``store``, SQLite) is the only state: a ``kill -9`` loses at most
the matches in progress, and a restart finishes the groups it had begun.
The disk (``storage``) is watched: all three pause while it is low, and a
failed table is judged (``failures``) so that the platform's faults are never
charged to a bot.
"""
