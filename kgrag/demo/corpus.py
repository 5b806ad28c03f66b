"""The demo corpus, made by the project itself (nothing downloaded): Markdown and text documents,
a PDF manual with pages and a figure, coloured-shape drawings in the domain of the bundled tiny
CLIP model, and a meeting recording spoken with espeak-ng. One theme: the Riverside pumping
station, so that questions cross modalities and hops."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

from kgrag.demo.pdf import write_pdf
from kgrag.demo.shapes import draw_shape

DOCUMENTS = {
    "maintenance.md": """# Maintenance roster

The Pressure Valve PV-7 is maintained by Ada Lovelace. She inspects it every Monday.

The Feed Pump FP-2 is maintained by Grace Hopper, who also keeps the spare seals.

Alan Turing maintains the Control Panel CP-1 and approves every shutdown.
""",
    "incidents.txt": """Incident log, Riverside pumping station.

On 3 March the Feed Pump FP-2 lost pressure after a seal failed. Grace Hopper replaced the seal.

On 9 March the Pressure Valve PV-7 stuck half open. The valve was cleaned and tested.
""",
}

MEETING = (
    "Riverside meeting. We agreed to replace the pressure valve next week. "
    "The new valve arrives on Thursday."
)

MANUAL_PAGES = [
    "Riverside station manual. Chapter one describes the Feed Pump FP-2, which moves water "
    "from the river intake to the filters.",
    "Figure one shows the Pressure Valve PV-7. In every drawing the valve is a red circle, "
    "and the Feed Pump FP-2 is a blue square.",
]

DRAWINGS = {
    "valve_pv7.png": ("red", "circle"),
    "pump_fp2.png": ("blue", "square"),
    "panel_cp1.png": ("green", "triangle"),
}

QUESTIONS = [
    "Who maintains the part that the meeting agreed to replace?",
    "What happened to the Feed Pump FP-2 and who fixed it?",
    "Show me a picture of a red circle.",
    "What was said in the meeting about the Pressure Valve PV-7?",
]


def make_corpus(folder: Path) -> list[Path]:
    """Write the corpus into ``folder`` and return the paths to ingest."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in DOCUMENTS.items():
        p = folder / name
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    rng = random.Random(7)  # noqa: S311 - drawings, not secrets
    figure = draw_shape("red", "circle", rng, size=64)
    paths.append(
        write_pdf(
            folder / "manual.pdf", MANUAL_PAGES, [(2, figure)], title="Riverside station manual"
        )
    )
    for name, (colour, shape) in DRAWINGS.items():
        p = folder / name
        draw_shape(colour, shape, rng, size=64).save(p)
        paths.append(p)
    speech = folder / "meeting.wav"
    if shutil.which("espeak-ng"):
        subprocess.run(
            ["espeak-ng", "-s", "130", "-w", str(speech), MEETING],
            check=True,
            capture_output=True,
            timeout=60,
        )
        paths.append(speech)
    return paths
