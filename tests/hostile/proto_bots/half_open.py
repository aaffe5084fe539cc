"""A TCP bot that connects and then sends nothing, holding the connection open."""

import time

from tests.hostile.proto_bots._wire import connect

if __name__ == "__main__":
    sock = connect()
    time.sleep(600)
