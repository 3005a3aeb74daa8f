"""Beyond one GPU, on Ray: replicas of the server behind one endpoint, and corpus translation.

hymt runs one engine per GPU; spreading work over GPUs and machines is Ray's job:

- `hymt serve --replicas N` (or `serve run hymt.scale.app:build`): Ray Serve replicas, each a
  whole hymt server (every protocol, the web UI) with its own engine, behind one HTTP
  endpoint (deployment.py, replica_config.py, serve_replicas.py).
- `hymt translate-corpus`: a corpus file translated in input order, resumable, through a local
  loop or Ray Data with one engine actor per GPU (corpus_*.py).

Ray is optional (`pip install "hymt[ray]"`) and imported only where it is used
(ray_import.py); nothing here is imported by `hymt serve` without `--replicas`.
"""
