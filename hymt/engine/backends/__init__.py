"""Engine backends other than the native engine.

- `transformers_engine.TransformersEngine`: plain `generate()`; the correctness reference and
  the benchmark baseline.
- `openai_engine.OpenAIEngine`: any OpenAI-compatible completions server (vLLM, SGLang,
  llama.cpp) as the token engine.

Import the module you need; this package imports nothing heavy by itself.
"""
