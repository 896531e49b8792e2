#!/usr/bin/env bash
# Runs the real Easel window under Xvfb on the tiny reference model, starts a generation, and
# captures the screen mid-run into docs/screenshot.png (the picture the README shows).
# Needs: xvfb, xdotool, imagemagick (`import`) — installed here when missing and run as root.
#   make screenshot            # or: bash tools/screenshot.sh [OUT.png] [SECONDS_INTO_THE_RUN]
# EASEL_PREVIEW=sharp, EASEL_SIZE=512 and EASEL_STEPS=100 change the settings the window starts with;
# EASEL_SCREEN=1280x800 changes the screen (and window) size from 1440x900.
# EASEL_SCENE=inpaint (make screenshot-inpaint) pastes a drawn landscape on the window (Ctrl+V:
# the start image, its generation frame drawn), paints a mask stroke over it on the canvas and
# extends the canvas to the right once, instead of generating (xclip too is needed then).
# EASEL_SCENE=batch (make screenshot-batch) makes a batch of 4 at 512² and captures it finished:
# the sheet in the centre. EASEL_SCENE=gallery does the same, then points at a history image
# (its prompt, seed and size show) and opens its menu.
# EASEL_SCENE=studio (make screenshot-studio) runs a studio hub on loopback with three workers
# (mini, studio-pro, air) on the tiny model, joins the window to it through Easel → Studio… →
# Render on a studio, and makes a batch of 3: each Mac renders one, the queue row says which.
# EASEL_SCENE=lent (1280×800) runs a hub on loopback, lends the window to it through Easel →
# Studio… → Lend this Mac to a studio, has `easel serve --studio` send it a batch of 2 at 1024²,
# and once it renders the first, queues a job of the window's own: the queue shows the studio's
# image rendered here (its step live) above the window's job that waits for it. No picture in
# docs/ is made from it; it checks the row fits (EASEL_SCENE=lent bash tools/screenshot.sh /tmp/lent.png 20).
# EASEL_SCENE=explore (1280×800) resumes a prompt with two {a|b} alternatives (a 2×2 grid), scrolls
# the recipe column to the Explore section, opens it, presses Explore and captures the grid in the
# centre once its cells are made (EASEL_SCENE=explore bash tools/screenshot.sh /tmp/explore.png 12).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/screenshot.png}
wait_s=${2:-25}

scene=${EASEL_SCENE:-generate}
tools="Xvfb xdotool import"
[ "$scene" = inpaint ] && tools="$tools xclip convert"
[ "$scene" = lent ] && tools="$tools curl"
for tool in $tools; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends xvfb xdotool imagemagick xclip curl >/dev/null
		else
			echo "missing $tool: sudo apt-get install -y xvfb xdotool imagemagick xclip curl" >&2
			exit 1
		fi
	fi
done

work=$(mktemp -d)
xvfb_pid=""
app_pid=""
studio_pids=""
cleanup() {
	for p in $studio_pids; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	if [ -n "$app_pid" ]; then kill "$app_pid" 2>/dev/null || true; wait "$app_pid" 2>/dev/null || true; fi
	if [ -n "$xvfb_pid" ]; then kill "$xvfb_pid" 2>/dev/null || true; wait "$xvfb_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

echo "building Easel and converting the tiny reference model…"
go build -o "$work/easel" .
"$work/easel" convert testdata/golden/tiny-qwen-image-2.1 "$work/tiny.cmf" --profile f16 >/dev/null

# A fresh settings folder: the tiny model, 40 steps at 1024² (long enough to catch mid-run).
size=${EASEL_SIZE:-1024}
width=$size height=$size
if [ "$scene" = inpaint ]; then width=768 height=512; fi
if [ "$scene" = batch ] || [ "$scene" = gallery ]; then width=512 height=512; fi
if [ "$scene" = studio ] || [ "$scene" = lent ] || [ "$scene" = explore ]; then width=256 height=256; fi
mkdir -p "$work/config/Easel" "$work/out"
cat > "$work/config/Easel/settings.json" <<JSON
{"model": "$work/tiny.cmf", "backend": "cpu", "output_folder": "$work/out",
 "width": $width, "height": $height, "steps": ${EASEL_STEPS:-40}, "cfg": 1, "preview": "${EASEL_PREVIEW:-fast}"}
JSON
if [ "$scene" = studio ]; then
	cat > "$work/config/Easel/draft.json" <<JSON
{"prompt": "A paper lantern festival over a river at dusk", "size": "custom", "width": 256, "height": 256,
 "steps": ${EASEL_STEPS:-40}, "cfg": 1, "count": 3, "random_seed": true}
JSON
	# The studio: a hub on loopback (no token needed there) and three Macs (here, processes).
	"$work/easel" studio hub --listen 127.0.0.1:4299 --data "$work/hub" >"$work/hub.log" 2>&1 &
	studio_pids=$!
	sleep 2
	for name in mini studio-pro air; do
		"$work/easel" studio join nats://127.0.0.1:4299 --model "$work/tiny.cmf" --name "$name" >"$work/join-$name.log" 2>&1 &
		studio_pids="$studio_pids $!"
	done
fi
if [ "$scene" = lent ]; then
	cat > "$work/config/Easel/draft.json" <<JSON
{"prompt": "A paper lantern festival over a river at dusk", "size": "custom", "width": 256, "height": 256,
 "steps": ${EASEL_STEPS:-40}, "cfg": 1, "count": 1, "random_seed": true}
JSON
	"$work/easel" studio hub --listen 127.0.0.1:4299 --data "$work/hub" >"$work/hub.log" 2>&1 &
	studio_pids=$!
	sleep 2
fi
if [ "$scene" = explore ]; then
	# Two {a|b} groups in the prompt: each an axis of the grid, no menu to open.
	cat > "$work/config/Easel/draft.json" <<JSON
{"prompt": "A paper lantern {festival|parade} over a river at {dusk|dawn}", "size": "custom", "width": 256, "height": 256,
 "steps": ${EASEL_STEPS:-8}, "cfg": 1, "count": 1, "random_seed": true}
JSON
fi
if [ "$scene" = batch ] || [ "$scene" = gallery ]; then
	# The draft the window resumes: a batch of 4 (Images) with this prompt.
	cat > "$work/config/Easel/draft.json" <<JSON
{"prompt": "A paper lantern festival over a river at dusk", "size": "custom", "width": 512, "height": 512,
 "steps": ${EASEL_STEPS:-40}, "cfg": 1, "count": 4, "random_seed": true}
JSON
fi

default_screen=1440x900
[ "$scene" = lent ] || [ "$scene" = explore ] && default_screen=1280x800
screen=${EASEL_SCREEN:-$default_screen}
sw=${screen%x*} sh=${screen#*x}
display=:$((90 + RANDOM % 9))
Xvfb "$display" -screen 0 "${screen}x24" -nolisten tcp >/dev/null 2>&1 &
xvfb_pid=$!
sleep 1
DISPLAY=$display XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" LANG=en_US.UTF-8 \
	"$work/easel" >"$work/app.log" 2>&1 &
app_pid=$!

export DISPLAY=$display
win=$(xdotool search --sync --onlyvisible --name '^Easel' | head -n1)
xdotool windowsize "$win" "$sw" "$sh" windowmove "$win" 0 0
sleep 2
xdotool windowsize "$win" "$sw" "$sh" # again: a resize during the window's first layout can be lost
sleep 1
if [ "$scene" = inpaint ]; then
	# A landscape as the start image (on the clipboard as a PNG), pasted on the window (Ctrl+V:
	# a pasted picture is the start image), then one brush stroke over the tree on the canvas.
	convert -size 768x512 gradient:'#7fb2e5'-'#f5d6a0' -fill '#f4a340' -draw 'circle 560,200 560,150' \
		-fill '#3f6b3a' -draw 'polygon 0,512 0,380 200,320 420,390 620,330 768,370 768,512' \
		-fill '#2c4a2a' -draw 'polygon 80,512 150,300 220,512' "$work/start.png"
	xclip -selection clipboard -t image/png -i "$work/start.png"
	xdotool mousemove 200 90 click 1
	xdotool type --delay 15 "A red maple tree in autumn"
	xdotool key ctrl+v # the prompt has the focus: the picture becomes the start image
	sleep 3
	xdotool mousemove 480 470 mousedown 1
	for p in "490 450" "500 430" "515 460" "530 500" "545 540" "555 580" "535 600" "505 600" "485 580" "495 540" "510 510" "505 560"; do
		xdotool mousemove $p
		sleep 0.1
	done
	xdotool mouseup 1
	sleep 1
	xdotool mousemove 1093 409 click 1 # the right edge's extend arrow (under the Canvas / Batch / Explore grid switches): 64 px more canvas
	sleep 1
	xdotool mousemove 520 560 # the brush ring over the picture
	sleep 1
elif [ "$scene" = studio ]; then
	xdotool mousemove 32 13 click 1 # the Easel menu
	sleep 1
	xdotool mousemove 42 85 click 1 # Studio…
	sleep 1
	xdotool mousemove 720 450 # scroll the dialog to "Render on a studio"
	for _ in $(seq 10); do xdotool click 5; done
	sleep 1
	xdotool mousemove 788 460 click 1 # Hub address
	xdotool type --delay 10 "nats://127.0.0.1:4299"
	xdotool mousemove 471 577 click 1 # Render this window's jobs on the studio
	sleep 1
	xdotool mousemove 718 655 click 1 # Close
	sleep 1
	xdotool mousemove 200 90 click 1
	xdotool key ctrl+Return
	sleep "$wait_s"
elif [ "$scene" = lent ]; then
	xdotool mousemove 32 13 click 1 # the Easel menu
	sleep 1
	xdotool mousemove 42 85 click 1 # Studio…
	sleep 1
	xdotool mousemove 902 300 mousedown 1 # drag the dialog's scroll bar down to "Lend this Mac"
	for y in 500 600 700; do xdotool mousemove 902 "$y"; sleep 0.2; done
	xdotool mouseup 1
	sleep 1
	xdotool mousemove 700 411 click 1 # Hub address
	xdotool type --delay 10 "nats://127.0.0.1:4299"
	xdotool mousemove 391 528 click 1 # Lend this Mac to the studio
	sleep 2
	xdotool mousemove 639 606 click 1 # Close
	XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" "$work/easel" serve --listen 127.0.0.1:7899 \
		--model "$work/tiny.cmf" --backend cpu --studio nats://127.0.0.1:4299 >"$work/serve.log" 2>&1 &
	studio_pids="$studio_pids $!"
	for _ in $(seq 30); do curl -s -o /dev/null http://127.0.0.1:7899/sdapi/v1/options && break; sleep 1; done
	curl -s -o /dev/null -X POST http://127.0.0.1:7899/sdapi/v1/txt2img -H 'Content-Type: application/json' \
		-d '{"prompt": "A lighthouse on a basalt cliff at dusk, gulls over the surf, warm light in the lantern room",
		     "steps": 60, "width": 1024, "height": 1024, "cfg_scale": 1, "batch_size": 2, "seed": 1234}' &
	studio_pids="$studio_pids $!"
	sleep "$wait_s"
	xdotool mousemove 200 90 click 1
	xdotool key ctrl+Return # a job of the window's own, queued behind the studio's image
	sleep 3
elif [ "$scene" = explore ]; then
	# Scrolled to its foot, the column ends just above Generate: the Explore section's header
	# there, then (opened and scrolled again) its Explore button.
	xdotool mousemove 170 400
	for _ in $(seq 30); do xdotool click 5; done
	sleep 1
	xdotool mousemove 62 $((sh - 121)) click 1 # Explore (the section)
	sleep 1
	xdotool mousemove 170 400
	for _ in $(seq 30); do xdotool click 5; done
	sleep 1
	xdotool mousemove 172 $((sh - 121)) click 1 # Explore (the button)
	sleep "$wait_s"
elif [ "$scene" = batch ] || [ "$scene" = gallery ]; then
	# The resumed draft is the batch; the prompt has the focus at launch.
	xdotool key ctrl+Return
	sleep "$wait_s"
	if [ "$scene" = gallery ]; then
		xdotool mousemove 1180 300 # over a history thumbnail (the gallery is the history alone): its prompt, seed and size show
		sleep 1
		xdotool click 3 # its menu
		sleep 1
	fi
else
	# Type into the prompt (the first field of the left column) and press Ctrl+Enter to generate.
	xdotool mousemove 200 90 click 1
	xdotool type --delay 15 "A red paper crane on a wooden desk, morning light"
	xdotool key ctrl+Return
	sleep "$wait_s"
fi
import -window root "$out"
echo "wrote $out"
if grep -q "Error in Fyne call thread" "$work/app.log"; then
	echo "the app touched widgets off the UI thread:" >&2
	grep -A1 "Error in Fyne call thread" "$work/app.log" >&2
	exit 1
fi
