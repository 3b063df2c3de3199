# The two commands of the README: `make book` and `make test`. Both set everything up on a new machine.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := book

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NOTEBOOKS := $(shell find book -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*' | sort)
CJK_FONT := /usr/share/fonts/truetype/wqy/wqy-microhei.ttc
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# The package tests and nbval run on every core (pytest-xdist), each test file (each notebook) on one worker.
XDIST := -n auto --dist loadfile
APT_INSTALL := $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends

# `make book PRICES=file` points every page at another price file (and rebuilds everything); the path may hold spaces.
WITH_PRICES := $(if $(PRICES),MULTIGPU_PRICES='$(PRICES)')

.PHONY: book pdf report bench test test-package test-notebooks test-site setup font browser notebooks i18n clean

## book: set up, check the price file, build the whole site from scratch into _build/.next (any warning is
## an error), print each edition's PDFs (the book and its decision card) with Chromium, and only then replace
## _build/html; a bad price file or a failed build leaves the old site as it was
book: setup browser
	$(WITH_PRICES) $(PY) -m multigpu.book.build $(BOOK_FLAGS) $(VENV)/bin/jupyter-book

## pdf: print the PDFs again from the built site (_build/html/pdf, _build/html/zh/pdf)
pdf: setup browser
	$(PY) -m multigpu.book.pdf

## report: every price-dependent table of the book for PRICES (default: the packaged file) as CSV and XLSX
report: setup
	$(WITH_PRICES) $(PY) -m multigpu report --out _build/report

## bench: time two clean builds of the book and the report (cold and warm), and check the builds are identical
bench: setup
	$(PY) -m multigpu.book.bench

## test: set up, then package tests, nbval over every notebook, the site build and the site check; every phase
## shares one memo of layout searches (exact: keyed by every argument, the model's code and its data files).
## The site is built from the notebooks' stored outputs, which nbval has just compared with a fresh run of each
## (so no notebook runs twice; `make book` runs them all)
test: export MULTIGPU_SEARCH_CACHE = $(CURDIR)/_build/test-searches
test: setup browser
	$(MAKE) --no-print-directory test-package
	$(MAKE) --no-print-directory test-notebooks
	$(MAKE) --no-print-directory book BOOK_FLAGS=--stored-outputs
	$(MAKE) --no-print-directory test-site

test-package: setup
	PYTHONPATH=src $(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest tests --ignore=tests/website -q $(XDIST)

test-notebooks: setup
	$(if $(NOTEBOOKS),$(PY) -m pytest -q -p no:cacheprovider --nbval --nbval-current-env $(XDIST) $(NOTEBOOKS),@echo "no notebooks in book/")

test-site: setup browser
	$(PY) -m pytest tests/website -q -p no:cacheprovider -n auto --dist load

## setup: the virtual environment with pinned requirements and the package, and a CJK font
setup: $(STAMP) font

$(STAMP): requirements.txt pyproject.toml
	[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

font:
	@[ -f $(CJK_FONT) ] || { echo "installing a CJK font (fonts-wqy-microhei) ..."; $(APT_INSTALL) fonts-wqy-microhei; }

browser:
	@command -v chromium >/dev/null || { echo "installing Debian's chromium for the site check ..."; $(APT_INSTALL) chromium; }

## i18n: refresh the Chinese edition's catalogs from the pages and from the messages of src/multigpu/book/*.py (the
## notebooks' computed text; new messages arrive untranslated; `python -m multigpu.book.i18n check` lists them)
i18n: setup
	$(PY) -m multigpu.book.i18n update

## notebooks: execute every chapter in place (commit the result; nbval compares stored outputs)
notebooks: setup
	$(PY) -m multigpu.book.tools execute $(NOTEBOOKS)

clean:
	rm -rf _build
