# Two commands for a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DIR := var/demo
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: demo test test-postgres install install-runtime system-deps lint typecheck pytest serve bench clean

RUNTIME := $(VENV)/.runtime

# `make demo` needs the app alone: the runtime package, nothing the tests need. Each step
# says what it does; pip's own progress shows while it downloads.
$(RUNTIME): pyproject.toml
	@echo "[1/2] making the virtual environment $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	@echo "[2/2] installing MedBanana Review and what it runs on (about a minute on a fresh machine)"
	$(BIN)/pip install --progress-bar on -e .
	touch $(RUNTIME)

# `make test`: the runtime, then the tools and the reference code the suite needs, and the
# Debian packages (Chromium, PostgreSQL, Boost's headers).
$(STAMP): pyproject.toml $(RUNTIME)
	@echo "installing the test tools into $(VENV) (a minute or two on a fresh machine)"
	$(BIN)/pip install --quiet -e '.[dev]'
	# The confidence sequences are held to confseq (tests/test_confidence_sequence.py). Its
	# release pins a pybind11 that does not build on Python 3.11, so it is built against the
	# current one, without build isolation; it needs Boost's headers (system-deps).
	$(MAKE) --no-print-directory system-deps
	$(BIN)/pip install --quiet scikit-build cmake pybind11
	$(BIN)/pip install --quiet --no-build-isolation confseq==0.0.11
	touch $(STAMP)

install: $(STAMP)
install-runtime: $(RUNTIME)

# Debian packages the browser, PostgreSQL and DICOM tests need (dciodvfy, dcmdump, Orthanc
# with its DICOMweb plugin); installed only when missing.
system-deps:
	@need=""; \
	[ -x /usr/bin/chromium ] || need="$$need chromium"; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need="$$need postgresql"; \
	[ -d /usr/share/fonts/truetype/dejavu ] || need="$$need fonts-dejavu-core"; \
	[ -d /usr/include/boost ] || need="$$need libboost-dev"; \
	[ -x /usr/bin/dciodvfy ] || need="$$need dicom3tools"; \
	[ -x /usr/bin/dcmdump ] || need="$$need dcmtk"; \
	[ -x /usr/sbin/Orthanc ] || need="$$need orthanc"; \
	[ -f /usr/share/orthanc/plugins/libOrthancDicomWeb.so ] || need="$$need orthanc-dicomweb"; \
	if [ -n "$$need" ]; then \
	  echo "installing:$$need"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$need; \
	fi

demo: $(RUNTIME)
	rm -rf $(DEMO_DIR)
	@echo "making the synthetic demo data in $(DEMO_DIR)"
	$(BIN)/medbanana demo-data $(DEMO_DIR)
	$(BIN)/medbanana import $(DEMO_DIR)/run --source $(DEMO_DIR)/source
	MEDBANANA_DEMO=true $(BIN)/medbanana demo-users
	@echo "Serving on http://$(HOST):$(PORT)/cases (synthetic demo data)"
	MEDBANANA_DEMO=true $(BIN)/medbanana serve --host $(HOST) --port $(PORT)

serve: $(RUNTIME)
	MEDBANANA_DEMO=true $(BIN)/medbanana serve --host $(HOST) --port $(PORT)

lint: install
	$(BIN)/ruff check app pipeline tests benchmarks migrations
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy

# pytest exits 5 when it collects nothing: a broken suite, never a pass.
pytest: install system-deps
	@$(BIN)/pytest $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$status

test: lint typecheck pytest

# Only the tests that run against a real PostgreSQL server (started by the test setup).
test-postgres: install system-deps
	@$(BIN)/pytest -m postgres $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no PostgreSQL tests" >&2; exit 1; fi; exit $$status

bench: install
	$(BIN)/python benchmarks/import_scale.py
	$(BIN)/python benchmarks/pages.py
	$(BIN)/python benchmarks/reading.py
	$(BIN)/python benchmarks/agreement.py
	$(BIN)/python benchmarks/coverage.py --datasets 2000
	$(BIN)/python benchmarks/pipeline.py
	$(BIN)/python benchmarks/metrics.py
	$(BIN)/python benchmarks/case_paint.py
	$(BIN)/python benchmarks/quota_run.py
	$(BIN)/python benchmarks/workers.py
	$(BIN)/python benchmarks/quality.py
	$(BIN)/python benchmarks/quality_coverage.py
	$(BIN)/python benchmarks/exports.py
	$(BIN)/python benchmarks/real_or_edited.py
	$(BIN)/python benchmarks/real_or_edited_coverage.py --simulations 2000
	$(BIN)/python benchmarks/sequential_coverage.py --studies 2000
	$(BIN)/python benchmarks/adaptive_design.py --studies 200
	$(BIN)/python benchmarks/coverage.py --model readers --datasets 2000 --images 25
	$(BIN)/python benchmarks/coverage.py --model readers --datasets 2000 --images 100

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
