"""Crashes before the handshake: a message on stderr, then exit status 3."""

import sys

sys.stderr.write("cannot load my model weights\n")
sys.exit(3)
