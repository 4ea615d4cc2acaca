# A Redis server from Debian's package, with no server in its default command: the engine
# image:memory-regression-test-redis finds redis-server on the image's PATH (tests/end_to_end/test_engines.py).
FROM debian:trixie-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/*
CMD ["bash"]
