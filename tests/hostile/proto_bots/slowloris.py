"""A TCP bot that sends a valid ready line one byte a second: it would finish, but too late."""

import time

from tests.hostile.proto_bots._wire import connect, ready_line

if __name__ == "__main__":
    sock = connect()
    try:
        for byte in ready_line("slowloris"):
            sock.sendall(bytes([byte]))
            time.sleep(1)
    except OSError:
        pass  # the referee closed it: that is the point
    time.sleep(600)
