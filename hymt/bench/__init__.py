"""`hymt bench`: offline throughput, batch-1 latency and memory of the native engine, the
transformers baselines on the same weights, and load tests of a running server.

Imports only engine-level dependencies (torch, transformers, numpy, httpx), never the
server stack.

- workload.py: random prompts, forced answer length.
- offline.py / latency.py: the two engine measurements, on any `Engine`.
- baselines.py: transformers generate() (batch 1, padded) and continuous batching.
- runner.py: one whole offline run (`run_bench(BenchOptions) -> BenchResult`).
- server_load.py: `run_server_load(ServerLoadOptions) -> ServerLoadResult`.
- results.py / report.py: typed results and the printed table.
"""
