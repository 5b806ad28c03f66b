"""Ingestion on Ray (``kgrag ingest ... --ray [ADDRESS]``, ``KnowledgeAgent.ingest(..., ray=)``):
parsing and the model stages as Ray Data, the rest unchanged.

The job's driver lists the inputs as the serial job does, then:

1. **parse**: the source items are a dataset; :func:`kgrag.ingest.pipeline.parse_item` runs as
   Ray tasks (``map_batches``; an archive's members with it), a file that fails is refused with
   its reason, the others go on;
2. the driver decides what to skip (unchanged files by sha256, ACLs), exactly as the serial job;
3. **build**: the serial job's own batches are a dataset of
   :class:`~kgrag.ingest.build.Work` going through :class:`~kgrag.ingest.build.Builder`'s stages
   in the serial order, one pool per model: Whisper actors (when the job has recordings), chunk
   tasks, text-model actors, CLIP actors (when it has images); each actor loads its model once,
   and asks for one GPU when the cluster has GPUs (:func:`pool_plan`). Ray Data fuses the
   chunk task into the text-model actors that follow it (seen in its operator names:
   ``MapBatches(_chunk)->MapBatches(_ModelStage)``), so chunking runs where the text model's
   tokenizer is loaded already. A batch goes to each
   model whole (the text model embeds all its chunks in one call; Whisper takes its recordings
   one by one, CLIP a document's images together), as in the serial job;
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
from kgrag.ingest.build import Builder, BuildOutput, Work, start_work
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


#: The model stages (kgrag.ingest.build.Builder's methods) that run on actor pools, by model.
_POOL_STAGES = ("transcribe", "embed_text", "embed_images")


class _ModelStage:
    """An actor of one model's pool: loads that model once (in ``__init__``), then runs its
    :class:`Builder` stage on every batch it gets."""

    def __init__(self, stage: str, models: Models, overlap_tokens: int, image_dir: Path) -> None:
        self.builder = Builder(
            models.text() if stage == "embed_text" else None,
            image_embedder=models.image if stage == "embed_images" else None,
            transcriber=models.transcriber if stage == "transcribe" else None,
            overlap_tokens=overlap_tokens,
            image_dir=image_dir,
        )
        if stage == "embed_text":  # a chunk task fused into this actor uses the same model
            _CHUNKERS.setdefault(pickle.dumps(models.text), self.builder)
        elif stage == "transcribe":
            self.builder.transcriber()
        elif stage == "embed_images":
            self.builder.image_embedder()
        self.run: Callable[[Work], None] = getattr(self.builder, stage)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return _each(batch, self.run)


#: This worker process's chunkers, by the pickled text-model factory: the chunker counts tokens
#: with the text model's own tokenizer, so a chunk task loads it once per worker process.
_CHUNKERS: dict[bytes, Builder] = {}


def _chunk(batch: dict[str, np.ndarray], models: Models, overlap_tokens: int) -> dict[str, Any]:
    """Chunk task: the chunks of the batch's documents other than recordings."""
    key = pickle.dumps(models.text)
    builder = _CHUNKERS.get(key)
    if builder is None:
        builder = _CHUNKERS[key] = Builder(models.text(), overlap_tokens=overlap_tokens)
    return _each(batch, builder.chunk)


def _each(batch: dict[str, np.ndarray], stage: Callable[[Work], None]) -> dict[str, np.ndarray]:
    """Rows of pickled :class:`Work` through one stage."""
    out = []
    for blob in batch["blob"]:
        work: Work = _loads(blob)
        stage(work)
        out.append(pickle.dumps(work))
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
        """Each batch through Whisper (when the job has recordings), chunk tasks, the text
        model and CLIP (when it has images), each model on its own actor pool."""
        if not batches:
            return
        ray = _ray()
        works = [start_work(b) for b in batches]
        ds = self._dataset([pickle.dumps(w) for w in works])
        stages = [
            stage
            for stage, needed in zip(
                _POOL_STAGES,
                (any(w.has_audio for w in works), True, any(w.has_images for w in works)),
                strict=True,
            )
            if needed
        ]
        plan = pool_plan(ray.cluster_resources(), stages, len(batches), self.actors)
        log.info("Ray build: %d batches; %s", len(batches), plan)
        constructor = {
            "models": self.models,
            "overlap_tokens": self.options.chunk_overlap_tokens,
            "image_dir": self.options.image_dir.resolve(),
        }
        for stage in stages:
            if stage == "embed_text":  # chunks first: tasks, as parsing
                ds = ds.map_batches(
                    _chunk,
                    fn_kwargs={
                        "models": self.models,
                        "overlap_tokens": self.options.chunk_overlap_tokens,
                    },
                    batch_size=1,
                    batch_format="numpy",
                    num_cpus=plan.cpus,
                )
            ds = ds.map_batches(
                _ModelStage,
                fn_constructor_kwargs={"stage": stage, **constructor},
                batch_size=1,  # one of the job's batches: its texts are embedded together
                batch_format="numpy",
                compute=ray.data.ActorPoolStrategy(min_size=1, max_size=plan.actors[stage]),
                num_cpus=plan.cpus,
                num_gpus=plan.gpus,  # Ray Data replaces a killed actor and retries its batch
            )
        for row in ds.iter_rows():
            work: Work = _loads(row["blob"])
            yield work.output()


@dataclass(frozen=True)
class PoolPlan:
    """How the build stages share the cluster: actors per model pool, and the CPUs and GPUs
    each actor (and each chunk task) asks for."""

    actors: dict[str, int]
    cpus: float
    gpus: float

    def __str__(self) -> str:
        pools = ", ".join(f"{stage} {n}" for stage, n in self.actors.items())
        return f"up to {pools} actors ({self.cpus:g} CPU, {self.gpus:g} GPU each)"


def pool_plan(
    resources: dict[str, float], stages: Sequence[str], batches: int, actors: int | None = None
) -> PoolPlan:
    """Actors per model pool: ``actors`` when given, else one per GPU of the cluster (one per CPU
    without GPUs), never more than there are batches. Every pool holds at least one actor at
    once, so on a small machine each asks for a share of a CPU (its pools and the chunk tasks
    must fit side by side, or Ray Data would wait for CPUs forever); with GPUs each model
    actor asks for one GPU."""
    cpus = float(resources.get("CPU", 1.0))
    gpus = 1.0 if resources.get("GPU", 0) >= 1 else 0.0
    most = actors or max(1, int(resources.get("GPU", 0) or cpus))
    share = min(1.0, cpus / (len(stages) + 1))
    return PoolPlan({s: max(1, min(most, batches)) for s in stages}, share, gpus)
