# fabricd: `make demo` shows the whole loop on the embedded lab fabric; `make test` runs every check.
# Both create .venv and install what they need (Debian packages too, when run as root).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# `make demo` installs only what the demo runs (fabricd and fabricd-lab, editable), not the development tools of
# `make test` ([dev]: mypy, ruff, pyavd, the schema validators...). Same .venv: a later `make test` adds [dev].
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: demo test lint unit bench sysdeps libyang wheel-smoke clean help

help:
	@echo "make demo   - run the whole loop on inventory/lab (starts and stops everything it needs)"
	@echo "make test   - ruff, mypy --strict, import-linter contracts, vulture and pytest (every tier, in random order)"
	@echo "make unit   - the unit tier: no root, no sockets, no subprocesses, under a minute (pytest --unit), in random order"
	@echo "make lint   - ruff, mypy, import-linter and vulture (dead code) only"
	@echo "make bench  - run every benchmark in bench/ (ratios against anchors measured in the same run)"
	@echo "make wheel-smoke - build both wheels, install them in a fresh venv, run fabricd outside the source tree"

$(STAMP): pyproject.toml lab/pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "fabricd needs Python >= 3.11"; exit 2; }
	@[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV) || { scripts/sysdeps.sh test; $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]' -e ./lab
	@touch $(STAMP)

$(DEMO_STAMP): pyproject.toml lab/pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "fabricd needs Python >= 3.11"; exit 2; }
	@[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV) || { scripts/sysdeps.sh demo; $(PYTHON) -m venv $(VENV); }
	@if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ] && [ $(STAMP) -nt lab/pyproject.toml ]; then :; else \
	  $(BIN)/python -m pip install -q -e . -e ./lab; fi
	@touch $(DEMO_STAMP)

sysdeps:
	@scripts/sysdeps.sh test

# libyang 3.12.2 + its Python bindings 3.1.0 (SONiC's YANG validator) for tests/conformance/test_sonic_yang.py;
# builds once into build/libyang3 (about 25 s), then a no-op. See the script's header.
libyang: $(STAMP)
	@scripts/libyang.sh

lint: $(STAMP)
	$(BIN)/ruff check fabricd lab/fabricd_lab tests bench scripts
	$(BIN)/ruff format --check fabricd lab/fabricd_lab tests bench scripts
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/vulture

# In random order (pytest-randomly), as `make unit`: the seed is printed and `make test RANDOMLY_SEED=N` replays it
# (`RANDOMLY_SEED=off`: file order). Every tier passed shuffled (seed 7301: 3,507 passed; docs/ARCHITECTURE.md, Tests).
test: sysdeps $(STAMP) libyang lint
	@seed="$(RANDOMLY_SEED)"; seed=$${seed:-$$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}; \
	  if [ "$$seed" = off ]; then order="-p no:randomly"; else order="-p randomly --randomly-seed=$$seed"; \
	    echo "every tier in random order (make test RANDOMLY_SEED=$$seed replays it)"; fi; \
	  $(BIN)/python -m pytest -q $$order; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; exit 1; fi; exit $$rc
	@scripts/wheel_smoke.sh $(PYTHON)

# Both wheels (fabricd, fabricd-lab) built, installed in a fresh venv and run from outside the source tree.
wheel-smoke: sysdeps
	@scripts/wheel_smoke.sh $(PYTHON)

# The unit tier (tests/conftest.py): leaves out tests marked integration, netns, vm or slow, and fails any other test
# that opens a socket or starts a process. Runs as any user; writes no .pytest_cache. In random order (pytest-randomly):
# the seed is printed first; RANDOMLY_SEED=N replays that order, RANDOMLY_SEED=off keeps file order.
RANDOMLY_SEED ?=
unit: $(STAMP)
	@seed="$(RANDOMLY_SEED)"; seed=$${seed:-$$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}; \
	  if [ "$$seed" = off ]; then order="-p no:randomly"; else order="-p randomly --randomly-seed=$$seed"; \
	    echo "unit tier in random order (make unit RANDOMLY_SEED=$$seed replays it)"; fi; \
	  $(BIN)/python -m pytest -q --unit -p no:cacheprovider $$order; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; exit 1; fi; exit $$rc

# validate, render, push, host apply + audit, export into Prometheus, a PFC storm, verbs traffic: `fabricd demo --help`
demo: $(DEMO_STAMP)
	@scripts/sysdeps.sh demo
	$(BIN)/fabricd demo

bench: $(STAMP)
	@scripts/sysdeps.sh bench
	@$(BIN)/python -m pip install -q -e '.[dev,bench]' -e ./lab
	@set -e; for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b; done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache build dist *.egg-info lab/dist
