# The two commands of the README:
#   make demo   set up, then start JupyterLab on the quickstart notebook
#   make test   set up, then run every check CI runs (.ci/run calls exactly this)
# Setup is a virtualenv in .venv with the package installed editable and its dev extras, and
# Debian's chromium for the browser tests (installed with apt-get when missing; as root, or
# through sudo).

VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
SANITIZE := notebooks/nbval-sanitize.cfg

CHROMIUM ?= /usr/bin/chromium

.PHONY: setup browser demo test lint bench clean

setup: $(VENV)/.installed

browser:
	@if [ ! -x "$(CHROMIUM)" ]; then \
		echo "Installing Debian's chromium for the browser tests"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; \
	fi

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

demo: setup
	$(BIN)/jupyter lab notebooks/quickstart.ipynb

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint browser
	CHROMIUM_PATH=$(CHROMIUM) $(BIN)/pytest tests notebooks --nbval --nbval-sanitize-with $(SANITIZE)

bench: setup
	$(BIN)/python benchmarks/bench_fingerprint.py
	$(BIN)/python benchmarks/bench_gate.py

clean:
	rm -rf $(VENV) build dist *.egg-info
