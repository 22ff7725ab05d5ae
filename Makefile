# The two commands of the README:
#   make demo   set up, then start JupyterLab on the quickstart notebook
#   make check  set up, then run every check CI runs (.ci/run calls exactly this): `make test`
#               (the project's own suite, lint and notebooks) and `make upstream`
# Setup is a virtualenv in .venv with the package installed editable and its dev extras, and
# Debian's chromium for the browser tests (installed with apt-get when missing; as root, or
# through sudo).

# pytest caches the tests it rewrites for its assertions as bytecode; where the environment
# forbids bytecode (PYTHONDONTWRITEBYTECODE, set on some CI images), every run and every xdist
# worker rewrites all test modules again, about 7 s of CPU each.
unexport PYTHONDONTWRITEBYTECODE

VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
SANITIZE := tests/notebooks/nbval-sanitize.cfg

CHROMIUM ?= /usr/bin/chromium

.PHONY: setup browser agents jupyter-ai oldest hub upstream demo check test test-fast screenshots lint bench clean

# `jupyter labextension develop` links <venv>/share/jupyter/labextensions/jupyter-approvals to
# jupyter_approvals/labextension; an editable install into that venv again would write its data
# files through the link into the tree (install.json among them), and every later wheel build
# would then carry install.json twice. So the link goes, and a stray install.json with it,
# before each install.
unlink_sidebar = if [ -L $(1)/share/jupyter/labextensions/jupyter-approvals ]; then \
	rm $(1)/share/jupyter/labextensions/jupyter-approvals; fi; \
	rm -f jupyter_approvals/labextension/install.json

setup: $(VENV)/.installed

# The agent client of the agent gate's browser test: jupyter-mcp-server with the mcp client
# library, and jupyter-collaboration for the JupyterLab it drives, in a virtualenv of their own
# (docs/decisions/0003) with jupyter-approvals itself and the sidebar built above.
AGENT_VENV ?= .venv-agents
AGENT_REQUIREMENTS := tests/e2e/agent-requirements.txt

agents: $(AGENT_VENV)/.installed

# A virtualenv $(1) with jupyter-approvals (editable), the requirements file $(2) and the
# sidebar built above linked in.
define venv_with_sidebar
	$(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --quiet --upgrade pip
	$(call unlink_sidebar,$(1))
	HATCH_JUPYTER_BUILDER_SKIP_NPM=1 $(1)/bin/python -m pip install --quiet -e . -r $(2)
	PATH="$(abspath $(1)/bin):$$PATH" $(1)/bin/jupyter labextension develop --overwrite .
	touch $(1)/.installed
endef

$(AGENT_VENV)/.installed: $(VENV)/.installed $(AGENT_REQUIREMENTS)
	$(call venv_with_sidebar,$(AGENT_VENV),$(AGENT_REQUIREMENTS))

# Jupyter AI 3 (its ACP client, persona manager and chat) for the tests of the Jupyter AI bridge
# (tests/jupyter_ai): a virtualenv of its own with jupyter-approvals and the sidebar built above
# (docs/decisions/0011).
JAI_VENV ?= .venv-jai
JAI_REQUIREMENTS := tests/jupyter_ai/requirements.txt

jupyter-ai: $(JAI_VENV)/.installed

$(JAI_VENV)/.installed: $(VENV)/.installed $(JAI_REQUIREMENTS)
	$(call venv_with_sidebar,$(JAI_VENV),$(JAI_REQUIREMENTS))

# The oldest JupyterLab, Notebook 7, Jupyter Server and jupyter-collaboration supported (README,
# "Supported versions"), for the smoke test tests/e2e/test_oldest_smoke.py: a virtualenv of
# their own with jupyter-approvals and the sidebar built above, copied in as a wheel installs it
# (a symlink, as `jupyter labextension develop` makes, is served with a 403 by an old
# jupyter-server under tornado >= 6.5.9; that is about development links, not the sidebar).
OLDEST_VENV ?= .venv-oldest
OLDEST_REQUIREMENTS := tests/e2e/oldest-requirements.txt
OLDEST_LABEXT := $(OLDEST_VENV)/share/jupyter/labextensions/jupyter-approvals

# The sidebar is copied again on each run (it is rebuilt above when its sources change).
oldest: $(VENV)/.installed $(OLDEST_VENV)/.installed
	rm -rf $(OLDEST_LABEXT)
	mkdir -p $(dir $(OLDEST_LABEXT))
	cp -R jupyter_approvals/labextension $(OLDEST_LABEXT)
	cp $(LABEXT)/install.json $(OLDEST_LABEXT)/

$(OLDEST_VENV)/.installed: pyproject.toml $(OLDEST_REQUIREMENTS)
	$(PYTHON) -m venv $(OLDEST_VENV)
	$(OLDEST_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(call unlink_sidebar,$(OLDEST_VENV))
	HATCH_JUPYTER_BUILDER_SKIP_NPM=1 $(OLDEST_VENV)/bin/python -m pip install --quiet -e . \
		-r $(OLDEST_REQUIREMENTS)
	touch $@

# jupyter_server's own test suite, and jupyter-collaboration's server part's
# (jupyter_server_ydoc), each from the sdist of the installed version, run plain and with
# jupyter-approvals loaded in every server they start (tests/upstream/run_upstream.py); fails
# when a test passes plain but not with the extension. Each suite gets a virtualenv with its
# test extra and jupyter-approvals; the file that enables the extension for every server of the
# virtualenv is removed, so that the plain run is plain. About 20 minutes on 2 cores.
UPSTREAM_VENV ?= .venv-upstream
UPSTREAM_YDOC_VENV ?= .venv-upstream-ydoc
ENABLING := etc/jupyter/jupyter_server_config.d/jupyter_approvals.json
version_of = $(shell $(1)/bin/python -c "import importlib.metadata as m; print(m.version('$(2)'))")

$(UPSTREAM_VENV)/.installed: $(VENV)/.installed
	$(PYTHON) -m venv $(UPSTREAM_VENV)
	$(UPSTREAM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(call unlink_sidebar,$(UPSTREAM_VENV))
	HATCH_JUPYTER_BUILDER_SKIP_NPM=1 $(UPSTREAM_VENV)/bin/python -m pip install --quiet -e . \
		"jupyter_server[test]==$(call version_of,$(VENV),jupyter_server)"
	rm -f $(UPSTREAM_VENV)/$(ENABLING)
	touch $@

$(UPSTREAM_YDOC_VENV)/.installed: $(VENV)/.installed $(AGENT_VENV)/.installed
	$(PYTHON) -m venv $(UPSTREAM_YDOC_VENV)
	$(UPSTREAM_YDOC_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(call unlink_sidebar,$(UPSTREAM_YDOC_VENV))
	HATCH_JUPYTER_BUILDER_SKIP_NPM=1 $(UPSTREAM_YDOC_VENV)/bin/python -m pip install --quiet -e . \
		"jupyter_server[test]==$(call version_of,$(VENV),jupyter_server)" \
		"jupyter-server-ydoc[test]==$(call version_of,$(AGENT_VENV),jupyter-server-ydoc)"
	rm -f $(UPSTREAM_YDOC_VENV)/$(ENABLING)
	touch $@

upstream: $(UPSTREAM_VENV)/.installed $(UPSTREAM_YDOC_VENV)/.installed
	$(BIN)/python tests/upstream/run_upstream.py --python $(UPSTREAM_VENV)/bin/python \
		--dist jupyter_server
	$(BIN)/python tests/upstream/run_upstream.py --python $(UPSTREAM_YDOC_VENV)/bin/python \
		--dist jupyter-server-ydoc

# configurable-http-proxy, the proxy of the JupyterHub the hub tests start
# (docs/decisions/0010), from npm into build/hub-proxy.
HUB_PROXY_VERSION := 5.3.0
HUB_PROXY_DIR := build/hub-proxy

hub: $(HUB_PROXY_DIR)/.installed

$(HUB_PROXY_DIR)/.installed:
	@command -v npm >/dev/null || { echo "make hub needs Node.js (>= 20) and npm" >&2; exit 1; }
	mkdir -p $(HUB_PROXY_DIR)
	cd $(HUB_PROXY_DIR) && npm install --no-audit --no-fund --silent \
		configurable-http-proxy@$(HUB_PROXY_VERSION)
	touch $@

browser:
	@if [ ! -x "$(CHROMIUM)" ]; then \
		echo "Installing Debian's chromium for the browser tests"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; \
	fi

# The JupyterLab sidebar (labextension/, TypeScript) is built here with npm and the venv's
# jupyter, then linked into the venv; pip's own editable build of it is skipped. npm ci runs
# again only when package.json or the lock changed since node_modules was installed.
LABEXT := labextension
LABEXT_SOURCES := $(LABEXT)/package.json $(wildcard $(LABEXT)/package-lock.json) $(LABEXT)/tsconfig.json \
	$(wildcard $(LABEXT)/src/*) $(wildcard $(LABEXT)/style/*)

# The Python side alone (what `make test-fast` needs; no npm).
$(VENV)/.python: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(call unlink_sidebar,$(VENV))
	HATCH_JUPYTER_BUILDER_SKIP_NPM=1 $(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

$(VENV)/.installed: $(VENV)/.python $(LABEXT_SOURCES)
	@command -v npm >/dev/null || { echo "make setup needs Node.js (>= 20) and npm to build $(LABEXT)/" >&2; exit 1; }
	cd $(LABEXT) && if [ ! -f package-lock.json ]; then npm install --no-audit --no-fund; \
		elif [ ! -f node_modules/.package-lock.json ] \
			|| [ package-lock.json -nt node_modules/.package-lock.json ] \
			|| [ package.json -nt node_modules/.package-lock.json ]; then npm ci --no-audit --no-fund; fi
	cd $(LABEXT) && PATH="$(abspath $(BIN)):$$PATH" npm run build
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/jupyter labextension develop --overwrite .
	touch $@

# As root (containers, CI machines) JupyterLab refuses to start without --allow-root.
# The demo serves notebooks/ (the examples only) and opens the quickstart; the URL it prints
# (with its token) opens that notebook. A port in use is an error, not a silent other port.
DEMO_PORT ?= 8888
demo: setup
	@echo "jupyter-approvals demo: JupyterLab on port $(DEMO_PORT), serving notebooks/, opening"
	@echo "quickstart.ipynb. Open the http://localhost:$(DEMO_PORT)/lab/tree/quickstart.ipynb?token=..."
	@echo "URL printed below. Stop it with Ctrl-C twice. Port taken? make demo DEMO_PORT=8890"
	$(BIN)/jupyter lab --ServerApp.root_dir=notebooks --port=$(DEMO_PORT) \
		--ServerApp.port_retries=0 --LabApp.default_url=/lab/tree/quickstart.ipynb \
		$(if $(filter 0,$(shell id -u)),--allow-root)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	cd $(LABEXT) && npm run lint

# Everything CI runs, in this order: the project's own suite first (about 30 minutes on 2
# cores), then the upstream suites with the extension loaded (about 20 more).
check: test
	$(MAKE) upstream

# Most tests wait (on kernels, servers, a browser) rather than compute: pytest-xdist runs them
# in TEST_JOBS processes, each test file in one process so that its module fixtures (a
# JupyterLab, a kernel) are made once. The tests marked realtime (an answer within a second
# counted too fast, a countdown) run after, alone: on two busy cores a second can pass
# between two steps of theirs.
TEST_JOBS ?= 4
TEST_ENV = CHROMIUM_PATH=$(CHROMIUM) AGENT_PYTHON=$(abspath $(AGENT_VENV))/bin/python \
	OLDEST_PYTHON=$(abspath $(OLDEST_VENV))/bin/python JUPYTER_AI_PYTHON=$(abspath $(JAI_VENV))/bin/python

test: lint browser agents jupyter-ai oldest hub
	cd $(LABEXT) && npm test
	$(TEST_ENV) $(BIN)/pytest -n $(TEST_JOBS) --dist loadfile -m "not realtime" tests notebooks \
		--nbval --nbval-sanitize-with $(SANITIZE)
	$(TEST_ENV) $(BIN)/pytest -m realtime tests

# Every test that starts no kernel, no browser and nothing in another virtualenv; needs
# neither npm nor the sidebar's build. The fuzz properties run a fifth of their examples
# here (at least 50 each); make test runs them all.
test-fast: $(VENV)/.python
	JPA_FUZZ_EXAMPLES_SCALE=0.2 $(BIN)/pytest -n auto -m "not kernel and not e2e and not install and not venvs and not sidebar and not hub and not jupyter_ai" tests

# The documentation's screenshots: the browser tests write every screenshot under
# build/screenshots (never into the tree), the ones for docs/images (save_screenshot(...,
# doc=True)) also under build/screenshots/docs; this runs the test files that take those and
# copies them into docs/images. Nothing else writes docs/images.
SCREENSHOTS := build/screenshots
DOC_SCREENSHOT_TESTS = $(shell grep -l 'doc=True' tests/e2e/test_*.py)

screenshots: setup browser agents jupyter-ai
	rm -rf $(SCREENSHOTS)/docs
	$(TEST_ENV) $(BIN)/pytest -m e2e $(DOC_SCREENSHOT_TESTS)
	mkdir -p docs/images
	cp -R $(SCREENSHOTS)/docs/. docs/images/
	@echo "docs/images updated from $(SCREENSHOTS)/docs:" && ls $(SCREENSHOTS)/docs

bench: setup agents
	$(BIN)/python benchmarks/bench_fingerprint.py
	$(BIN)/python benchmarks/bench_gate.py
	$(BIN)/python benchmarks/bench_diff.py
	$(BIN)/python benchmarks/bench_table_diff.py
	$(BIN)/python benchmarks/bench_table_write.py
	$(BIN)/python benchmarks/bench_agent_gate.py
	$(AGENT_VENV)/bin/python benchmarks/bench_agent_load.py
	$(BIN)/python benchmarks/bench_held_write.py
	$(BIN)/python benchmarks/bench_pending.py
	$(BIN)/python benchmarks/bench_journal.py
	CHROMIUM_PATH=$(CHROMIUM) $(BIN)/python benchmarks/bench_sidebar.py

clean:
	rm -rf $(VENV) $(AGENT_VENV) $(JAI_VENV) $(OLDEST_VENV) $(UPSTREAM_VENV) $(UPSTREAM_YDOC_VENV) build dist \
		*.egg-info
