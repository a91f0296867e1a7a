# The README's commands. `make test` runs .ci/run, exactly what CI runs: it
# installs what the tests need on a fresh machine (every step is skipped
# when already done), checks gofmt, vet and staticcheck, runs the Go and the
# Python (pytest) tests and checks that the shipped figures are the build's
# (papers/figures.sh --check). `make fuzz` fuzzes every parser and decoder,
# 10 s each (FUZZTIME=1m for longer), beyond the seed inputs the tests run.
.PHONY: test demo fuzz

FUZZTIME ?= 10s

test:
	bash .ci/run

demo:
	go run ./cmd/cclab run satcom-uhf

fuzz:
	bash .ci/fuzz -t $(FUZZTIME)
