"""ReplicaConfig, the `serve run` builder's arguments, and `hymt serve --replicas` without Ray."""
from __future__ import annotations

import subprocess
import sys

import pytest

from hymt.errors import InvalidInputError
from hymt.scale.app import parse_arguments
from hymt.scale.ray_import import RAY_INSTALL
from hymt.scale.replica_config import DEPLOYMENT_NAME, ReplicaConfig
from hymt.server.settings import ServerSettings
from tests.scale.conftest import hymt_env


def test_fixed_replicas_and_autoscaling_options():
    settings = ServerSettings(max_queue=32, request_timeout=60)
    fixed = ReplicaConfig(replicas=3).deployment_options(settings, 1.0)
    assert fixed["name"] == DEPLOYMENT_NAME and fixed["num_replicas"] == 3 and "autoscaling_config" not in fixed
    assert fixed["ray_actor_options"] == {"num_cpus": 1.0, "num_gpus": 1.0}
    assert fixed["max_ongoing_requests"] == 32 and fixed["max_queued_requests"] == 32
    assert fixed["graceful_shutdown_timeout_s"] == 60
    scaled = ReplicaConfig(replicas=2, max_replicas=8, target_ongoing_requests=16,
                           max_ongoing_requests=100).deployment_options(settings, 0.5)
    assert "num_replicas" not in scaled and scaled["max_ongoing_requests"] == 100
    assert scaled["autoscaling_config"] == {"min_replicas": 2, "initial_replicas": 2, "max_replicas": 8,
                                            "target_ongoing_requests": 16}
    assert scaled["ray_actor_options"]["num_gpus"] == 0.5


@pytest.mark.parametrize(("changes", "field"), [
    ({"replicas": 0}, "replicas"), ({"replicas": 2, "max_replicas": 1}, "max_replicas"),
    ({"gpus_per_replica": -1}, "gpus_per_replica"), ({"cpus_per_replica": 0}, "cpus_per_replica"),
    ({"max_queued_requests": 0}, "max_queued_requests"), ({"name": " "}, "name"),
])
def test_bad_replica_settings_name_their_field(changes, field):
    with pytest.raises(InvalidInputError) as err:
        ReplicaConfig(**changes)
    assert err.value.field == field


def test_store_dir_defaults_to_the_cache_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path / "cache"))
    assert ReplicaConfig().store_dir() == tmp_path / "cache"
    assert ReplicaConfig(state_dir=str(tmp_path / "shared")).store_dir() == tmp_path / "shared"


def test_serve_run_arguments_are_typed_and_checked():
    settings, config = parse_arguments({"model": "/models/hy", "replicas": "2", "max_replicas": "4",
                                        "gpus_per_replica": "0.5", "max_queue": "64", "cache": "false",
                                        "api_keys": "k1,k2", "state_dir": "/shared/hymt"})
    assert (settings.model, settings.max_queue, settings.cache, settings.api_keys) == (
        "/models/hy", 64, False, ("k1", "k2"))
    assert (config.replicas, config.max_replicas, config.gpus_per_replica, config.state_dir) == (
        2, 4, 0.5, "/shared/hymt")
    with pytest.raises(InvalidInputError, match="unknown argument.*replica_count.*valid:.*replicas") as err:
        parse_arguments({"replica_count": "2"})
    assert err.value.field == "replica_count"
    with pytest.raises(InvalidInputError, match="max_queue must be >= 1") as err:
        parse_arguments({"max_queue": "0"})
    assert err.value.field == "max_queue"
    with pytest.raises(InvalidInputError) as err:
        parse_arguments({"replicas": "two"})
    assert err.value.field == "replicas"
    with pytest.raises(InvalidInputError):
        parse_arguments({"port": "9000"})  # Ray's proxy owns the socket


def test_replicas_without_ray_is_a_clear_error(tmp_path, tiny_model_dir):
    fake = tmp_path / "no-ray" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError(\"No module named 'ray'\")\n")
    env = hymt_env()
    env["PYTHONPATH"] = f"{fake.parent}:{env['PYTHONPATH']}"
    done = subprocess.run([sys.executable, "-m", "hymt", "serve", "--model", str(tiny_model_dir), "--replicas", "2"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2
    assert RAY_INSTALL in done.stderr and "replicas" in done.stderr
    help_text = subprocess.run([sys.executable, "-m", "hymt", "serve", "--help"], capture_output=True, text=True,
                               env=env, timeout=120).stdout
    assert "--replicas N" in help_text and "--gpus-per-replica" in help_text
