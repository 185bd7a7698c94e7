"""What a compiled filter does, as a PNG: each kernel as written and as approximated, and the program run on
a photograph in the SCAMP-5 model, without and with noise, beside the exact convolution.

Needs the `pictures` extra (matplotlib, and scikit-image for its sample photographs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cain.api import Compiled
from cain.diagnostics import CainError
from cain.model.superpixel import Layout

SAMPLE_IMAGES = ("camera", "astronaut", "coffee", "moon", "brick", "coins")
"""scikit-image's sample photographs the command offers."""

DEFAULT_NOISE = 1.0
"""Standard deviation of the noise of each bus transfer (pixel values in the ADC range, about +-128)."""

SIZE = 256
"""The SCAMP-5 pixel array is 256 x 256."""


def require_pictures() -> tuple[Any, Any]:
    """matplotlib's pyplot (drawing to files) and scikit-image's sample data; a CainError saying what to
    install when they are absent."""
    try:
        import matplotlib  # optional extras: cain[pictures]

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from skimage import data
    except ImportError:
        raise CainError("pictures need matplotlib and scikit-image: pip install 'cain[pictures]'") from None
    return plt, data


def photo(name: str = "camera", channels: int = 1) -> np.ndarray:
    """scikit-image's sample photograph `name`, `[channel, row, column]`, 256 x 256 in the ADC range
    (-128..127): grey for one channel, red, green, blue (repeated) for more."""
    _, data = require_pictures()
    if name not in SAMPLE_IMAGES:
        raise CainError(f"unknown sample image '{name}' (choose from {', '.join(SAMPLE_IMAGES)})")
    image = np.asarray(getattr(data, name)(), dtype=np.float64)
    if image.ndim == 3:
        image = image[..., :3]
    step = max(1, min(image.shape[:2]) // SIZE)
    image = image[::step, ::step][:SIZE, :SIZE]
    if image.max() <= 1.0:
        image = image * 255
    if channels == 1:
        planes = [image.mean(axis=2) if image.ndim == 3 else image]
    else:
        colour = [image[..., c] for c in range(3)] if image.ndim == 3 else [image]
        planes = [colour[z % len(colour)] for z in range(channels)]
    return np.stack(planes) - 128.0


def _weights_image(matrices: list[np.ndarray]) -> np.ndarray:
    """The matrices of a kernel's channels side by side, a blank column between."""
    height = max(m.shape[0] for m in matrices)
    parts = []
    for m in matrices:
        pad = np.full((height, m.shape[1]), np.nan)
        pad[(height - m.shape[0]) // 2 : (height - m.shape[0]) // 2 + m.shape[0]] = m
        parts += [pad, np.full((height, 1), np.nan)]
    return np.hstack(parts[:-1])


def _show_weights(ax, matrices: list[np.ndarray], title: str, limit: float) -> None:
    grid = _weights_image(matrices)
    ax.imshow(grid, cmap="coolwarm", vmin=-limit, vmax=limit)
    if grid.size <= 150:
        for (r, c), w in np.ndenumerate(grid):
            if not np.isnan(w):
                ax.text(c, r, f"{w:.3g}", ha="center", va="center", fontsize=7)
    ax.set_title(title, fontsize=9)
    ax.set_axis_off()


def _draw_layout(ax, layout: Layout) -> None:
    """The superpixel tile: each PE coloured by its bank and labelled `bank.bit`, the bit order as a path."""
    ax.cla()
    grid = layout.bank_grid()
    banks = np.array([[-1 if c is None else c[0] for c in row] for row in grid], dtype=float)
    ax.imshow(np.ma.masked_less(banks, 0), cmap="tab10", vmin=0, vmax=9, alpha=0.5)
    for r, row in enumerate(grid):
        for c, cell in enumerate(row):
            if cell is not None and layout.width <= 16:
                ax.text(c, r, f"{cell[0]}.{cell[1]}", ha="center", va="center", fontsize=7)
    for bank in layout.banks:
        ax.plot([c for _, c in bank], [r for r, _ in bank], color="black", linewidth=1)
    ax.set_title(f"tile {layout.width}x{layout.height}: bank.bit, bit order", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def picture(
    result: Compiled, path: str | Path, *, image: str = "camera", noise: float = DEFAULT_NOISE, seed: int = 0
) -> Path:
    """Draw `result` (see the module's docstring) into the PNG `path`; one row per kernel."""
    plt, _ = require_pictures()
    f = result.filter
    photos = photo(image, len(f.inputs))
    if result.superpixel is not None:  # one pixel per tile: the photograph averaged over each tile
        lay = result.superpixel.layout
        photos = photos.reshape(len(photos), SIZE // lay.height, lay.height, SIZE // lay.width, lay.width)
        photos = photos.mean(axis=(2, 4))
    images = result.quantized(photos)
    exact = result.exact(images)
    clean = result.simulate(images)
    noisy = result.simulate(images, noise=noise, seed=seed)
    rows = len(f.kernels)
    fig, axes = plt.subplots(rows, 6, figsize=(18, 3.2 * rows), squeeze=False)
    inner = (slice(4, -4), slice(4, -4))
    for k, kernel in enumerate(f.kernels):
        written = [np.array(m, dtype=float) for m in kernel.weights]
        approx = [np.array(m, dtype=float) / 2**f.depth for m in kernel.goal.matrices(len(f.inputs))]
        limit = max(float(np.max(np.abs(np.concatenate([m.ravel() for m in written + approx])))), 1e-9)
        ax = axes[k]
        ax[0].imshow(images[0], cmap="gray")
        ax[0].set_title(f"input ({image})" if k == 0 else "", fontsize=9)
        ax[0].set_axis_off()
        _show_weights(ax[1], written, f"{kernel.name} as written", limit)
        _show_weights(
            ax[2], approx, f"as approximated (depth {f.depth}), error {float(kernel.error):.3g}", limit
        )
        low, high = np.percentile(exact[k][inner], [1, 99])
        for a, picture_k, title in (
            (ax[3], exact[k], "exact convolution"),
            (ax[4], clean[k], "SCAMP-5 model, no noise"),
            (ax[5], noisy[k], f"SCAMP-5 model, noise {noise:g}"),
        ):
            a.imshow(picture_k, cmap="gray", vmin=low, vmax=high)
            if a is not ax[3]:
                rms = float(np.sqrt(np.mean((picture_k[inner] - exact[k][inner]) ** 2)))
                title += f"\nRMS difference {rms:.3g}"
            a.set_title(title, fontsize=9)
            a.set_axis_off()
        if result.superpixel is not None:
            if k == 0:
                _draw_layout(ax[5], result.superpixel.layout)
            else:
                ax[5].set_axis_off()
    fig.suptitle(f"{f.name}: {result.macros} macros, {result.icws} ICWs", fontsize=11)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=80)
    plt.close(fig)
    return out
