# Everything a fresh clone needs: `make demo` and `make test` create .venv themselves.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench browser-deps screenshot clean

$(STAMP): pyproject.toml constraints.txt
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/arena demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: $(STAMP) lint
	$(BIN)/python -m pytest tests --ignore=tests/benchmarks -q

browser-deps:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium)

screenshot: $(STAMP) browser-deps
	$(BIN)/python scripts/screenshot.py

bench: $(STAMP)
	$(BIN)/python -m pytest tests/benchmarks -q -s -m benchmark

clean:
	rm -rf $(VENV) build *.egg-info
