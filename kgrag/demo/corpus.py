"""The demo corpus, made by the project itself (nothing downloaded): Markdown and text documents,
a PDF manual with pages and a figure, coloured-shape drawings in the domain of the bundled tiny
CLIP model, and a meeting recording spoken with espeak-ng. One theme: the Riverside pumping
station, so that questions cross modalities and hops.

The facts are spread so that no single file answers the demo's main question, "Who maintains the
part the meeting agreed to replace?": only the recording says which part (the pressure valve
PV-7; no document says it), only the roster says who maintains it, and only the drawings show
what it looks like (no text gives its colour or shape). The manual's page 2 names the valve next
to its figure, which is how the graph links the picture to the part (``Image -NEAR-> Chunk
-MENTIONS-> Entity``).
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

from kgrag.demo.pdf import write_pdf
from kgrag.demo.shapes import draw_shape
from kgrag.errors import KgragError

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

#: What espeak-ng says in ``meeting.wav``: short sentences, words that Whisper tiny.en (beam 5)
#: transcribes reliably from espeak-ng at :data:`SPEECH_RATE`, the part code spelled out ("P V
#: seven", which tiny.en writes back as "PV-7"). Heard here, with one and two CPU threads and at
#: 115-135 words per minute: "This is the weekly meeting on the Riverside Pumping Station. | The
#: team agreed to replace the pressure valve, PV-7." (the second segment at 00:04-00:09). Other
#: wordings came back as "pressure mile", "BV 7", or without the code. Two segments on purpose:
#: the corpus stays small enough that a follow-up's demoted sources stay among the passages the
#: offline answer quotes from.
MEETING = (
    "This is the weekly meeting of the Riverside pumping station. "
    "The team agreed to replace the pressure valve, P V seven."
)

#: espeak-ng words per minute for :data:`MEETING`.
SPEECH_RATE = 130

#: Words the meeting's transcript must contain for the demo's questions to work (compared in
#: lower case, without punctuation or spaces inside part codes: "PV-7", "PV7", "PV 7" all match).
MEETING_KEYWORDS = ("replace", "pressure valve", "pv7")

MANUAL_PAGES = [
    "Riverside station manual. Chapter one describes the Feed Pump FP-2, which moves water "
    "from the river intake to the filters.",
    "Chapter two describes the pressure valves. Figure 1 shows valve PV-7 as it is drawn on "
    "the station plan.",
]

DRAWINGS = {
    "valve_pv7.png": ("red", "circle"),
    "pump_fp2.png": ("blue", "square"),
    "panel_cp1.png": ("green", "triangle"),
}

ESPEAK_PACKAGE = "espeak-ng"


class SpeechSynthesisError(KgragError):
    """espeak-ng, which speaks the demo's meeting recording, is missing or failed."""

    exit_code = 3


def make_corpus(folder: Path) -> list[Path]:
    """Write the corpus into ``folder`` and return the paths to ingest.

    Raises :class:`SpeechSynthesisError` when espeak-ng is not installed or fails: the meeting
    recording is part of every demo question, so the corpus is never made without it.
    """
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        raise SpeechSynthesisError(
            "espeak-ng was not found on PATH; the demo speaks its meeting recording with it: "
            f"install the Debian package {ESPEAK_PACKAGE} (sudo apt-get install {ESPEAK_PACKAGE}; "
            "make setup does this)"
        )
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
    try:
        subprocess.run(
            [espeak, "-s", str(SPEECH_RATE), "-w", str(speech), MEETING],
            check=True,
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError) as e:
        detail = getattr(e, "stderr", None)
        reason = detail.decode("utf-8", "replace").strip() if isinstance(detail, bytes) else ""
        raise SpeechSynthesisError(
            f"espeak-ng could not write {speech}: {reason or e}; check that the Debian package "
            f"{ESPEAK_PACKAGE} works (espeak-ng 'hello')"
        ) from e
    paths.append(speech)
    return paths


def missing_keywords(transcript: str) -> list[str]:
    """The :data:`MEETING_KEYWORDS` that ``transcript`` lacks."""
    text = " ".join(re.findall(r"[a-z0-9]+", transcript.lower()))
    text = re.sub(r"\b([a-z]{1,3}) (\d+)\b", r"\1\2", text)  # "pv 7" (from "PV-7") -> "pv7"
    return [k for k in MEETING_KEYWORDS if not re.search(rf"\b{re.escape(k)}\b", text)]
