"""Word error rate and real-time factor of the bundled Whisper on a real recording.

``../shared/data/jfk.flac`` (11 s of speech, 16 kHz; its words are in ../shared/data/README.md)
through kgrag's own transcriber (:func:`kgrag.modalities.audio.auto_transcriber`: faster-whisper
tiny.en, int8, beam 5, one CPU thread), as ingestion uses it. WER is the word-level edit distance
to the reference over the reference's word count, both lower-cased without punctuation. The
real-time factor is the wall time of one ``transcribe`` call (decoding the file included, the
model already loaded by a first call that is not counted) over the recording's duration, measured
``--runs`` times; the minimum, median and maximum are reported (the machine is shared: the
spread is its load), and beside them the median process CPU time over the duration (what one
quiet core would take). Writes ``bench/results/whisper.json``::

    OMP_NUM_THREADS=1 .venv/bin/python bench/whisper_wer.py
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from collections.abc import Sequence

from common import DATA, write_result

os.environ.setdefault("OMP_NUM_THREADS", "1")

RECORDING = DATA / "jfk.flac"
REFERENCE = (
    "And so my fellow Americans, ask not what your country can do for you, "
    "ask what you can do for your country."
)


def words(text: str) -> list[str]:
    """Lower-cased words without punctuation."""
    return re.findall(r"[a-z0-9']+", text.lower())


def word_errors(reference: Sequence[str], hypothesis: Sequence[str]) -> int:
    """Substitutions + deletions + insertions turning ``reference`` into ``hypothesis``."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, start=1):
        current = [i]
        for j, hyp in enumerate(hypothesis, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref != hyp)))
        previous = current
    return previous[-1]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    if not RECORDING.is_file():
        print(f"skipped: {RECORDING} not found", file=sys.stderr)
        return 0
    from kgrag.modalities.audio import auto_transcriber

    transcriber = auto_transcriber("auto", cpu_threads=1)
    t0 = time.perf_counter()
    first = transcriber.transcribe(RECORDING)  # loads the model: not counted
    load_s = time.perf_counter() - t0
    seconds, cpu = [], []
    for _ in range(args.runs):
        t0, c0 = time.perf_counter(), time.process_time()
        transcript = transcriber.transcribe(RECORDING)
        seconds.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        assert transcript.text == first.text, "the transcript changed between runs"
    reference = words(REFERENCE)
    errors = word_errors(reference, words(first.text))
    duration = first.duration_s
    rtf = sorted(s / duration for s in seconds)
    write_result(
        "whisper",
        {
            "model": transcriber.model_name,
            "recording": RECORDING.name,
            "duration_s": round(duration, 2),
            "reference": REFERENCE,
            "transcript": first.text,
            "reference_words": len(reference),
            "word_errors": errors,
            "wer": round(errors / len(reference), 4),
            "runs": args.runs,
            "measured": "wall time of one transcribe() call (file decoding included, model "
            "loaded beforehand) over the recording's duration; one CPU thread",
            "real_time_factor": {
                "min": round(rtf[0], 3),
                "median": round(statistics.median(rtf), 3),
                "max": round(rtf[-1], 3),
            },
            # the process's CPU time instead of wall time: what a quiet core would take
            "cpu_real_time_factor": round(statistics.median(cpu) / duration, 3),
            "first_call_with_model_load_s": round(load_s, 2),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
