"""RayRunner: a corpus through Ray Data, one engine actor per GPU (or as many as asked).

The rows become a dataset of one block per batch; `map_batches` sends the blocks to a pool of
actors, each holding one Translator (built by the factory on its own GPU), and the results
stream back in input order (`preserve_order`), so the driver writes them as the local loop
would. Ray Data retries the batches of an actor that dies on another one.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hymt.errors import InvalidInputError
from hymt.scale.corpus_batch import CorpusRequest, TranslatorFactory, translate_rows
from hymt.scale.corpus_io import CorpusRow, RowTranslation
from hymt.scale.ray_import import cluster_address, import_ray

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class RayCorpusConfig:
    """Where and how wide the Ray Data job runs.

    Attributes:
        address: the Ray cluster; None: $RAY_ADDRESS, else a local one.
        actors: engine actors; None: one per GPU of the cluster (one when it has none).
        gpus_per_actor: GPUs per actor; None: 1 when the cluster has GPUs, else 0.
        cpus_per_actor: CPUs reserved per actor.
    """

    address: str | None = None
    actors: int | None = None
    gpus_per_actor: float | None = None
    cpus_per_actor: float = 1.0

    def __post_init__(self) -> None:
        if self.actors is not None and self.actors < 1:
            raise InvalidInputError(f"actors must be >= 1, got {self.actors}", field="ray_actors")
        if self.gpus_per_actor is not None and self.gpus_per_actor < 0:
            raise InvalidInputError(f"gpus_per_actor must be >= 0, got {self.gpus_per_actor}",
                                    field="gpus_per_actor")
        if self.cpus_per_actor <= 0:
            raise InvalidInputError(f"cpus_per_actor must be > 0, got {self.cpus_per_actor}", field="cpus_per_actor")


class TranslateBatchActor:
    """The Ray Data actor: one Translator, built once, translating batches of rows."""

    def __init__(self, factory: TranslatorFactory, request: CorpusRequest) -> None:
        self.translator = factory()
        self.request = request

    def __call__(self, batch: pa.Table) -> dict[str, list[object]]:
        rows = [CorpusRow(text, source=source)
                for text, source in zip(batch["text"].to_pylist(), batch["source"].to_pylist(), strict=True)]
        done = translate_rows(self.translator, rows, self.request)
        return {"index": batch["index"].to_pylist(), "translation": [d.translation for d in done],
                "source_lang": [d.source_lang for d in done]}


class RayRunner:
    """Translates batches of rows on a Ray cluster with Ray Data."""

    def __init__(self, factory: TranslatorFactory, request: CorpusRequest, config: RayCorpusConfig) -> None:
        self.factory = factory
        self.request = request
        self.config = config

    def batches(self, rows: Sequence[CorpusRow], batch_size: int) -> Iterator[list[RowTranslation]]:
        """The translations of `rows`, in order, as Ray Data hands them back."""
        import pyarrow as pa

        ray = import_ray("ray", field="ray")
        data = import_ray("ray.data", field="ray")
        started_here = not ray.is_initialized()
        if started_here:
            ray.init(address=cluster_address(self.config.address), logging_level=logging.WARNING)
        try:
            context = data.DataContext.get_current()
            context.execution_options.preserve_order = True
            context.enable_progress_bars = False  # hymt's own bar counts rows
            logging.getLogger("ray.data").setLevel(logging.WARNING)  # no progress lines under the bar
            gpus, actors = self._resources(ray)
            blocks = [pa.table({"index": list(range(start, start + len(chunk))),
                                "text": [row.text for row in chunk],
                                "source": pa.array([row.source for row in chunk], type=pa.string())})
                      for start in range(0, len(rows), batch_size) for chunk in [rows[start:start + batch_size]]]
            if not blocks:
                return
            dataset = data.from_arrow(blocks).map_batches(
                TranslateBatchActor, fn_constructor_args=(self.factory, self.request), batch_size=batch_size,
                batch_format="pyarrow", compute=data.ActorPoolStrategy(size=actors), num_gpus=gpus,
                num_cpus=self.config.cpus_per_actor)
            expected = 0
            for out in dataset.iter_batches(batch_size=None, batch_format="pyarrow"):
                indices = out["index"].to_pylist()
                if indices != list(range(expected, expected + len(indices))):
                    raise RuntimeError(f"Ray Data returned rows out of order at row {expected}")
                expected += len(indices)
                yield [RowTranslation(t, s) for t, s in zip(out["translation"].to_pylist(),
                                                            out["source_lang"].to_pylist(), strict=True)]
        finally:
            if started_here:
                ray.shutdown()

    def _resources(self, ray) -> tuple[float, int]:
        """(GPUs per actor, actors): one actor per GPU of the cluster unless told otherwise."""
        cluster_gpus = int(ray.cluster_resources().get("GPU", 0))
        gpus = self.config.gpus_per_actor
        if gpus is None:
            gpus = 1.0 if cluster_gpus else 0.0
        actors = self.config.actors or (max(1, int(cluster_gpus // gpus)) if gpus else 1)
        return gpus, actors
