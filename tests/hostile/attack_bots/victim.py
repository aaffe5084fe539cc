"""A well-behaved bot with secrets: in its environment (VICTIM_SECRET) and its directory."""

from _attack import run

run(lambda: None, "victim")
