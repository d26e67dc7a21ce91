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
LS_STAMP := $(LS_VENV)/.installed-$(LABEL_STUDIO_VERSION)
export LABEL_STUDIO_BIN := $(CURDIR)/$(LS_VENV)/bin/label-studio

.PHONY: demo test bench clean

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

$(LS_STAMP):
	$(PYTHON) -m venv $(LS_VENV)
	$(LS_VENV)/bin/pip install --quiet --upgrade pip
	$(LS_VENV)/bin/pip install --quiet label-studio==$(LABEL_STUDIO_VERSION)
	touch $(LS_STAMP)

test: $(STAMP) $(LS_STAMP)
	$(BIN)/python -m pytest -q

# Until the live demo on a local Label Studio exists, the demo computes every measure on the bundled examples.
demo: $(STAMP)
	@for spec in \
	  "datasaur_spans.csv --metric alpha" \
	  "datasaur_spans.csv --metric spa --ci 0.95 --seed 1" \
	  "krippendorff_2011.csv --metric alpha --level nominal" \
	  "krippendorff_2011.csv --metric alpha --level ordinal" \
	  "krippendorff_2011.csv --metric alpha --level interval --ci 0.95 --seed 1" \
	  "krippendorff_2011.csv --metric fleiss" \
	  "okay_example1.csv --metric cohen --ci 0.95 --seed 1" \
	  "okay_example1.csv --metric scott" \
	  "okay_example1.csv --metric pabak" \
	  "klemens_table1.csv --metric pi" \
	  "email_multilabel.csv --metric augmented --p 0.5"; do \
	  echo "$$ ls-agreement compute examples/$$spec"; \
	  $(BIN)/ls-agreement compute examples/$$spec || exit $$?; \
	done

bench: $(STAMP)
	$(BIN)/python bench/alpha_vs_krippendorff.py

clean:
	rm -rf $(VENV) $(LS_VENV) build *.egg-info .hypothesis
