#!/usr/bin/python3
"""Reference resizes for imageproc_resample_test.go, made with Debian 12's python3-pil (Pillow 9.4.0):

    /usr/bin/python3 make_fixtures.py

source.png is a 97x61 RGBA image with smooth and sharp content, fully transparent pixels that still
carry colour, and half-transparent ones. For each target size it writes what Pillow's
Image.resize(size, LANCZOS, reducing_gap=None) makes of it (RGBA, premultiplied internally), the
vision copy composited over white (white.paste(img, mask=alpha)), and that copy resized again as RGB
with BICUBIC (the Qwen2-VL processor's resample when smart_resize changes the size).
"""
import json
import math

from PIL import Image

W, H = 97, 61
src = Image.new("RGBA", (W, H))
px = src.load()
for y in range(H):
    for x in range(W):
        r = int(127.5 + 127.5 * math.sin(x * 0.21 + y * 0.05))
        g = (x * 7 + y * 3) % 256 if (x // 8 + y // 8) % 2 else 240
        b = int(255 * (y / (H - 1)))
        a = 255
        if 20 <= x < 45 and 10 <= y < 30:
            a = 0  # transparent, colour kept underneath
        elif 60 <= x < 90 and 30 <= y < 55:
            a = 128
        elif x < 10:
            a = int(255 * x / 9)
        px[x, y] = (r, g, b, a)
src.save("source.png")

cases = []
for w, h in [(40, 25), (97, 30), (50, 61), (160, 96), (200, 30), (7, 5), (96, 64)]:
    name = f"{w}x{h}"
    lanczos = src.resize((w, h), Image.LANCZOS, reducing_gap=None)
    lanczos.save(f"lanczos_{name}.png")
    white = Image.new("RGB", (w, h), (255, 255, 255))
    white.paste(lanczos, mask=lanczos.getchannel("A"))
    white.save(f"white_{name}.png")
    bw, bh = max(1, w * 2 // 3), h + 7
    white.resize((bw, bh), Image.BICUBIC).save(f"bicubic_{name}_to_{bw}x{bh}.png")
    cases.append({"size": [w, h], "lanczos": f"lanczos_{name}.png", "white": f"white_{name}.png",
                  "bicubic_size": [bw, bh], "bicubic": f"bicubic_{name}_to_{bw}x{bh}.png"})

# calculate_dimensions(area, ratio) with Python's round (half to even), incl. exact ties.
def calculate_dimensions(target_area, ratio):
    width = math.sqrt(target_area * ratio)
    height = width / ratio
    return round(width / 32) * 32, round(height / 32) * 32

dims = []
for area, ratio in [(1024 * 1024, 1.0), (96 * 96, 80 / 48), (96 * 96, 40 / 72), (80 * 80, 1.0),
                    (144 * 144, 1.0), (112 * 112, 1.0), (1024 * 1024, 16 / 9), (2048 * 2048, 3 / 2),
                    (1024 * 1024, 4032 / 3024), (512 * 512, 1 / 7), (768 * 768, 1080 / 1920)]:
    dims.append({"area": area, "ratio": ratio, "want": list(calculate_dimensions(area, ratio))})

with open("cases.json", "w") as f:
    json.dump({"pillow": Image.__version__, "source": "source.png", "resize": cases,
               "calculate_dimensions": dims}, f, indent=1)
