"""A picklable Translator factory over hymt.testing.ScriptedEngine, for corpus tests: fast,
deterministic answers, and the same object works in this process and in Ray Data actors
(register this module with ray.cloudpickle.register_pickle_by_value to ship it there)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hymt.engine.sampling import SamplingParams
from hymt.testing import ScriptedEngine, source_of


def bracketed_upper(user_turn: str, params: SamplingParams) -> str:
    """The "translation" of a default-template prompt: its source, upper-cased, in brackets."""
    return f"[{source_of(user_turn).upper()}]"


@dataclass(frozen=True)
class ScriptedTranslatorFactory:
    """Builds a Translator of `model_dir` whose engine answers with `bracketed_upper`. With
    `count_dir`, each Translator built leaves a file there (which process built one)."""

    model_dir: Path
    count_dir: Path | None = None

    def __call__(self):
        from hymt.checkpoint import load_checkpoint
        from hymt.translate import Translator

        if self.count_dir is not None:
            (self.count_dir / f"translator-{os.getpid()}").touch()
        engine = ScriptedEngine(load_checkpoint(self.model_dir), bracketed_upper)
        return Translator(str(self.model_dir), engine=engine, cache=False)
