# Easel — two commands do everything on a fresh machine:
#   make run    check/install the build dependencies, build, open the window
#   make test   the same dependencies plus clang, then gofmt, go vet, the darwin type-check, go test
GO      ?= go
BIN     ?= easel
GOFILES  = $(shell find . -name '*.go' -not -path './testdata/*' -not -path './.git/*')

.PHONY: run build test deps deps-test fmt-check vet darwin-check unit golden-variant bench clean app dmg linux-package screenshot screenshot-inpaint screenshot-batch

run: deps build
	./$(BIN)

build:
	$(GO) build -o $(BIN) .

test: deps-test fmt-check vet darwin-check unit

deps:
	@bash tools/deps.sh run

deps-test:
	@bash tools/deps.sh test

fmt-check:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; echo "run: gofmt -w ."; exit 1; fi

vet:
	$(GO) vet ./...

# Type-checks every package (tests included) and the darwinkit/Fyne code it imports for
# darwin/arm64, cgo files included, without a Mac.
darwin-check:
	$(GO) run ./tools/darwincheck -test ./...

# The Metal emulator tests must run here, never skip (kernels/emu.RequiredEnv). The emulated
# packages (app/cli, engine/pipeline, qi21metal) run for minutes on 2 cores: a package is
# stopped after 60 minutes, not go test's default 10 (a hang guard, not a timing claim).
unit:
	EASEL_REQUIRE_EMULATOR=1 $(GO) test -timeout 60m ./...

# Every test that reads reference cases, against folders built from the public cases (cases
# dropped and renamed, no debug/): EASEL_GOLDEN_DIR must work on any folder in the format.
golden-variant: deps-test
	@bash tools/goldenvariant.sh

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./engine/...

# The real window under Xvfb on the tiny model, captured mid-generation (shown in the README).
screenshot: deps
	@bash tools/screenshot.sh docs/screenshot.png

screenshot-inpaint: deps
	@EASEL_SCENE=inpaint bash tools/screenshot.sh docs/screenshots/window-inpaint.png

screenshot-batch: deps
	@EASEL_SCENE=batch EASEL_STEPS=8 bash tools/screenshot.sh docs/screenshots/window-batch.png 40
	@EASEL_SCENE=gallery EASEL_STEPS=8 bash tools/screenshot.sh docs/screenshots/window-gallery.png 40

# Packaging (packaging/package.sh): the .app and .dmg need a Mac; the Linux package builds anywhere.
app: deps
	@bash packaging/package.sh darwin

dmg: app
	@bash packaging/package.sh dmg

linux-package: deps
	@bash packaging/package.sh linux

clean:
	rm -rf $(BIN) Easel.app Easel-*.dmg Easel.tar.xz
