"""A well-behaved table mate: legal random choices, exit on shutdown."""

from tests.hostile.os_bots._play import run

run(name="good")
