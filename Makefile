# Easel — two commands do everything on a fresh machine:
#   make run    check/install the build dependencies, build, open the window
#   make test   the same dependencies plus clang, then gofmt, go vet, the darwin type-check, go test
GO      ?= go
BIN     ?= easel
GOFILES  = $(shell find . -name '*.go' -not -path './testdata/*' -not -path './.git/*')
UNAME_S ?= $(shell uname -s)

.PHONY: run build test deps deps-test fmt-check vet darwin-check unit golden-variant bench clean app dmg linux-package screenshot screenshot-inpaint mac-check race screenshot-batch screenshot-studio

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
# darwin/arm64, cgo files included, without a Mac; and lints every call into darwinkit against
# darwinkit's own source (a wrapper that calls objc.WrapAsProtocol, a Release of an autoreleased
# object, a +1 object never released: internal/darwincheck/darwinkit.go).
darwin-check:
	$(GO) run ./tools/darwincheck -test ./...

# On Linux the Metal emulator tests must run, never skip (kernels/emu.RequiredEnv), and they run
# with EASEL_TEST_DEVICE=mixed (internal/testdevice): every device test that needs nothing only
# the emulator has sees it as `make mac-check` sees a Mac's GPU (the opaque device: no emulator
# type, no fault injection, no buffer counts, no tensor API), the others get the emulator itself;
# each test runs once. On a Mac the emulator does not run (it is linux/amd64) and `make mac-check`
# runs those tests on the GPU. The emulated packages (app/cli, engine/pipeline, qi21metal) run for
# minutes on 2 cores: a package is stopped after 60 minutes, not go test's default 10 (a hang
# guard, not a timing claim).
REQUIRE_EMULATOR = $(if $(filter Linux,$(UNAME_S)),EASEL_REQUIRE_EMULATOR=1 EASEL_TEST_DEVICE=mixed ,)
unit:
	$(REQUIRE_EMULATOR)$(GO) test -timeout 60m ./...

# The first run on a Mac's own GPU (tools/maccheck, docs/METAL.md "make mac-check"): the
# emulator's parity tests on the GPU, the self-test, one full-size 1024² step; writes
# mac-check-report.md to paste into an issue.
mac-check: deps build
	$(GO) run ./tools/maccheck -easel ./$(BIN) -out mac-check-report.md

# The race detector over the packages that coordinate goroutines and other processes and import
# no Fyne (no cgo rebuild of the window): the studio, the HTTP server and the job queue. -short
# leaves out their model-backed tests (make unit runs those), keeping the concurrency tests.
race:
	$(GO) test -race -short -count=1 ./app/studio/... ./app/serve/... ./app/jobs/...

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

screenshot-studio: deps
	@EASEL_SCENE=studio EASEL_STEPS=40 bash tools/screenshot.sh docs/screenshots/window-studio.png 8

# Packaging (packaging/package.sh): the .app and .dmg need a Mac; the Linux package builds anywhere.
app: deps
	@bash packaging/package.sh darwin

dmg: app
	@bash packaging/package.sh dmg

linux-package: deps
	@bash packaging/package.sh linux

clean:
	rm -rf $(BIN) Easel.app Easel-*.dmg Easel.tar.xz mac-check-report.md
