"""The app's shared state: what every handler reaches through `request.app.state.hymt`."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request

from hymt.server.admission import Admission
from hymt.server.drain import Drain
from hymt.server.metrics import ServerMetrics
from hymt.server.service import ModelService
from hymt.server.settings import ServerSettings


@dataclass
class ServerState:
    """What every handler reaches through `request.app.state.hymt`."""

    settings: ServerSettings
    service: ModelService
    admission: Admission
    metrics: ServerMetrics
    drain: Drain
    started_at: float = field(default_factory=time.time)
    extras: dict[str, Any] = field(default_factory=dict)  # per-protocol stores (DeepL glossaries)

    def serving_status(self) -> str:
        """One word for /ready and /api/status: ready, loading, restarting, failed or draining."""
        if self.drain.draining:
            return "draining"
        phase = self.service.phase
        return "failed" if phase == "stopped" else phase


def state_of(request: Request) -> ServerState:
    return request.app.state.hymt
