"""Procedurally drawn coloured shapes and their captions.

The bundled tiny CLIP model (``kgrag/assets/tiny_clip``) was trained on these drawings, and the demo
corpus and the tests draw new ones from them. Every drawing is one filled shape of one colour on a
light background, at a random size and position; :func:`caption` names it ("a red circle").

Drawings are deterministic given the ``random.Random`` passed in, so a seed reproduces a set.
"""

from __future__ import annotations

import math
import random
from typing import Final

from PIL import Image, ImageDraw

__all__ = ["COLOURS", "COLOUR_RGB", "SHAPES", "caption", "draw_shape"]

#: The colour names a caption can use, in a fixed order.
COLOURS: Final[tuple[str, ...]] = ("red", "green", "blue", "yellow", "purple", "orange")

#: The shape names a caption can use, in a fixed order.
SHAPES: Final[tuple[str, ...]] = ("circle", "square", "triangle")

#: The nominal RGB value of each colour; drawings jitter around it.
COLOUR_RGB: Final[dict[str, tuple[int, int, int]]] = {
    "red": (215, 35, 35),
    "green": (35, 150, 50),
    "blue": (35, 70, 215),
    "yellow": (235, 205, 25),
    "purple": (130, 45, 170),
    "orange": (245, 135, 25),
}

_JITTER: Final = 18  # per channel, around the nominal colour
_SUPERSAMPLE: Final = 4  # draw larger, then downscale: smooth edges


def caption(colour: str, shape: str) -> str:
    """The caption of a drawing: ``caption("red", "circle") == "a red circle"``."""
    _check(colour, shape)
    return f"a {colour} {shape}"


def draw_shape(colour: str, shape: str, rng: random.Random, size: int = 64) -> Image.Image:
    """Draw a filled ``colour`` ``shape`` on a light background: a ``size``-pixel square RGB image.

    The shape's size (30-80% of the image), position, slight colour jitter, background tint and,
    for squares and triangles, a small rotation are drawn from ``rng``.
    """
    _check(colour, shape)
    if size < 8:
        raise ValueError(f"size must be at least 8 pixels, got {size}")
    big = size * _SUPERSAMPLE
    background = (rng.randint(215, 255), rng.randint(215, 255), rng.randint(215, 255))
    image = Image.new("RGB", (big, big), background)
    draw = ImageDraw.Draw(image)

    fill = tuple(max(0, min(255, c + rng.randint(-_JITTER, _JITTER))) for c in COLOUR_RGB[colour])
    extent = rng.uniform(0.3, 0.8) * big  # the shape's bounding size
    radius = extent / 2
    cx = rng.uniform(radius, big - radius)
    cy = rng.uniform(radius, big - radius)
    angle = rng.uniform(-0.3, 0.3)  # radians; circles ignore it

    if shape == "circle":
        draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), fill=fill)
    elif shape == "square":
        # Half the diagonal of a square that, rotated by up to 0.3 rad, still fits the extent.
        half = radius / (abs(math.cos(angle)) + abs(math.sin(angle)))
        corners = [(-half, -half), (half, -half), (half, half), (-half, half)]
        draw.polygon(_rotate(corners, angle, cx, cy), fill=fill)
    else:  # triangle: equilateral, pointing up, inscribed in the circle of the extent
        points = [
            (radius * math.cos(a), radius * math.sin(a))
            for a in (-math.pi / 2, math.pi / 6, 5 * math.pi / 6)
        ]
        draw.polygon(_rotate(points, angle, cx, cy), fill=fill)

    return image.resize((size, size), Image.Resampling.LANCZOS)


def _rotate(
    points: list[tuple[float, float]], angle: float, cx: float, cy: float
) -> list[tuple[float, float]]:
    cos, sin = math.cos(angle), math.sin(angle)
    return [(cx + x * cos - y * sin, cy + x * sin + y * cos) for x, y in points]


def _check(colour: str, shape: str) -> None:
    if colour not in COLOUR_RGB:
        raise ValueError(f"unknown colour {colour!r}; choose one of {', '.join(COLOURS)}")
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; choose one of {', '.join(SHAPES)}")
