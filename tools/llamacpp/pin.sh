# The pinned llama.cpp release the peer benchmark builds (sourced by the scripts here).
# llama-cpp-python 0.3.36 vendors llama.cpp at this commit (2026-10-01), which
# has the hunyuan-dense architecture.
LLAMA_CPP_PYTHON_VERSION="0.3.36"
LLAMA_CPP_PYTHON_SDIST_SHA256="832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
LLAMACPP_COMMIT="0c1e57098bba43ac29e6e3b677cdceebdd22334f"
LLAMACPP_ARCHIVE_NAME="llama.cpp-${LLAMACPP_COMMIT:0:10}.tar.xz"
