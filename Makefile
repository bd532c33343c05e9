# Every target creates the virtualenv from pyproject.toml when it is missing or stale.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
AGENTS_DIR := .agents
AGENTS_STAMP := $(AGENTS_DIR)/.installed-stamp
AGENTS_LOCK := tests/coding_agents/npm/package-lock.json

.PHONY: install agents test lint format dump_app_schema check_schema docs run serve bench

$(STAMP): pyproject.toml
	@echo "installing agent-hooks and its dependencies into $(VENV)/ (pip; a minute or two the first time)"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,integrations,fast]'
	touch $(STAMP)

# The coding agents tests/coding_agents runs through serve (Claude Code, Codex, opencode), pinned
# by tests/coding_agents/npm/package-lock.json, into the git-ignored .agents/ (about 1 GB).
# npm install, not npm ci: ci refuses a lock that lacks an optional platform package the registry
# did not serve when it was written (opencode's darwin/windows/arm builds); versions stay exact.
$(AGENTS_STAMP): tests/coding_agents/npm/package.json $(AGENTS_LOCK)
	@echo "installing the pinned agents of tests/coding_agents into $(AGENTS_DIR)/ (npm install)"
	@mkdir -p $(AGENTS_DIR)
	@cp tests/coding_agents/npm/package.json $(AGENTS_LOCK) $(AGENTS_DIR)/
	@cd $(AGENTS_DIR) && npm install --no-audit --no-fund --loglevel=error >/dev/null
	@touch $(AGENTS_STAMP)

agents: $(AGENTS_STAMP)

install: $(STAMP) $(AGENTS_STAMP)

test: install
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests examples bench
	$(BIN)/ruff format --check src tests examples bench
	$(BIN)/mypy src

format: $(STAMP)
	$(BIN)/ruff check --fix src tests examples bench
	$(BIN)/ruff format src tests examples bench

dump_app_schema: $(STAMP)
	ENABLE_PREVIEW_FEATURES=true $(BIN)/agent-hooks schema > generated-app-schema.json

# Fails when generated-app-schema.json no longer matches the models, or docs/manifest.md the schema.
check_schema: $(STAMP)
	ENABLE_PREVIEW_FEATURES=true $(BIN)/agent-hooks schema | diff -u generated-app-schema.json - \
		|| (echo "generated-app-schema.json is stale: run 'make dump_app_schema'" >&2; exit 1)
	$(BIN)/python -m agent_hooks.config._reference_docs generated-app-schema.json docs/manifest.md --check

# Regenerates the reference section of docs/manifest.md from generated-app-schema.json.
docs: $(STAMP)
	$(BIN)/python -m agent_hooks.config._reference_docs generated-app-schema.json docs/manifest.md

# UC-1: the memory-app manifest spawns the example MCP server over stdio ("command": "python",
# found first on PATH in the virtualenv) and injects its memories into the history.
run: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" ENABLE_PREVIEW_FEATURES=true \
		$(BIN)/agent-hooks --verbose run examples/memory-app/manifest.json \
		--messages examples/memory-app/history.json

# The hooks proxy on http://127.0.0.1:8080/v1 with the embedded echo model (no --upstream): point
# any OpenAI client at it and the answer lists the synthetic pairs the model would have seen.
serve: $(STAMP)
	ENABLE_PREVIEW_FEATURES=true $(BIN)/agent-hooks --verbose serve examples/serve/manifest.json

bench: $(STAMP)
	$(BIN)/python bench/bench_injection.py
	$(BIN)/python bench/bench_toolsets.py
	$(BIN)/python bench/bench_runtime.py
	$(BIN)/python bench/bench_serve.py
	$(BIN)/python bench/bench_integrations.py
