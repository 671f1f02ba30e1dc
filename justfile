# the-loop — `just` lists the recipes.

set shell := ["bash", "-euo", "pipefail", "-c"]

# List the recipes.
default:
    @just --list

# Build the binary into bin/the-loop.
build:
    go build -o bin/the-loop ./cmd/the-loop

# Run every test (race detector on; real tmux on private servers).
test:
    go test -race -count=1 -timeout 5m ./...

# gofmt (fails on any file it would change) and go vet.
lint:
    @out="$(gofmt -l .)"; if [ -n "$out" ]; then echo "gofmt would change:"; echo "$out"; exit 1; fi
    go vet ./...

# Cross-build and vet for macOS (amd64, arm64) and Linux arm64, cgo off.
cross:
    #!/usr/bin/env bash
    set -euo pipefail
    for target in darwin/amd64 darwin/arm64 linux/arm64; do
        echo "cross: GOOS=${target%/*} GOARCH=${target#*/}"
        GOOS="${target%/*}" GOARCH="${target#*/}" CGO_ENABLED=0 go vet ./...
        GOOS="${target%/*}" GOARCH="${target#*/}" CGO_ENABLED=0 go build ./...
    done

# Go benchmarks: the speed and memory targets of the issues.
bench:
    go test -p 1 -run '^$' -bench . -benchmem -count=1 ./...

# Start the-loop (service and standing sessions) on the example config (a stand-in agent is used when `claude` is not installed).
run config="examples/cli-config.yaml": build
    #!/usr/bin/env bash
    set -euo pipefail
    if ! command -v claude >/dev/null; then
        mkdir -p bin/demo
        go build -o bin/demo/fakeagent ./internal/fakeagent
        mkdir -p .the-loop/demo-agent
        printf '#!/bin/sh\nFAKE_AGENT_DIR=%s exec %s "$@"\n' "$PWD/.the-loop/demo-agent" "$PWD/bin/demo/fakeagent" > bin/demo/claude
        chmod +x bin/demo/claude
        export PATH="$PWD/bin/demo:$PATH"
        echo "claude is not installed: using the stand-in agent in bin/demo/claude"
    fi
    ./bin/the-loop -c {{config}} start
    ./bin/the-loop -c {{config}} status
    echo "talk to it: ./bin/the-loop -c {{config}} standing say supervisor --text 'hello'; stop it all: ./bin/the-loop -c {{config}} stop"
