# The memory-regression image with Node.js (Debian's nodejs), for stores written in JavaScript or
# TypeScript (docs/protocol.md). Built on the image of ./Dockerfile, which stays without it:
#   docker build --network host -t memory-regression .
#   docker build --network host -f docker/node.Dockerfile -t memory-regression:node .
# (--build-arg BASE=NAME when the first image is tagged otherwise)
ARG BASE=memory-regression
FROM ${BASE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log \
           /usr/share/doc/* /usr/share/man/*
