# The two commands a new user types: `make demo` and `make test`.
# Both build .venv from nothing with only python3 and the package index, and install the
# Debian packages they use where they can (see `system` below; README.md, "Two commands",
# says what each installs).  `SYSTEM=0` installs no Debian package.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# What the suite uses from the system, as COMMAND:DEBIAN_PACKAGE pairs.  A test that needs
# one that is missing skips and says why.  chromium + chromedriver: the report's browser
# tests (Playwright drives Debian's /usr/bin/chromium; no browser is downloaded); bwrap:
# the bot sandbox's no-network fallback (docs/hardening.md); javac: the Java test bot;
# KIT_NEEDS: the compilers of the server's cpp, rust and go runtimes and of the starter kits
# (bots/kits/; an existing cargo, rustup's, is kept: Debian's comes only without one).
SANDBOX_NEEDS := bwrap:bubblewrap
KIT_NEEDS := c++:g++ cargo:cargo rustc:rustc go:golang-go tsc:node-typescript
TEST_NEEDS ?= chromium:chromium chromedriver:chromium-driver $(SANDBOX_NEEDS) javac:default-jdk-headless $(KIT_NEEDS)
# `make test DRY_RUN=1` prints the apt-get commands instead of running them.
DRY_RUN ?=
# `make test SYSTEM=0` (or `make demo SYSTEM=0`) runs no apt-get at all: one line names
# what is missing, and the tests that need it skip.
SYSTEM ?= 1
# Tests run in three pytest-xdist workers on a two-core machine: about half the suite's
# wall time is waiting on real bot, server and league processes, and a third worker fills
# those waits (benchmarks/results/2026-11-28-suite-time.md). `make unit JOBS=0` runs them
# in one process.
JOBS ?= 3

.PHONY: demo test lint typecheck unit bench clean system system-sandbox

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --quiet --upgrade pip

# Twice quiet: setuptools' notices about an editable install are not for a new user;
# errors still print.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --quiet -e '.[test]'
	touch $(STAMP)

# Install the missing packages of $(1) with apt-get: as root, or with sudo if it needs no
# password.  Otherwise, or if apt-get fails, one line says what is missing and make goes on.
define install_missing
	@missing=""; \
	for need in $(1); do \
	    command -v "$${need%%:*}" >/dev/null 2>&1 || missing="$$missing $${need#*:}"; \
	done; \
	[ -n "$$missing" ] || exit 0; \
	if [ "$(SYSTEM)" = 0 ]; then \
	    echo "make: not installed:$$missing (SYSTEM=0; the tests that use them skip)"; \
	    exit 0; \
	fi; \
	if [ "$$(id -u)" -eq 0 ]; then sudo=""; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	else \
	    echo "make: not installed:$$missing (needs root or sudo; the tests that use them skip)"; \
	    exit 0; \
	fi; \
	run=""; [ -z "$(DRY_RUN)" ] || run="echo"; \
	echo "make: installing$$missing with apt-get"; \
	{ $$run $$sudo apt-get update -qq && \
	  $$run $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; } || \
	echo "make: apt-get could not install$$missing (the tests that use them skip)"
endef

system:
	$(call install_missing,$(TEST_NEEDS))

system-sandbox:
	$(call install_missing,$(SANDBOX_NEEDS))

demo: system-sandbox $(STAMP)
	$(BIN)/newmarket demo --league

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q $(if $(filter-out 0,$(JOBS)),-n $(JOBS))

test: system lint typecheck unit

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
