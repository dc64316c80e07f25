"""Writes the image tests' files with PIL (Debian's /usr/bin/python3), the reference writer and decoder.

write_test_images.py decode DIR      one image per mode the decoder handles, and beside each NAME.ref:
                                     "H W C\n" then PIL's decoded pixels (uint8, HWC)
write_test_images.py resize DIR      inputs NAME.in.ref and torch's resized NAME.ref (interpolate: bilinear
                                     align_corners=False enlarging, area shrinking), rounded to uint8
write_test_images.py folder DIR CLASSES PER_CLASS MODE [EXT]
                                     DIR/<class>/<i>.<ext> (ext png or jpg), 11x9 random MODE (L or RGB) images
"""
import os
import sys

import numpy as np
from PIL import Image


def write_ref(path, pixels):
    pixels = pixels if pixels.ndim == 3 else pixels[:, :, None]
    with open(path + ".ref", "wb") as f:
        f.write(("%d %d %d\n" % pixels.shape).encode("ascii"))
        f.write(np.ascontiguousarray(pixels, dtype=np.uint8).tobytes())


def decode_fixtures(out):
    rng = np.random.default_rng(7)
    h, w = 13, 17  # odd: chroma subsampling and interlacing see partial blocks
    gray = rng.integers(0, 256, (h, w), dtype=np.uint8)
    rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    alpha = rng.integers(0, 256, (h, w), dtype=np.uint8)
    # A smooth image as well: JPEG's errors on noise are large, on photographs small; both must match PIL.
    yy, xx = np.mgrid[0:h, 0:w]
    smooth = np.dstack([xx * 15, yy * 19, (xx + yy) * 8]).astype(np.uint8)
    images = {
        "gray.png": (Image.fromarray(gray, "L"), {}),
        "gray_alpha.png": (Image.fromarray(np.dstack([gray, alpha]), "LA"), {}),
        "rgb.png": (Image.fromarray(rgb, "RGB"), {}),
        "rgba.png": (Image.fromarray(np.dstack([rgb, alpha]), "RGBA"), {}),
        "palette.png": (Image.fromarray(rgb, "RGB").quantize(16), {}),
        "bilevel.png": (Image.fromarray(gray, "L").convert("1"), {}),
        "gray.jpg": (Image.fromarray(gray, "L"), {"quality": 90}),
        "rgb.jpg": (Image.fromarray(rgb, "RGB"), {"quality": 90}),
        "smooth.jpg": (Image.fromarray(smooth, "RGB"), {"quality": 75}),
        "progressive.jpg": (Image.fromarray(smooth, "RGB"), {"quality": 80, "progressive": True}),
        "no_subsampling.jpg": (Image.fromarray(rgb, "RGB"), {"quality": 95, "subsampling": 0}),
    }
    for name, (image, options) in images.items():
        path = os.path.join(out, name)
        image.save(path, **options)
        decoded = Image.open(path)
        mode = "L" if decoded.mode in ("L", "LA", "1") else "RGB"
        write_ref(path, np.array(decoded.convert(mode)))
    # 16-bit gray: PIL reads it as 32-bit "I" (its convert("L") clips at 255); the reference is the high
    # byte, what the decoder keeps (and what PIL keeps of 16-bit RGB).
    deep = rng.integers(0, 65536, (h, w), dtype=np.uint16)
    path = os.path.join(out, "gray16.png")
    Image.fromarray(deep).save(path)
    write_ref(path, (np.array(Image.open(path)).astype(np.int64) >> 8).astype(np.uint8))
    # A larger JPEG and PIL's draft decode of it (libjpeg's DCT scaling to at least 16 pixels a side: 1/4).
    big = np.dstack([(xx2 * 3) % 256 for xx2 in np.mgrid[0:64, 0:80]] + [np.full((64, 80), 90)]).astype(np.uint8)
    path = os.path.join(out, "large.jpg")
    Image.fromarray(big, "RGB").save(path, quality=90)
    drafted = Image.open(path)
    drafted.draft("RGB", (16, 16))
    write_ref(path + ".draft16", np.array(drafted.convert("RGB")))
    # PIL's RGB-to-gray conversion, for the transform's toChannels.
    path = os.path.join(out, "rgb.png")
    write_ref(path + ".as_gray", np.array(Image.open(path).convert("L")))


def resize_fixtures(out):
    import torch
    import torch.nn.functional as F
    rng = np.random.default_rng(5)
    cases = {"up": (5, 7, 3), "down": (40, 30, 1), "mixed": (40, 7, 3), "same_rows": (16, 50, 1)}
    for name, (h, w, c) in cases.items():
        pixels = rng.integers(0, 256, (h, w, c), dtype=np.uint8)
        write_ref(os.path.join(out, name + ".in"), pixels)
        x = torch.from_numpy(pixels).permute(2, 0, 1)[None].float()
        # Separable: rows then columns, each axis by its own rule, as the C++ resize does.
        x = F.interpolate(x, size=(16, w), mode="area" if h > 16 else "bilinear",
                          **({} if h > 16 else {"align_corners": False}))
        x = F.interpolate(x, size=(16, 16), mode="area" if w > 16 else "bilinear",
                          **({} if w > 16 else {"align_corners": False}))
        write_ref(os.path.join(out, name), x[0].permute(1, 2, 0).round().clamp(0, 255).byte().numpy())


def folder(out, classes, per_class, mode, ext):
    rng = np.random.default_rng(11)
    for c in classes.split(","):
        os.makedirs(os.path.join(out, c), exist_ok=True)
        for i in range(per_class):
            shape = (11, 9) if mode == "L" else (11, 9, 3)
            Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8), mode).save(
                os.path.join(out, c, "%d.%s" % (i, ext)))


if __name__ == "__main__":
    if sys.argv[1] == "decode":
        decode_fixtures(sys.argv[2])
    elif sys.argv[1] == "resize":
        resize_fixtures(sys.argv[2])
    else:
        folder(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6] if len(sys.argv) > 6 else "png")
