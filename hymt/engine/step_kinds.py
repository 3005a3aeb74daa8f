"""How the engine ran its steps: in a decode graph, in a step graph, or eagerly.

A step no graph covers runs op by op, and on a GPU its host time (about 20 ms for the 1.8B
on an H100) can exceed its GPU time; a graph step computes its bucket's padding rows too.
These counts say how often each happened, so a slow run can be told apart from a busy GPU
(the server's /metrics and `hymt bench` report them).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StepKinds:
    """Engine steps by how they ran, and the padding rows their graphs computed.

    Attributes:
        decode_graph: decode steps replayed in a decode graph (a batch-size bucket).
        step_graph: other steps replayed in a step graph (a token bucket): prefills, prefill
            chunks beside decode rows, decode batches past the largest decode graph.
        eager: steps run without a graph: every step on a CPU; on a GPU the steps larger
            than EngineConfig.cuda_graph_max_tokens, or all of them with graphs off.
        tokens: the real tokens those steps computed (padding_tokens came on top).
        padding_tokens: rows the graphs computed past their steps' real tokens.
    """

    decode_graph: int = 0
    step_graph: int = 0
    eager: int = 0
    tokens: int = 0
    padding_tokens: int = 0

    @property
    def steps(self) -> int:
        return self.decode_graph + self.step_graph + self.eager

    def since(self, earlier: StepKinds) -> StepKinds:
        """The steps counted after `earlier` (a snapshot of the same engine)."""
        return StepKinds(self.decode_graph - earlier.decode_graph, self.step_graph - earlier.step_graph,
                         self.eager - earlier.eager, self.tokens - earlier.tokens,
                         self.padding_tokens - earlier.padding_tokens)

    def describe(self) -> str:
        """One line, e.g. "812 steps: 700 decode graph, 100 step graph, 12 eager; padding 6.1 % of
        the rows computed"."""
        line = (f"{self.steps} steps: {self.decode_graph} decode graph, {self.step_graph} step graph, "
                f"{self.eager} eager")
        if self.padding_tokens:
            share = self.padding_tokens / (self.tokens + self.padding_tokens)
            line += f"; padding {100 * share:.1f} % of the rows computed"
        return line


class StepKindCounter:
    """The running counts behind StepKinds (one per ModelRunner)."""

    def __init__(self) -> None:
        self._decode_graph = self._step_graph = self._eager = self._tokens = self._padding = 0

    def record(self, *, decode_bucket: int | None, token_bucket: int | None, num_tokens: int) -> None:
        """Count one step of `num_tokens` real tokens, run in the decode graph of `decode_bucket`
        rows, the step graph of `token_bucket` tokens, or eagerly (both None)."""
        self._tokens += num_tokens
        if decode_bucket is not None:
            self._decode_graph += 1
            self._padding += decode_bucket - num_tokens
        elif token_bucket is not None:
            self._step_graph += 1
            self._padding += token_bucket - num_tokens
        else:
            self._eager += 1

    def snapshot(self) -> StepKinds:
        return StepKinds(self._decode_graph, self._step_graph, self._eager, self._tokens, self._padding)
