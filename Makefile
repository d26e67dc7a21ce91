# Two commands on a fresh machine with Python 3.11: `make demo` and `make test`.
# Each creates .venv and installs what it needs into it.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Label Studio itself (the server the tests and the demo run) lives in its own environment, so that its
# pinned dependencies never constrain this package's. 1.23.2 is the version this project is tested with.
LABEL_STUDIO_VERSION := 1.23.2
LS_VENV := .venv-ls
LS_STAMP := $(LS_VENV)/.installed-$(LABEL_STUDIO_VERSION)-uwsgi
export LABEL_STUDIO_BIN := $(CURDIR)/$(LS_VENV)/bin/label-studio
# Headless Chromium for the tests that look at the report and at Label Studio's UI: Debian's package, installed
# once (as root, or through sudo) when it is missing.
CHROMIUM := /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: demo test test-fast bench compat clean screenshots

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

$(LS_STAMP):
	$(PYTHON) -m venv $(LS_VENV)
	$(LS_VENV)/bin/pip install --quiet --upgrade pip
	$(LS_VENV)/bin/pip install --quiet label-studio==$(LABEL_STUDIO_VERSION) pyuwsgi
	touch $(LS_STAMP)

# pygamma-agreement, the reference gamma, for bench/gamma_vs_pygamma.py: a venv of its own (cvxpy, GLPK, numba).
PYGAMMA := .venv-peers/pygamma/bin/python
$(PYGAMMA):
	$(PYTHON) -m venv .venv-peers/pygamma
	.venv-peers/pygamma/bin/pip install --quiet pygamma-agreement==0.5.9

$(CHROMIUM):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null

# podman (Debian's package) for the container tests, installed the same way; they skip without it.
PODMAN := /usr/bin/podman
$(PODMAN):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc debootstrap >/dev/null

# PostgreSQL 15 (Debian's package) for the tests against Label Studio as production runs it (PostgreSQL, uwsgi).
POSTGRES := /usr/lib/postgresql/15/bin/initdb
$(POSTGRES):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null

# Prometheus (Debian's package) for promtool: tests/deploy/test_rules.py checks and unit-tests the alert rules.
PROMETHEUS := /usr/bin/prometheus
$(PROMETHEUS):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >/dev/null

# Hypothesis profiles (tests/profiles.py): `make test` runs each property on the standard examples (as CI always has), the
# unit tier on a quarter; HYPOTHESIS_PROFILE=... on the command line picks another.
test: $(STAMP) $(LS_STAMP) $(CHROMIUM) $(PODMAN) $(POSTGRES) $(PROMETHEUS)
	HYPOTHESIS_PROFILE=$(or $(HYPOTHESIS_PROFILE),thorough) $(BIN)/python -m pytest -q

# The unit tier, under three minutes on two cores: no Label Studio, Chromium, podman or PostgreSQL (the markers are
# in pyproject.toml; `make test` runs every tier).
test-fast: $(STAMP)
	HYPOTHESIS_PROFILE=$(or $(HYPOTHESIS_PROFILE),fast) \
	  $(BIN)/python -m pytest -q -m "not integration and not containers and not slow"

# The whole thing on a local Label Studio: a demo project, simulated annotators, the live monitor and its scores.
demo: $(STAMP) $(LS_STAMP)
	$(BIN)/ls-agreement demo --label-studio $(LABEL_STUDIO_BIN) --data-dir var/demo

# The README's pictures, docs/screenshot.png, docs/tab.png and docs/report.png: a short demo (60 tasks) on a local Label
# Studio, photographed in headless Chromium once its scores are written (about three minutes).
screenshots: $(STAMP) $(LS_STAMP) $(CHROMIUM)
	$(BIN)/python docs/make_screenshots.py

bench: $(STAMP) $(LS_STAMP) $(PYGAMMA)
	$(BIN)/python bench/alpha_vs_krippendorff.py
	$(BIN)/python bench/gwet_vs_irrcac.py
	$(BIN)/python bench/sync_project.py
	$(BIN)/python bench/read_tasks.py
	$(BIN)/python bench/read_build.py
	$(BIN)/python bench/live_latency.py
	$(BIN)/python bench/ls_share.py
	$(BIN)/python bench/reconcile_pass.py
	$(BIN)/python bench/restart.py --tasks 10000
	$(BIN)/python bench/load.py
	$(BIN)/python bench/mapping_throughput.py --serve
	$(BIN)/python bench/report_render.py --serve --references --repeat 3
	$(BIN)/python bench/free_text.py
	$(BIN)/python bench/load_floor.py
	$(BIN)/python bench/scale.py --peer --shapes demo --sizes 10000 100000
	$(BIN)/python bench/scale.py --peer --shapes spans --sizes 10000 30000
	$(BIN)/python bench/span_measures.py --serve
	$(BIN)/python bench/gamma_vs_pygamma.py --pygamma-python $(PYGAMMA) --timeout 150

# The integration tests that touch the service's API calls, against older Label Studio versions, each installed in a
# venv of its own (teams still run them): make compat [COMPAT_VERSIONS="1.20.0 1.22.0"].
COMPAT_VERSIONS ?= 1.20.0 1.21.0 1.22.0
COMPAT_TESTS := tests/integration/test_sync.py tests/integration/test_serve.py tests/integration/test_changed_read.py \
	tests/integration/test_webhooks.py tests/integration/test_projects.py tests/integration/test_references.py \
	tests/integration/test_restart.py
compat: $(STAMP)
	@for version in $(COMPAT_VERSIONS); do \
	  venv=.venv-peers/label-studio-$$version; \
	  test -x $$venv/bin/label-studio || { $(PYTHON) -m venv $$venv && \
	    $$venv/bin/pip install --quiet label-studio==$$version; } || exit 1; \
	  echo "Label Studio $$version:"; \
	  LABEL_STUDIO_BIN=$(CURDIR)/$$venv/bin/label-studio $(BIN)/python -m pytest -q -p no:randomly $(COMPAT_TESTS) \
	    || exit 1; \
	done

clean:
	rm -rf $(VENV) $(LS_VENV) .venv-peers var build *.egg-info .hypothesis
