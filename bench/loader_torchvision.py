#!/usr/bin/env python3
"""torchvision's side of bench/loader_vs_torchvision.sh: ImageFolder + DataLoader (num_workers=0, one thread)
with Resize(S), RandomCrop(S, padding=4), RandomHorizontalFlip, ToTensor, Normalize, as balancenet's
imagefolder loader does with --image-size S --augment crop,flip. Also writes the synthetic JPEG folder.

Usage: .venv/bin/python loader_torchvision.py run DIR SIZE SECONDS [BATCH]
       .venv/bin/python loader_torchvision.py make DIR COUNT PIXELS   (COUNT JPEGs of PIXELS^2 in 4 classes)
Prints "images_per_second X images N seconds T" for run.
"""
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from PIL import Image


def make(root, count, pixels):
    """Smooth random colour images (gradients plus noise: JPEG-like content, not flat colour)."""
    rng = np.random.default_rng(1)
    y, x = np.mgrid[0:pixels, 0:pixels] / pixels
    for i in range(count):
        folder = os.path.join(root, f"class{i % 4}")
        os.makedirs(folder, exist_ok=True)
        a, b, c = rng.uniform(0, 6, 3)
        base = np.stack([np.sin(a * x + b * y), np.cos(b * x - c * y), np.sin(c * (x + y))], -1)
        pixels_rgb = (base * 90 + 128 + rng.normal(0, 12, base.shape)).clip(0, 255).astype(np.uint8)
        Image.fromarray(pixels_rgb).save(os.path.join(folder, f"{i:04d}.jpg"), quality=90)


def run(root, size, seconds, batch):
    import torch
    from torchvision import datasets, transforms

    torch.set_num_threads(1)
    transform = transforms.Compose([
        transforms.Resize(size), transforms.RandomCrop(size, padding=4), transforms.RandomHorizontalFlip(),
        transforms.ToTensor(), transforms.Normalize([0.5, 0.5, 0.5], [0.25, 0.25, 0.25])])
    loader = torch.utils.data.DataLoader(datasets.ImageFolder(root, transform), batch_size=batch, shuffle=False,
                                         num_workers=0)
    batches = iter(())

    def next_batch():
        nonlocal batches
        try:
            return next(batches)
        except StopIteration:
            batches = iter(loader)
            return next(batches)

    next_batch()  # warm-up, left out as on balancenet's side
    images, start, elapsed = 0, time.perf_counter(), 0.0
    while elapsed < seconds:
        images += next_batch()[0].shape[0]
        elapsed = time.perf_counter() - start
    print(f"images_per_second {images / elapsed:.1f} images {images} seconds {elapsed:.2f}")


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif len(sys.argv) >= 5 and sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]) if len(sys.argv) > 5 else 128)
    else:
        sys.exit(__doc__)
