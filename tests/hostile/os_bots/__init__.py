"""Small hostile programs that attack the operating system's side of the referee (test_os_bots)."""
