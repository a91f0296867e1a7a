# The README's commands. `make test` runs .ci/run, exactly what CI runs: it
# installs what the tests need on a fresh machine (every step is skipped
# when already done), checks gofmt, vet and staticcheck, and runs the Go and the Python
# (pytest) tests.
.PHONY: test demo

test:
	bash .ci/run

demo:
	go run ./cmd/cclab run satcom-uhf
