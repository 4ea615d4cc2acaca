# The memory-regression suite and a Redis server in one image.
#   docker build --network host -t memory-regression .
#   docker run --rm --network none -v "$PWD:/workspace" -w /workspace memory-regression --store app/memory.py:Store

# -- build: the suite and its dependencies in a virtual environment ------------------------------
# (with the bytecode pip compiles: every run starts three interpreters, the runner and two workers)
FROM debian:trixie-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml setup.py README.md /src/
COPY memory_regression /src/memory_regression
COPY suite /src/suite
RUN python3 -m venv /opt/memory-regression \
 && /opt/memory-regression/bin/pip install --no-cache-dir --disable-pip-version-check /src

# -- runtime: Debian's python3, redis-server and valkey-server (--redis server,valkey compares them
#    offline), the environment from the build stage -----------------------------------------------
FROM debian:trixie-slim
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="memory-regression" \
      org.opencontainers.image.description="A pytest regression suite for LLM conversation memory kept in Redis, with a Redis server inside" \
      org.opencontainers.image.source="https://github.com/memory-regression/memory-regression" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT"
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 redis-server valkey-server ca-certificates \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log \
           /usr/share/doc/* /usr/share/man/*
COPY --from=build /opt/memory-regression /opt/memory-regression
COPY entrypoint.py /opt/memory-regression/entrypoint.py
ENV PATH=/opt/memory-regression/bin:$PATH \
    MEMORY_REGRESSION_IN_IMAGE=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /workspace
ENTRYPOINT ["/opt/memory-regression/bin/python", "/opt/memory-regression/entrypoint.py"]
