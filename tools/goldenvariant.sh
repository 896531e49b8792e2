#!/usr/bin/env bash
# Runs the reference tests against folders of cases that are not testdata/golden, as
# EASEL_GOLDEN_DIR allows: tools/goldenvariant builds them from the public cases (cases dropped and
# renamed into another order, two DiT cases, no case without CFG, renamed condition images and
# snapshot folder; see its doc comment).
#   1. no debug/ at all: every test of every package that reads reference cases must pass (stage
#      tests log that there is nothing to compare and skip);
#   2. debug/ with only the VAE's stages, pointed at the renamed case: the VAE stage test must run
#      and pass, the text-encoder and DiT stage tests skip;
#   3. a single pipeline case with CFG 1 and no condition images (-pipeline cfg1): every test of
#      the packages that read pipeline cases must pass, and none may skip for lack of a case (tests
#      of behaviour build their own CFG requests; reference tests read whatever cases there are).
# Skipped tests are listed with their reasons. Usage: bash tools/goldenvariant.sh   (make golden-variant)
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d "${TMPDIR:-/tmp}/easel-golden-variant.XXXXXX")
trap 'rm -rf "$work"' EXIT
go run ./tools/goldenvariant "$work/no-debug"
go run ./tools/goldenvariant -keep-debug vae "$work/vae-debug"
go run ./tools/goldenvariant -pipeline cfg1 "$work/cfg1"

# Every package whose tests import easel/internal/golden.
pkgs=$(go list -f '{{.ImportPath}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}' ./... |
	awk '{for (i = 2; i <= NF; i++) if ($i == "easel/internal/golden") { print $1; break }}')
[ -n "$pkgs" ] || { echo "goldenvariant: no package reads the reference cases?" >&2; exit 1; }

report() { # log: list the skipped tests with their reasons, then the package results
	grep -B1 -- '--- SKIP' "$1" | grep -v '^--$' | sed 's/^/  /' || true
	grep -E '^(ok|FAIL|--- FAIL|panic)' "$1" || true
}

echo "golden variant 1: no debug/ ($work/no-debug), $(echo "$pkgs" | wc -l) packages"
status=0
# The soak tests (app/jobs), the kill-and-resume tests and the studio's worker-process tests
# (app/cli) read only the model snapshot (converted once by tinyCMF), which many other tests there
# read too, and no case; they run in make test and would add minutes here for nothing new.
snapshotOnly='^(TestSoak|TestGenerateKilledResumesExactly|TestEmuGenerateKilledResumesExactly|TestStudio)'
EASEL_GOLDEN_DIR="$work/no-debug" EASEL_REQUIRE_EMULATOR=1 go test -count=1 -timeout 40m -v -skip "$snapshotOnly" $pkgs >"$work/no-debug.log" 2>&1 || status=$?
report "$work/no-debug.log"
if [ "$status" -ne 0 ]; then
	grep -E -B2 -A20 -- '--- FAIL|^panic' "$work/no-debug.log" | head -200 >&2
	echo "golden variant 1 failed" >&2
	exit 1
fi

echo "golden variant 2: only debug/debug_vae_* ($work/vae-debug): the stage tests"
EASEL_GOLDEN_DIR="$work/vae-debug" go test -count=1 -v -run 'Stages|RopeTable' ./engine/vae ./engine/qwen3vl ./engine/qi21 >"$work/vae-debug.log" 2>&1 || status=$?
report "$work/vae-debug.log"
if [ "$status" -ne 0 ] || ! grep -q -- '--- PASS: TestGoldenVAEStages' "$work/vae-debug.log"; then
	grep -E -B2 -A20 -- '--- FAIL|^panic' "$work/vae-debug.log" | head -100 >&2
	echo "golden variant 2 failed: the VAE stage test must run and pass on the debug case present" >&2
	exit 1
fi
# Every package whose tests read pipeline cases (directly or through internal/pipelinecase).
cfg1pkgs=$(go list -f '{{.ImportPath}} {{.Dir}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}' ./... |
	while read -r pkg dir imports; do
		case " $imports " in *" easel/internal/pipelinecase "*) echo "$pkg"; continue ;; esac
		if grep -qs 'golden.Cases("pipeline")' "$dir"/*_test.go; then echo "$pkg"; fi
	done)
echo "golden variant 3: one pipeline case, CFG 1, no condition images ($work/cfg1), $(echo "$cfg1pkgs" | wc -l) packages"
EASEL_GOLDEN_DIR="$work/cfg1" EASEL_REQUIRE_EMULATOR=1 go test -count=1 -timeout 40m -v -skip "$snapshotOnly" $cfg1pkgs >"$work/cfg1.log" 2>&1 || status=$?
report "$work/cfg1.log"
if [ "$status" -ne 0 ]; then
	grep -E -B2 -A20 -- '--- FAIL|^panic' "$work/cfg1.log" | head -200 >&2
	echo "golden variant 3 failed" >&2
	exit 1
fi
# Two reference tests compare recorded condition-image data (the VAE's encodes, the image
# processor's outputs), which a case without condition images does not hold; they say so and skip.
# Any other skip for lack of a case fails.
if ! awk -v allow='^(TestGoldenPipelineEncode|TestGoldenImageProcessor)$' '
	/--- SKIP: / { if (tolower(prev) ~ /no pipeline case|no pipeline_/ && $3 !~ allow) { print "  " prev " (" $3 ")"; bad = 1 } }
	{ prev = $0 }
	END { exit bad }' "$work/cfg1.log"; then
	echo "golden variant 3 failed: a test skipped for lack of a pipeline case (above)" >&2
	exit 1
fi
echo "golden variants: passed"
