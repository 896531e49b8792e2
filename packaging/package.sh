#!/usr/bin/env bash
# Packages Easel with the fyne CLI pinned in go.mod (`go tool fyne`).
#   package.sh darwin   Easel.app (macOS only: needs the Xcode command-line tools), finished, checked
#                       and signed ad hoc
#   package.sh dmg      Easel-<version>.dmg with the app and an Applications link (macOS only)
#   package.sh linux    Easel.tar.xz (desktop file, icon, binary) for Linux
# `fyne package` writes a new build number into FyneApp.toml on every run; this script puts the
# file back afterwards, so packaging leaves the work tree clean.
set -euo pipefail
cd "$(dirname "$0")/.."

target=${1:-}
version=$(sed -n 's/^ *Version = "\(.*\)"/\1/p' FyneApp.toml | head -n1)
backup=$(mktemp)
cp FyneApp.toml "$backup"
trap 'cp "$backup" FyneApp.toml; rm -f "$backup"' EXIT

need_mac() {
	if [ "$(uname -s)" != Darwin ]; then
		echo "$1 needs a Mac with the Xcode command-line tools (Apple's SDK links the Metal and Cocoa frameworks)." >&2
		echo "On Linux, 'go test ./packaging' assembles and checks Easel.app from a stand-in binary instead." >&2
		exit 1
	fi
}

# sign_adhoc signs a finished bundle with an ad-hoc identity and verifies it. An unsigned bundle
# downloaded from the web is refused by Gatekeeper as "damaged"; an ad-hoc one can be opened
# (Control-click → Open, or System Settings → Privacy & Security). A release is signed with a
# Developer ID and notarized instead (docs/METAL.md, "Signing a release").
sign_adhoc() {
	codesign --force --deep -s - "$1"
	codesign --verify --deep --strict "$1"
	echo "signed $1 ad hoc (codesign -s -)"
}

case "$target" in
darwin)
	need_mac "make app"
	rm -rf Easel.app
	GOARCH=arm64 go tool fyne package -os darwin --release
	go run ./tools/macbundle Easel.app
	sign_adhoc Easel.app
	;;
dmg)
	need_mac "make dmg"
	[ -d Easel.app ] || { echo "no Easel.app: run make app first" >&2; exit 1; }
	stage=$(mktemp -d)
	cp -R Easel.app "$stage/"
	ln -s /Applications "$stage/Applications"
	rm -f "Easel-$version.dmg"
	hdiutil create -volname "Easel $version" -srcfolder "$stage" -ov -format UDZO "Easel-$version.dmg"
	rm -rf "$stage"
	echo "wrote Easel-$version.dmg"
	;;
linux)
	rm -f Easel.tar.xz
	go tool fyne package -os linux --release
	[ -s Easel.tar.xz ] || { echo "fyne package did not produce Easel.tar.xz" >&2; exit 1; }
	tar -tJf Easel.tar.xz | grep -q 'usr/local/bin/easel' || { echo "Easel.tar.xz lacks the easel binary" >&2; exit 1; }
	echo "wrote Easel.tar.xz ($(du -h Easel.tar.xz | cut -f1))"
	;;
*)
	echo "usage: $0 darwin|dmg|linux" >&2
	exit 2
	;;
esac
