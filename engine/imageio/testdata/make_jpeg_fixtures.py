#!/usr/bin/python3
"""JPEG fixtures for imageio_test.go, made with Debian 12's python3-pil (Pillow 9.4.0, libjpeg-turbo
2.1.5):  /usr/bin/python3 make_jpeg_fixtures.py

Each photo_<subsampling>_<w>x<h>.jpg is encoded by Pillow from a synthetic image with sharp colour
edges (where chroma upsampling shows), and .pillow.png is Pillow's own decoding of it
(Image.open(...).convert("RGBA")), i.e. what the reference pipeline would see.
"""
import math

from PIL import Image

def photo(w, h):
    im = Image.new("RGB", (w, h))
    px = im.load()
    for y in range(h):
        for x in range(w):
            r = int(127.5 + 127.5 * math.sin(x * 0.31 + y * 0.07))
            g = (x * 9 + y * 5) % 256 if (x // 6 + y // 6) % 2 else 220
            b = int(255 * y / max(1, h - 1))
            px[x, y] = (r, g, b)
    return im

for name, sub in [("420", 2), ("422", 1), ("444", 0)]:
    for w, h in [(61, 37), (3, 3), (4, 5)]:
        base = f"photo_{name}_{w}x{h}"
        photo(w, h).save(base + ".jpg", quality=90, subsampling=sub)
        Image.open(base + ".jpg").convert("RGBA").save(base + ".pillow.png")
