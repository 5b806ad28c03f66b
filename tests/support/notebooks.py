"""Jupyter notebooks (nbformat 4) written the way Jupyter saves them: cells with their source as
lists of lines, outputs of every kind, and a plot as a base64 PNG drawn with Pillow."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw


def plot_png() -> bytes:
    """A real PNG of a rising line, 200x120 pixels."""
    img = Image.new("RGB", (200, 120), "white")
    draw = ImageDraw.Draw(img)
    draw.line([(10, 110), (60, 80), (110, 60), (190, 10)], fill="blue", width=3)
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def write_notebook(path: Path) -> Path:
    """A small training notebook: a heading, a note, code that prints, returns, plots and fails."""
    cells: list[dict[str, Any]] = [
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": _lines("# Churn model experiment\n\nWe train on the March export."),
        },
        {
            "cell_type": "code",
            "execution_count": 1,
            "metadata": {},
            "source": _lines("learning_rate = 0.003\nprint(f'learning rate {learning_rate}')"),
            "outputs": [
                {"output_type": "stream", "name": "stdout", "text": ["learning rate 0.003\n"]}
            ],
        },
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": _lines("## Validation loss\n\nThe loss falls for twelve epochs."),
        },
        {
            "cell_type": "code",
            "execution_count": 2,
            "metadata": {},
            "source": _lines("plot(losses)\nbest_epoch"),
            "outputs": [
                {
                    "output_type": "display_data",
                    "metadata": {},
                    "data": {
                        "image/png": base64.b64encode(plot_png()).decode("ascii"),
                        "text/plain": ["<Figure size 640x480 with 1 Axes>"],
                    },
                },
                {
                    "output_type": "execute_result",
                    "execution_count": 2,
                    "metadata": {},
                    "data": {"text/plain": ["12"]},
                },
            ],
        },
        {
            "cell_type": "code",
            "execution_count": 3,
            "metadata": {},
            "source": _lines("undefined_name"),
            "outputs": [
                {
                    "output_type": "error",
                    "ename": "NameError",
                    "evalue": "name 'undefined_name' is not defined",
                    "traceback": [],
                }
            ],
        },
    ]
    notebook = {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    return path
