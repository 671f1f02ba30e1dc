# the-loop — `just` lists the recipes. Without just installed, `npx -y rust-just <recipe>`
# runs the same (recipes call just as {{just_executable()}}, never by name).

set shell := ["bash", "-euo", "pipefail", "-c"]

# The linters just lint installs into bin/tools (go install, pinned).
staticcheck_version := "v0.8.2"
govulncheck_version := "v1.9.0"
# GoReleaser, which just release installs into bin/tools (go install, pinned).
goreleaser_version := "v2.15.1"

# List the recipes.
default:
    @{{just_executable()}} --list

# Build the binaries into bin/: the-loop (the CLI, without the service) and, beside it, the service's program the-loopd and the hook program the-loop-hook (static, cgo off: they start faster and smaller; stamped with the commit for --version when git is there, .ci/commit).
build:
    CGO_ENABLED=0 go build -tags loop_omit_service -ldflags "-X github.com/the-loop-dev/the-loop.buildCommit=$(.ci/commit)" -o bin/the-loop ./cmd/the-loop
    CGO_ENABLED=0 go build -ldflags "-X github.com/the-loop-dev/the-loop.buildCommit=$(.ci/commit)" -o bin/the-loopd ./cmd/the-loop
    CGO_ENABLED=0 go build -o bin/the-loop-hook ./cmd/the-loop-hook

# Run every test: the unit and integration tests, then the end-to-end part against the real Claude Code, Codex and Gemini CLIs (installed into the cache when missing).
test: unit e2e

# Every test but the end-to-end part (race detector on; real tmux on private servers; a hang fails after 20 minutes; anything the tests leave in their TMPDIR fails it, .ci/no-leftovers).
unit: tmux
    .ci/no-leftovers go test -race -count=1 -timeout 20m $(go list ./... | grep -v '/e2e$')

# The end-to-end part: the real Claude Code, Codex and Gemini CLIs (installed into the cache when missing: just agents) driven offline through the-loop against fake APIs; fails, not skips, when one cannot be had.
e2e: agents tmux
    THE_LOOP_E2E=1 .ci/no-leftovers go test -race -count=1 -timeout 8m ./e2e/...

# Install every agent CLI the end-to-end part drives into ${XDG_CACHE_HOME:-~/.cache}/the-loop (outside the checkout) unless it is there; needs npm and Node.js 20 or newer (.ci/agent-cli says why 22 prints no warning).
agents: claude-code
    .ci/agent-cli codex @openai/codex 0.171.0 codex THE_LOOP_CODEX_BIN
    .ci/agent-cli gemini @google/gemini-cli 0.61.0 gemini THE_LOOP_GEMINI_BIN

# Install Claude Code 2.1.332 from npm into ${XDG_CACHE_HOME:-~/.cache}/the-loop/claude-code (outside the checkout) unless it is there.
claude-code:
    .ci/agent-cli claude-code @anthropic-ai/claude-code 2.1.332 claude THE_LOOP_CLAUDE_BIN

# gofmt (fails on any file it would change), go vet, staticcheck and govulncheck (skipped, passing, when its database cannot be reached).
lint:
    @out="$(gofmt -l .)"; if [ -n "$out" ]; then echo "gofmt would change:"; echo "$out"; exit 1; fi
    go vet ./...
    GOBIN="$PWD/bin/tools" go install honnef.co/go/tools/cmd/staticcheck@{{staticcheck_version}}
    GOBIN="$PWD/bin/tools" go install golang.org/x/vuln/cmd/govulncheck@{{govulncheck_version}}
    bin/tools/staticcheck ./...
    bin/tools/staticcheck -tags loop_omit_service -tests=false ./cmd/the-loop
    .ci/vulncheck bin/tools/govulncheck ./...

# Cross-build and vet for macOS (amd64, arm64) and Linux arm64, cgo off.
cross:
    #!/usr/bin/env bash
    set -euo pipefail
    for target in darwin/amd64 darwin/arm64 linux/arm64; do
        echo "cross: GOOS=${target%/*} GOARCH=${target#*/}"
        GOOS="${target%/*}" GOARCH="${target#*/}" CGO_ENABLED=0 go vet ./...
        GOOS="${target%/*}" GOARCH="${target#*/}" CGO_ENABLED=0 go build ./...
        GOOS="${target%/*}" GOARCH="${target#*/}" CGO_ENABLED=0 go build -tags loop_omit_service -o /dev/null ./cmd/the-loop
    done

# Go benchmarks: the speed and memory targets of the issues.
bench:
    go test -p 1 -run '^$' -bench . -benchmem -count=1 ./...

# A snapshot release into dist/ with GoReleaser (.goreleaser.yaml; no tag needed): archives for linux and darwin on amd64 and arm64, checksums, .deb and .rpm, and a Homebrew formula; versioned after the CHANGELOG's newest release.
release:
    #!/usr/bin/env bash
    set -euo pipefail
    GOBIN="$PWD/bin/tools" go install github.com/goreleaser/goreleaser/v2@{{goreleaser_version}}
    version="$(sed -nE 's/^## \[([0-9]+\.[0-9]+\.[0-9]+)\].*/\1/p' CHANGELOG.md | head -n 1)"
    [ -n "$version" ] || { echo "CHANGELOG.md has no release heading (## [x.y.z] - date) to version the snapshot after" >&2; exit 1; }
    THE_LOOP_VERSION="$version" THE_LOOP_COMMIT="$(.ci/commit)" bin/tools/goreleaser release --snapshot --clean

# Install tmux where apt-get runs as root; otherwise fail naming the command to run (.ci/need-tmux).
tmux:
    @.ci/need-tmux

# Start the-loop (service and standing sessions) on the example config with the stand-in agent; `just run real=1` (or THE_LOOP_REAL_AGENT=1) runs the real Claude Code instead, and `just run FILE` another config.
run *args: build tmux
    #!/usr/bin/env bash
    set -euo pipefail
    config=examples/cli-config.yaml
    real="${THE_LOOP_REAL_AGENT:-0}"
    for a in {{args}}; do
        case "$a" in
            real=*) real="${a#real=}" ;;
            config=*) config="${a#config=}" ;;
            *) config="$a" ;;
        esac
    done
    if [ "$real" = 1 ]; then
        cached="${XDG_CACHE_HOME:-$HOME/.cache}/the-loop/claude-code/2.1.332/bin"
        if ! command -v claude >/dev/null && [ -x "$cached/claude" ]; then export PATH="$cached:$PATH"; fi
        if ! command -v claude >/dev/null; then
            echo "real=1 asks for the real Claude Code, but claude is not on PATH: run \`{{just_executable()}} claude-code\` (installs it into $cached) or install it, or drop real=1 for the stand-in" >&2
            exit 1
        fi
        echo "agent: the real Claude Code ($(command -v claude)): it bills the account it is logged in to and works in the session's cwd in this checkout; the-loop writes trust for that directory into Claude Code's config (~/.claude.json)"
    else
        mkdir -p bin/demo .the-loop/demo-agent
        go build -o bin/demo/fakeagent ./internal/fakeagent
        printf '#!/bin/sh\nFAKE_AGENT_DIR=%s exec %s "$@"\n' "$PWD/.the-loop/demo-agent" "$PWD/bin/demo/fakeagent" > bin/demo/claude
        chmod +x bin/demo/claude
        export PATH="$PWD/bin/demo:$PATH"
        echo "agent: the stand-in (bin/demo/claude, internal/fakeagent: no account, no model); \`{{just_executable()}} run real=1\` runs the real Claude Code"
    fi
    ./bin/the-loop -c "$config" start
    ./bin/the-loop -c "$config" status
    echo "talk to it: ./bin/the-loop -c $config standing say supervisor --text 'hello'; stop it all: ./bin/the-loop -c $config stop"

# Screenshots of the dashboard (overview, a session, the events) at 1280×800 and 390×844 into docs/img/, taken in headless Chromium.
screenshots:
    mkdir -p docs/img
    THE_LOOP_SCREENSHOTS="$PWD/docs/img" go test -count=1 -run '^TestDashboard_Screenshots$' -v ./cmd/the-loop
