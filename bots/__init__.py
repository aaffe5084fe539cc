"""Bots: the Python SDK (``bots.sdk``), the starter bots (``bots.starters``), bots in other
languages (``bots/js``, ``bots/c``, ``bots/shell``) and the registry of bundled bots
(``bots.registry``).  Bots use ``protocol`` exactly as an outside bot would, never
``engine`` or ``referee``."""
