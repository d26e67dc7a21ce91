# Two commands on a fresh machine with Python 3.11: `make demo` and `make test`.
# Each creates .venv and installs what it needs into it.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

test: $(STAMP)
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
	rm -rf $(VENV) build *.egg-info .hypothesis
