#!/usr/bin/env bash
# Checks, and where it can installs, what Easel needs to build (`deps.sh run`) or to build and
# test (`deps.sh test`). On Debian/Ubuntu as root it installs the missing apt packages; otherwise
# it prints exactly what to install and fails. On macOS it checks the Xcode command-line tools.
set -euo pipefail

mode=${1:-run}
case "$mode" in run|test) ;; *) echo "usage: $0 run|test" >&2; exit 2 ;; esac

need_go_minor=26
check_go() {
	if ! command -v go >/dev/null 2>&1; then
		echo "Go is not installed: install Go 1.${need_go_minor} or newer from https://go.dev/dl/ and put it on PATH." >&2
		exit 1
	fi
	local v
	v=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
	if [ "${v:-0}" -lt "$need_go_minor" ] 2>/dev/null; then
		echo "Go $(go env GOVERSION) is too old: Easel needs Go 1.${need_go_minor} or newer (https://go.dev/dl/)." >&2
		exit 1
	fi
}

case "$(uname -s)" in
Darwin)
	check_go
	if ! xcode-select -p >/dev/null 2>&1; then
		echo "The Xcode command-line tools are missing (clang and the macOS SDK, needed for Metal and the window)." >&2
		echo "Install them with:  xcode-select --install" >&2
		exit 1
	fi
	if [ "$(uname -m)" != "arm64" ]; then
		echo "note: this Mac is not Apple silicon; Easel will use its CPU backend only." >&2
	fi
	exit 0
	;;
Linux) ;;
*)
	echo "Easel builds on macOS (Apple silicon) and on Debian/Ubuntu Linux; $(uname -s) is not supported." >&2
	exit 1
	;;
esac

check_go

# The window (Fyne: GLFW for X11 and Wayland, OpenGL), the CPU backend (OpenBLAS).
pkgs=(gcc pkg-config libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev
	libxi-dev libxxf86vm-dev libwayland-dev libxkbcommon-dev libopenblas-dev)
# Tests: clang compiles the Metal kernels for the CPU emulator.
if [ "$mode" = test ]; then
	pkgs+=(clang-14) # pinned: the Metal emulator is validated with clang 14 (clang 16 also tested)
	pkgs+=(xvfb)     # the launch test opens the real window under xvfb-run (main_test.go)
fi

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
# Tests: published clients (npm) drive easel serve (app/serve): an AUTOMATIC1111 client and the
# official OpenAI SDK; their packages are installed from the lock files into
# app/serve/testdata/{a1111client,openaiclient} after the apt packages.
npm_client() {
	[ "$mode" = test ] || return 0
	local root dir
	root="$(cd "$(dirname "$0")/.." && pwd)/app/serve/testdata"
	for dir in "$root/a1111client" "$root/openaiclient"; do
		if [ -f "$dir/node_modules/.package-lock.json" ] && [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
			continue
		fi
		echo "Installing the API clients the tests run (npm ci in $dir)"
		(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
	done
}
if [ "$mode" = test ] && ! command -v npm >/dev/null 2>&1; then
	missing+=(nodejs npm)
fi

if [ ${#missing[@]} -eq 0 ]; then
	npm_client
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "Missing build dependencies: ${missing[*]}" >&2
	echo "This is not a Debian/Ubuntu system; install the equivalents of these packages with your package manager." >&2
	exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "Missing build dependencies. Install them with:" >&2
	echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
	exit 1
fi
echo "Installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "Installed."
npm_client
