# The two set-up commands of the README: `make demo` and `make test`. Both install what is missing first.
.PHONY: demo test test-quick fault-test bench build deb deb-test lint format check-imports clean

demo:
	bash scripts/demo.sh

test:
	bash scripts/test.sh

# The edit loop: the build and the unit suites only (no broker, database server, browser, hub or agent started).
test-quick:
	bash scripts/test.sh --quick

# The long round of the fault tests (hub killed 50 times, broker 10 + 10 times, broker security); `make test` runs a
# shorter round of the same tests.
fault-test:
	bash scripts/fault-test.sh

bench:
	bash scripts/setup.sh
	swift build -c release
	$$(swift build -c release --show-bin-path)/beacon-bench mqtt
	$$(swift build -c release --show-bin-path)/beacon-bench decode
	bash scripts/instructions.sh
	$$(swift build -c release --show-bin-path)/beacon-bench batch-decode
	$$(swift build -c release --show-bin-path)/beacon-bench agent
	$$(swift build -c release --show-bin-path)/beacon-bench engine
	$$(swift build -c release --show-bin-path)/beacon-bench hub
	$$(swift build -c release --show-bin-path)/beacon-bench store

# beacon-agent_VERSION_ARCH.deb and beacon-hub_VERSION_ARCH.deb in dist/ (docs/operations.md, "Installing by package").
deb:
	bash scripts/setup.sh
	bash scripts/make-deb.sh

# The packages installed into a clean Debian 12 root (debootstrap, cached), checked and purged; part of `make test`.
deb-test:
	bash scripts/setup.sh
	bash scripts/deb-test.sh

build:
	bash scripts/setup.sh
	swift build

lint:
	swift format lint --strict --recursive Package.swift Sources Tests

format:
	swift format --in-place --recursive Package.swift Sources Tests

check-imports:
	bash scripts/check-c-imports.sh
	bash scripts/check-engine-model.sh

clean:
	rm -rf .build run dist
