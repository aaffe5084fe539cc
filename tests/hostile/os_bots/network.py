"""Before its handshake, tries to connect to 127.0.0.1:argv[1] and says on stderr how it went."""

import socket
import sys

from tests.hostile.os_bots._play import run, say

try:
    with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5) as sock:
        sock.sendall(b"exfiltrated\n")
    say("connect: succeeded")
except OSError as error:
    say(f"connect: failed: {error}")
run(name="network")
