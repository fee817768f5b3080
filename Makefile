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

.PHONY: all build test race fuzz lint install uninstall bench clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

# The whole test suite, as CI runs it (README).
test: lint
	$(GO) test -race -count=1 -timeout 30m ./...

fuzz:
	$(GO) test ./preview -run '^$$' -fuzz FuzzRender -fuzztime $(FUZZTIME)
	$(GO) test ./preview -run '^$$' -fuzz FuzzKeeper -fuzztime $(FUZZTIME)
	$(GO) test ./redact -run '^$$' -fuzz FuzzChunking -fuzztime $(FUZZTIME)
	$(GO) test ./redact -run '^$$' -fuzz FuzzReference -fuzztime $(FUZZTIME)
	$(GO) test ./redact -run '^$$' -fuzz FuzzPlantedSecret -fuzztime $(FUZZTIME)
	$(GO) test ./redact -run '^$$' -fuzz FuzzTeddy -fuzztime $(FUZZTIME)

# gofmt, go vet, and staticcheck's unused-code check (U1000): dead code
# does not land.
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

bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./preview ./redact ./store ./wrap
	python3 bench/bench.py

clean:
	rm -f capwrap
