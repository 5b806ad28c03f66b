"""Ingestion on Ray (``kgrag ingest ... --ray [ADDRESS]``, ``KnowledgeAgent.ingest(..., ray=)``):
parsing and the model stages as Ray Data, the rest unchanged.

The job's driver lists the inputs as the serial job does, then:

1. **parse**: the source items are a dataset; :func:`kgrag.ingest.pipeline.parse_item` runs as
   Ray tasks (``map_batches``; an archive's members with it), a file that fails is refused with
   its reason, the others go on;
2. the driver decides what to skip (unchanged files by sha256, ACLs), exactly as the serial job;
3. **build**: the serial job's own batches are a dataset; an actor pool of
   :class:`~kgrag.ingest.build.Builder` (each actor loads MiniLM, and CLIP and Whisper when its
   batches need them, once; one GPU per actor when the cluster has GPUs) chunks, transcribes and
   embeds them;
4. the driver takes the batches back **in order** and, as the serial job, extracts entities,
   summarises and writes each through the one :class:`~kgrag.ingest.writer.GraphWriter`.

Because steps 2 and 4 are the serial job's code on the same batches in the same order, a Ray
job and a serial job give the same graph (:mod:`kgrag.graph.dump` compares them); a job killed
part-way resumes as the serial one does (complete documents are skipped as unchanged, unfinished
ones removed first).

Values cross the Ray boundary pickled (the job's own typed models, between its own processes).
Without an address, ``ray.init()`` joins the cluster of ``RAY_ADDRESS`` (``ray job submit`` sets
it) or starts a local Ray sized to the machine. On a cluster every node needs kgrag, its models
and the input files under the same paths (a shared mount), as for ``--shard``.
"""

from __future__ import annotations

import functools
import logging
import pickle
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kgrag.config import Settings
from kgrag.errors import DependencyMissingError
from kgrag.ingest.build import Builder, BuildOutput
from kgrag.ingest.models import ParsedDocument, ParsedInputs, SourceItem
from kgrag.ingest.pipeline import IngestOptions, parse_item
from kgrag.modalities import factory
from kgrag.modalities.base import ImageEmbedder, TextEmbedder, Transcriber

log = logging.getLogger(__name__)

#: Files per parse task.
PARSE_BATCH = 8
#: A cluster address: ``ray://HOST:PORT`` (Ray Client) or ``HOST:PORT`` (the GCS); HOST a name,
#: an IPv4 address or an IPv6 one in brackets.
_ADDRESS = re.compile(
    r"^(?:ray://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?):(\d{1,5})$"
)
#: Addresses ray.init() resolves itself: the cluster of this machine, a new local Ray.
_NAMED_ADDRESSES = ("auto", "local")


def check_ray_address(address: str) -> str:
    """``address`` if Ray can join it (``ray://HOST:PORT``, ``HOST:PORT``, ``auto`` or
    ``local``), else ValueError saying what is wrong, before any connection is tried."""
    if not address.strip():
        raise ValueError("an empty Ray address; give ray://HOST:10001, HOST:6379 or auto")
    if address in _NAMED_ADDRESSES:
        return address
    found = _ADDRESS.match(address)
    if found is None:
        raise ValueError(
            f"{address!r} is not a Ray address: give ray://HOST:10001, HOST:6379 or auto"
        )
    if not 1 <= int(found.group(1)) <= 65535:
        raise ValueError(f"{address!r}: port {int(found.group(1))} is not 1 to 65535")
    return address


@dataclass(frozen=True)
class Models:
    """How each actor loads its models: picklable factories (sent to every actor)."""

    text: Callable[[], TextEmbedder]
    image: Callable[[], ImageEmbedder] | None = None
    transcriber: Callable[[], Transcriber] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Models:
        return cls(
            text=functools.partial(factory.text_embedder, settings),
            image=functools.partial(factory.image_embedder, settings),
            transcriber=functools.partial(factory.transcriber, settings),
        )


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError as e:  # pragma: no cover - depends on the install
        raise DependencyMissingError("ray[data]", "ray") from e
    return ray


def connect(address: str | None = None) -> None:
    """Join the Ray cluster at ``address``; without one, the cluster of ``RAY_ADDRESS`` or a new
    local Ray sized to this machine. Nothing happens when this process is connected already."""
    ray = _ray()
    if ray.is_initialized():
        return
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(log_to_driver=False, include_dashboard=False)
    log.info("Ray: %s", ray.cluster_resources())


def _parse(batch: dict[str, np.ndarray], options: IngestOptions) -> dict[str, np.ndarray]:
    """Parse task: rows of pickled :class:`SourceItem` -> pickled document or failure."""
    out = [pickle.dumps(parse_item(_loads(blob), options)) for blob in batch["blob"]]
    return {"i": batch["i"], "blob": _objects(out)}


class _Build:
    """Build actor: one :class:`Builder` (its models loaded once) for every batch it gets."""

    def __init__(self, models: Models, overlap_tokens: int, image_dir: Path) -> None:
        self.builder = Builder(
            models.text(),
            image_embedder=models.image,
            transcriber=models.transcriber,
            overlap_tokens=overlap_tokens,
            image_dir=image_dir,
        )

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = [pickle.dumps(self.builder.build(_loads(blob))) for blob in batch["blob"]]
        return {"i": batch["i"], "blob": _objects(out)}


def _loads(blob: bytes) -> Any:
    """A value this job pickled in another of its processes (never data from outside)."""
    return pickle.loads(blob)  # noqa: S301 - written by this job's own driver or workers


def _objects(values: list[bytes]) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


class RayRunner:
    """A :class:`kgrag.ingest.pipeline.Runner` on Ray Data (see the module doc)."""

    def __init__(
        self,
        models: Models,
        options: IngestOptions,
        *,
        address: str | None = None,
        actors: int | None = None,
    ) -> None:
        self.models = models
        self.options = options
        self.address = address
        self.actors = actors
        """Most build actors; default: one per CPU of the cluster (at least one)."""

    def _dataset(self, blobs: Sequence[bytes]) -> Any:
        ray = _ray()
        connect(self.address)
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True  # batches come back in job order
        context.enable_progress_bars = False  # the job reports its own progress
        return ray.data.from_items([{"i": n, "blob": b} for n, b in enumerate(blobs)])

    def parse(self, items: Sequence[SourceItem], options: IngestOptions) -> Iterator[ParsedInputs]:
        if not items:
            return
        ds = self._dataset([pickle.dumps(i) for i in items]).map_batches(
            _parse,
            fn_kwargs={"options": options},
            batch_size=PARSE_BATCH,
            batch_format="numpy",
            num_cpus=1,
        )
        for row in ds.iter_rows():
            result: ParsedInputs = _loads(row["blob"])
            yield result

    def build(self, batches: Sequence[Sequence[ParsedDocument]]) -> Iterator[BuildOutput]:
        if not batches:
            return
        ray = _ray()
        ds = self._dataset([pickle.dumps(list(b)) for b in batches])
        resources = ray.cluster_resources()
        gpus = 1 if resources.get("GPU", 0) >= 1 else 0
        most = self.actors or max(1, int(resources.get("GPU", 0) or resources.get("CPU", 1)))
        most = min(most, len(batches))
        log.info("Ray build: %d batches on up to %d actors (%d GPU each)", len(batches), most, gpus)
        ds = ds.map_batches(
            _Build,
            fn_constructor_kwargs={
                "models": self.models,
                "overlap_tokens": self.options.chunk_overlap_tokens,
                "image_dir": self.options.image_dir.resolve(),
            },
            batch_size=1,  # one of the job's batches: its texts are embedded together
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(min_size=1, max_size=most),
            num_cpus=1,
            num_gpus=gpus,  # Ray Data replaces a killed actor and retries its batch
        )
        for row in ds.iter_rows():
            out: BuildOutput = _loads(row["blob"])
            yield out
