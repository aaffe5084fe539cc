"""A TCP bot that starts and never connects to the referee."""

import time

if __name__ == "__main__":
    time.sleep(600)
