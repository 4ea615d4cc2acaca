# A Valkey server from Debian's package, started as the official valkey/valkey image is: its
# default command is the server binary (tests/end_to_end/test_engines.py).
FROM debian:trixie-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends valkey-server \
 && rm -rf /var/lib/apt/lists/*
CMD ["valkey-server"]
