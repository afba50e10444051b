# make demo / make test create .venv on first use (python3 >= 3.10 with venv and pip).
PYTHON ?= python3
VENV := .venv
# Touched after a successful install; reinstall only when pyproject.toml changes.
STAMP := $(VENV)/.installed

.PHONY: venv demo test lint

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install -e '.[triton,test,ray]'
	touch $(STAMP)

demo: venv
	$(VENV)/bin/ws-solver demo --out out/demo

test: venv
	$(VENV)/bin/python -m pytest

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
