"""One match: the loop that plays it, what its bots are told, its log and its result.

``referee`` plays a match between bot sessions under a time control;
``convert`` is the boundary between the engine's events and the wire's;
``log`` writes the match log; ``result`` is the played match as plain data;
``dealkey`` says where the cards come from (a secret key, or a public seed).
"""
