# verify-pods: `make demo` shows a verdict on the bundled sample; `make test` runs every test.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
# Where cargo builds: CARGO_TARGET_DIR when set (cargo's own rule), else target/.
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
RELEASE_BIN := $(TARGET_DIR)/release
# The tests' profile (Cargo.toml: release code without LTO); users get release.
TEST_PROFILE := --profile testing
DEMO_SNAPSHOT ?= samples/pods.json
DEMO_EVENTS ?= samples/events.json

.PHONY: demo test test-quick tools build generate check-generated install-check lint bench bless dist

demo: ## check the bundled sample snapshot (a red KWOK run) and show the verdict
	@echo "Building verify-pods (release); the first build takes minutes..."
	@$(CARGO) build --release --quiet -p verify-pods --bin verify-pods
	@echo "\$$ verify-pods check --snapshot $(DEMO_SNAPSHOT) --events $(DEMO_EVENTS)"
	@code=0; $(RELEASE_BIN)/verify-pods check --snapshot $(DEMO_SNAPSHOT) --events $(DEMO_EVENTS) || code=$$?; \
	  echo "(exit code $$code: 0 pass/empty, 1 validation failed, 2 could not observe)"; \
	  [ $$code -le 1 ]

tools: ## install the real tools the tests run (jq, shellcheck, kubectl, PyPI jq, actionlint) when missing
	@./hack/install-test-tools.sh

build: ## build every binary and test of the workspace in the tests' profile
	$(CARGO) build $(TEST_PROFILE) --workspace --all-targets

# generated/ freshness and shellcheck of generated/ run as tests
# (scriptgen/tests/check.rs, shellcheck.rs); hack/ is linted by `make lint`.
test: tools build ## every test: unit, CLI, golden, generated/ freshness, shellcheck, parity, live, race, install
	CARGO=$(CARGO) ./hack/run-tests.sh $(TEST_PROFILE)
	./hack/install-check.sh $(TARGET_DIR)

# The inner loop: every test target but the slow ones, from the same build
# (CONTRIBUTING.md states the measured times). make test stays the whole suite.
SLOW_TESTS := race
TEST_TARGETS := $(sort $(basename $(notdir $(wildcard cli/tests/*.rs scriptgen/tests/*.rs tests/tests/*.rs))))
QUICK_TESTS := $(filter-out $(SLOW_TESTS),$(TEST_TARGETS))

test-quick: tools build ## every test but race.rs: unit, CLI, golden, parity, live, faults
	$(CARGO) test $(TEST_PROFILE) --workspace --lib --bins $(addprefix --test ,$(QUICK_TESTS))

install-check: build ## cargo install --path cli into a temporary root; run verify-pods and kubectl verify-pods from there
	./hack/install-check.sh $(TARGET_DIR)

# Release archives (hack/dist.py): DIST_PROFILE=testing packages the tests'
# build instead of building release; DIST_TARGET=TRIPLE cross-targets (the
# release workflow builds each target on a runner of its own kind).
DIST_PROFILE ?= release
DIST_TARGET ?=
DIST_DIR ?= dist
dist: ## dist/verify-pods-vVERSION-TARGET.tar.gz, its .sha256, sha256.sum, the krew manifest verify-pods.yaml
	$(CARGO) build --locked --profile $(DIST_PROFILE) -p verify-pods --bins $(if $(DIST_TARGET),--target $(DIST_TARGET),)
	python3 hack/dist.py package --profile $(DIST_PROFILE) $(if $(DIST_TARGET),--target $(DIST_TARGET),) --target-dir $(TARGET_DIR) --out $(DIST_DIR)
	python3 hack/dist.py index --out $(DIST_DIR)

generate: ## rewrite generated/ from the canonical programs and templates
	$(CARGO) run $(TEST_PROFILE) --quiet -p scriptgen -- write

check-generated: ## fail with a diff when generated/ is stale
	$(CARGO) run $(TEST_PROFILE) --quiet -p scriptgen -- check

lint: ## cargo fmt, clippy -D warnings, shellcheck
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy $(TEST_PROFILE) --workspace --all-targets -- -D warnings
	shellcheck generated/*.sh hack/*.sh action/*.sh

bless: ## rewrite the golden files of tests/corpus from the checker's output (review the diff!)
	VERIFY_PODS_BLESS=1 $(CARGO) test $(TEST_PROFILE) -p verify-pods-tests --test golden

bench: ## instructions of the checker against the parse floor (bench/instructions.py, valgrind); checker, jq, generated bash, post-fix bash and cat on synthetic snapshots (BIG=1 adds 150k); then watch vs polling (bench/settle.py) and the workloads' cost (bench/workloads.py)
	$(CARGO) build --release --workspace
	python3 bench/instructions.py --target-dir $(TARGET_DIR)
	python3 bench/run.py $(if $(BIG),--big,)
	python3 bench/settle.py
	python3 bench/workloads.py --reps 5
