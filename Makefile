# The README's commands. `make test` is what CI runs (.ci/run): it installs
# what the tests need on a fresh machine (Debian packages and the Python
# package with its pinned dependencies; every step is skipped when already
# done), then runs the Go and the Python tests.
.PHONY: test setup test-go test-python demo

test: setup test-go test-python

setup:
	@for s in .ci/setup-*.sh; do echo "== $$s"; bash "$$s" || exit 1; done

# The emulator's tests measure real time (rate within 1%, delay within
# 1 ms), so they run after the rest, one package at a time, not beside
# compilations and other tests.
test-go:
	go test $$(go list ./... | grep -v 'cclab/cclab/emu')
	go test -p 1 ./emu/...

test-python:
	@if [ -x python/run-tests.sh ]; then python/run-tests.sh; else echo "no Python tests"; fi

demo:
	go run ./cmd/cclab run satcom-uhf
