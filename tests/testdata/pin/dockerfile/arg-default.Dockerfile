# The training image is chosen by a build argument.
ARG BASE_IMAGE="public.ecr.aws/deep-learning-containers/ray:train-ml-cuda-v1.1"
ARG PY=3.11
ARG TOOLS=ghcr.io/astral-sh/uv:0.5.11 DEBUG=0

FROM ${TOOLS} AS tools
FROM python:${PY}-slim AS lint
FROM ${BASE_IMAGE} AS train
COPY --from=tools /uv /usr/local/bin/uv
FROM $BASE_IMAGE
