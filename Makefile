# make demo / make test create .venv on first use (python3 >= 3.10 with venv and pip).
# make test runs the suite twice: in .venv with Triton 3.6.0, then in .venv-triton3.9 with
# Triton 3.9.0 (the two supported versions; the extras `triton` and `triton39` pin them);
# make test-3.6 / make test-3.9 run one of them.
PYTHON ?= python3
VENV := .venv
VENV39 := .venv-triton3.9
# Touched after a successful install; reinstall only when pyproject.toml or setup.py changes.
STAMP := $(VENV)/.installed
STAMP39 := $(VENV39)/.installed

.PHONY: venv venv39 demo test test-3.6 test-3.9 lint

venv: $(STAMP)
venv39: $(STAMP39)

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install -e '.[triton,test,ray]'
	touch $(STAMP)

$(STAMP39): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV39)
	$(VENV39)/bin/python -m pip install --quiet --upgrade pip
	$(VENV39)/bin/python -m pip install -e '.[triton39,test,ray]'
	touch $(STAMP39)

demo: venv
	$(VENV)/bin/ws-solver demo --out out/demo

test: test-3.6 test-3.9

test-3.6: venv
	$(VENV)/bin/python -m pytest

test-3.9: venv39
	$(VENV39)/bin/python -m pytest

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
