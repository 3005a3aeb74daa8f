"""`job_app(**settings)`: documents_support.job_app with this test's model and jobs directory."""
from __future__ import annotations

import functools

import pytest
from documents_support import job_app as start_job_app


@pytest.fixture
def job_app(tiny_model_dir, tmp_path):
    return functools.partial(start_job_app, tiny_model_dir, jobs_dir=str(tmp_path / "jobs"))
