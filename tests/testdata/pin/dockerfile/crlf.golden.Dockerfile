# syntax=docker/dockerfile:1@sha256:f86143b75e5ff8b48f6ab64d61eb77856596c4a6a0264fba4d78400d85b8bfcd
FROM ubuntu:latest@sha256:b68304d63fad7718d8983d6b8118f956b7d6a44baf27ac3dac773a3eb49ac850 AS build
RUN apt-get update \
    && apt-get install -y curl
FROM alpine:3.20@sha256:75be9c490b21b793193f47be0daf1e1ba283c3a002c8e84091e2c871cc49f219 AS final
COPY --from=0 /etc/os-release /build-os-release
COPY --from=busybox:1.36@sha256:d55432289a2f69dad7e00346d00e8d4df4d0053a44dffb3f8cf463f6e3fb4b04 /bin/busybox /bin/busybox
