# Two entry points, both doing all of their own set-up on a fresh machine:
#   make dataset N=1000 [OUT=DATA] [SHOTS=10]
#                           render, ask, realise in Russian, filter and export a dataset
#                           (SHOTS defaults to 10, or N-1 for N <= 10: each shot needs its own image;
#                           installs only the core dependencies: no torch, transformers or Ray)
#   make test               lint, then run the test suite (what CI runs; installs every extra)
#   make lint               ruff and mypy alone, as configured in pyproject.toml
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
N ?= 1000
OUT ?= DATA
SHOTS ?= $(shell n=$(N); if [ "$$n" -gt 10 ] 2>/dev/null; then echo 10; elif [ "$$n" -gt 1 ] 2>/dev/null; then echo $$((n - 1)); else echo 1; fi)

.PHONY: install install-core dataset render test lint browser

# The default offline pipeline: the core dependencies only.
$(VENV)/.core: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

# Everything: [ml] (torch, transformers), [ray], [dev] (the test tools).
$(VENV)/.installed: $(VENV)/.core
	# The CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[all]'
	touch $@

install-core: $(VENV)/.core

install: $(VENV)/.installed

render: install-core
	$(PY) -m render --n $(N) --out $(OUT)

dataset: install-core
	$(PY) -m dataset build --n $(N) --out $(OUT) --shots $(SHOTS)

# Debian's Chromium, for the gallery test; without it that one test is skipped with a reason.
browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || echo "chromium not installed: the gallery browser test will be skipped"

# Any finding fails the build.
lint: install
	$(PY) -m ruff check .
	$(PY) -m mypy

test: install browser
	$(MAKE) --no-print-directory lint
	$(PY) -m pytest -q
