# syntax=docker/dockerfile:1
FROM ubuntu AS build
RUN apt-get update \
    && apt-get install -y curl
FROM alpine:3.20 AS final
COPY --from=0 /etc/os-release /build-os-release
COPY --from=busybox:1.36 /bin/busybox /bin/busybox
