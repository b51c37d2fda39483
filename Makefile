# Two entry points, both doing all of their own set-up on a fresh machine:
#   make dataset N=1000 [OUT=DATA] [SHOTS=10]
#                           render, ask, realise in Russian, filter and export a dataset
#                           (SHOTS defaults to 10, or N-1 for N <= 10: each shot needs its own image)
#   make test               run the test suite (what CI runs)
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
N ?= 1000
OUT ?= DATA
SHOTS ?= $(shell n=$(N); if [ "$$n" -gt 10 ] 2>/dev/null; then echo 10; elif [ "$$n" -gt 1 ] 2>/dev/null; then echo $$((n - 1)); else echo 1; fi)

.PHONY: install dataset render test browser

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# The CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[all]'
	touch $@

install: $(VENV)/.installed

render: install
	$(PY) -m render --n $(N) --out $(OUT)

dataset: install
	$(PY) -m dataset build --n $(N) --out $(OUT) --shots $(SHOTS)

# Debian's Chromium, for the gallery test; without it that one test is skipped with a reason.
browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || echo "chromium not installed: the gallery browser test will be skipped"

test: install browser
	$(PY) -m pytest -q
