# hymt on one NVIDIA GPU: the web UI and every API on port 8000.
#
#   docker build -t hymt .
#   docker run --gpus 1 -p 8000:8000 -v hymt-data:/data hymt             # tencent/HY-MT1.5-1.8B
#   docker run --gpus 1 -p 8000:8000 -v hymt-data:/data -e HYMT_MODEL=tencent/HY-MT1.5-7B hymt
#   docker run --gpus 1 -v "$PWD:/work" hymt translate-corpus /work/in.jsonl --to de -o /work/out.jsonl
#
# /data holds the downloaded models (HF_HOME) and hymt's SQLite stores (translation cache,
# glossaries, document jobs): mount a volume there. compose.yaml runs the same with both.
ARG CUDA_IMAGE=nvidia/cuda:12.8.1-runtime-ubuntu24.04
FROM ${CUDA_IMAGE}

# HYMT_EXTRAS: optional extras to install, e.g. "ray" for --replicas and Ray Data.
ARG HYMT_EXTRAS=""
ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/hymt/bin:$PATH \
    HF_HOME=/data/huggingface \
    HYMT_CACHE_DIR=/data/hymt \
    HYMT_HOST=0.0.0.0 \
    HYMT_PORT=8000 \
    HYMT_LOG_FORMAT=json

# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv tini \
    && rm -rf /var/lib/apt/lists/*

COPY pyproject.toml README.md /src/
COPY hymt /src/hymt
COPY docker/install.sh /src/docker/install.sh
RUN HYMT_SRC=/src HYMT_VENV=/opt/hymt HYMT_EXTRAS="${HYMT_EXTRAS}" sh /src/docker/install.sh

COPY docker/entrypoint /usr/local/bin/hymt-entrypoint
COPY docker/healthcheck /usr/local/bin/hymt-healthcheck
RUN groupadd --gid 10001 hymt \
    && useradd --create-home --uid 10001 --gid 10001 --shell /usr/sbin/nologin hymt \
    && mkdir -p /data/huggingface /data/hymt \
    && chown -R 10001:10001 /data
USER 10001:10001
WORKDIR /home/hymt
VOLUME ["/data"]
EXPOSE 8000

# Loading a 7B checkpoint takes minutes on a first start (download included).
HEALTHCHECK --interval=30s --timeout=10s --start-period=600s --retries=3 CMD ["hymt-healthcheck"]
ENTRYPOINT ["tini", "--", "hymt-entrypoint"]
CMD ["serve"]
