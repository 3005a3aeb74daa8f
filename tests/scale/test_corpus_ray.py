"""The corpus through Ray Data gives the same ordered output as the local loop: 10,000 rows
over a scripted engine on two actors, and a small run over a real tiny checkpoint."""
from __future__ import annotations

import pytest

from hymt.scale.corpus_batch import CorpusRequest, TranslatorSpec
from hymt.scale.corpus_local import LocalRunner
from hymt.scale.corpus_ray import RayCorpusConfig, RayRunner
from hymt.scale.corpus_run import CorpusJob, translate_corpus
from hymt.translate.options import TranslateOptions
from tests.scale import scripted_translator
from tests.scale.scripted_translator import ScriptedTranslatorFactory

ray = pytest.importorskip("ray", reason='Ray is not installed (pip install "hymt[ray]")')
pytest.importorskip("ray.data", reason='Ray Data is not installed (pip install "hymt[ray]")')
pytestmark = [pytest.mark.ray, pytest.mark.slow]

REQUEST = CorpusRequest("de", "en", TranslateOptions(use_cache=False))
TWO_CPU_ACTORS = RayCorpusConfig(actors=2, gpus_per_actor=0, cpus_per_actor=1)


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray cluster for the module; the scripted factory ships by value to its actors."""
    ray.init(num_cpus=4, include_dashboard=False, logging_level="WARNING", configure_logging=False)
    ray.cloudpickle.register_pickle_by_value(scripted_translator)
    yield
    ray.shutdown()


def _job(tmp_path, name: str, lines: list[str], batch_size: int) -> CorpusJob:
    source = tmp_path / "corpus.txt"
    if not source.exists():
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return CorpusJob(source, tmp_path / name, "text", "text", REQUEST, "tiny", batch_size=batch_size)


def test_ten_thousand_rows_through_ray_data_match_the_local_loop(local_ray, tmp_path, tiny_model_dir):
    lines = [f"Row {i}: the quick brown fox {i % 97} jumps." if i % 50 else "" for i in range(10_000)]
    built = tmp_path / "built"
    built.mkdir()
    factory = ScriptedTranslatorFactory(tiny_model_dir, count_dir=built)
    local = translate_corpus(_job(tmp_path, "local.txt", lines, 500), LocalRunner(factory, REQUEST))
    distributed = translate_corpus(_job(tmp_path, "ray.txt", lines, 500), RayRunner(factory, REQUEST, TWO_CPU_ACTORS))
    assert local.rows == distributed.rows == 10_000
    expected = [f"[{line.upper()}]" if line else "" for line in lines]
    assert (tmp_path / "local.txt").read_text(encoding="utf-8").splitlines() == expected
    assert (tmp_path / "ray.txt").read_bytes() == (tmp_path / "local.txt").read_bytes()
    assert len(list(built.iterdir())) == 3  # this process, then one Translator per Ray actor


def test_a_real_tiny_checkpoint_gives_the_same_output_on_ray_data(local_ray, tmp_path, tiny_model_dir):
    lines = ["Good morning.", "", "The weather is fine today.", "See you tomorrow!", "Thank you very much."]
    spec = TranslatorSpec(str(tiny_model_dir), device="cpu", cache=False)
    translate_corpus(_job(tmp_path, "local.txt", lines, 2), LocalRunner(spec, REQUEST))
    translate_corpus(_job(tmp_path, "ray.txt", lines, 2), RayRunner(spec, REQUEST, TWO_CPU_ACTORS))
    local = (tmp_path / "local.txt").read_text(encoding="utf-8").splitlines()
    assert len(local) == 5 and local[1] == "" and all(local[i] for i in (0, 2, 3, 4))
    assert (tmp_path / "ray.txt").read_text(encoding="utf-8").splitlines() == local
