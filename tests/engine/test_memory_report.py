"""MemoryReport: typed figures, their JSON form and the log line."""
from hymt.engine.memory_report import MemoryReport


def test_report_is_typed_and_formats():
    report = MemoryReport(device="cuda:0", budget_bytes=8 * 10**9, device_total_bytes=141 * 10**9,
                          weights_bytes=3_580_000_000, kv_cache_bytes=2**30, num_kv_blocks=1024,
                          kv_block_bytes=2**20, block_size=16, activation_bytes=10**9,
                          cuda_graph_bytes=2 * 10**8, cuda_graph_planned_bytes=3 * 10**8, sampler_bytes=6 * 10**7,
                          peak_bytes=6 * 10**9, kv_cache_dtype="fp8")
    assert report.kv_tokens == 16384
    text = report.format()
    assert "weights 3.58 GB" in text and "1024 blocks" in text and "budget 8.00 GB" in text
    assert "KV fp8 1.07 GB" in text and "CUDA graphs 0.20 GB (planned 0.30 GB)" in text
    assert report.to_dict()["kv_tokens"] == 16384 and report.to_dict()["kv_cache_dtype"] == "fp8"
