# capwrap — build, test, install. Variables may be overridden:
#   make install PREFIX=$HOME/.local    make install DESTDIR=/tmp/pkg PREFIX=/usr
# A fresh shell may not have Go on PATH yet: fall back to the official
# install location, for the build and for the tests that run go.
ifeq ($(shell command -v go 2>/dev/null),)
export PATH := $(PATH):/usr/local/go/bin
endif
GO      ?= go
GOFMT   ?= gofmt
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
BIN     ?= capwrap
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS ?= -s -w -X main.version=$(VERSION)
FUZZTIME ?= 30s
# The supported platforms (SPEC §11).
PLATFORMS ?= linux/amd64 linux/arm64 darwin/arm64 darwin/amd64 freebsd/amd64

.PHONY: all build test race fuzz lint install uninstall bench bench-go clean cross dist

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

# The whole test suite, as CI runs it (README). It builds no linter: make
# lint is separate (CI runs both).
test:
	$(GO) test -race -count=1 -timeout 30m ./...

fuzz:
	$(GO) test ./preview -run '^$$' -fuzz FuzzRender -fuzztime $(FUZZTIME)
	$(GO) test ./preview -run '^$$' -fuzz FuzzKeeper -fuzztime $(FUZZTIME)
	$(GO) test ./preview -run '^$$' -fuzz FuzzScanErrors -fuzztime $(FUZZTIME)
	$(GO) test ./redact -run '^$$' -fuzz FuzzChunking -fuzztime $(FUZZTIME)
	$(GO) test ./redact -run '^$$' -fuzz FuzzReference -fuzztime $(FUZZTIME)
	$(GO) test ./redact -run '^$$' -fuzz FuzzPlantedSecret -fuzztime $(FUZZTIME)
	$(GO) test ./redact/internal/match -run '^$$' -fuzz FuzzTeddy -fuzztime $(FUZZTIME)

# gofmt, go vet, and staticcheck's unused-code check (U1000): dead code
# does not land. go tool compiles staticcheck first (minutes with a cold
# build cache), which is why make test does not run this.
lint:
	@test -z "$$($(GOFMT) -l .)" || { $(GOFMT) -l .; exit 1; }
	$(GO) vet ./...
	$(GO) tool staticcheck -checks U1000 ./...

install: build
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/capwrap
	install -m 0644 man/capwrap.1 $(DESTDIR)$(MANDIR)/man1/capwrap.1
	install -m 0644 completions/capwrap.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/capwrap
	install -m 0644 completions/_capwrap $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_capwrap
	install -m 0644 completions/capwrap.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/capwrap.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/capwrap $(DESTDIR)$(MANDIR)/man1/capwrap.1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/capwrap \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_capwrap \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/capwrap.fish

# The one table of SPEC §9's targets (bench/bench.py: 2 to 3 minutes; its
# BENCH_* variables are described at its top). The Go microbenchmarks of
# every package are make bench-go (several minutes more).
bench: build
	python3 bench/bench.py

bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./preview ./redact ./store ./wrap ./internal/events

clean:
	rm -f capwrap

# Build and vet capwrap, and compile every package's tests, for every
# supported platform (the tests themselves run on Linux); and check that a
# Windows build fails with the message that says why.
cross:
	@set -e; for p in $(PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; echo "cross: $$p"; \
	  GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build -o /dev/null . ; \
	  GOOS=$$os GOARCH=$$arch $(GO) vet ./... ; \
	  for pkg in $$($(GO) list ./...); do GOOS=$$os GOARCH=$$arch $(GO) test -c -o /dev/null $$pkg ; done; \
	done
	@if GOOS=windows $(GO) build -o /dev/null . 2>/tmp/capwrap-windows.$$$$; then \
	  echo "cross: a Windows build succeeded; it must fail"; exit 1; fi; \
	  grep -q capwrap_builds_for_linux_darwin_and_freebsd_only /tmp/capwrap-windows.$$$$ \
	  || { cat /tmp/capwrap-windows.$$$$; echo "cross: a Windows build failed without saying why"; exit 1; }; \
	  rm -f /tmp/capwrap-windows.$$$$; echo "cross: windows refused, as it should be"

# Release binaries for every supported platform, and their SHA256SUMS.
dist:
	rm -rf dist && mkdir dist
	@set -e; for p in $(PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' \
	    -o dist/capwrap-$(VERSION)-$$os-$$arch . ; \
	  echo "dist/capwrap-$(VERSION)-$$os-$$arch"; done
	cd dist && sha256sum capwrap-* > SHA256SUMS && cat SHA256SUMS
