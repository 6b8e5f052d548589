# The training image is chosen by a build argument.
ARG BASE_IMAGE="public.ecr.aws/deep-learning-containers/ray:train-ml-cuda-v1.1@sha256:a2b4745326427f848cb12a1d4f9a3308ff0f77d074ecc20589f7bacf3974f1cb"
ARG PY=3.11
ARG TOOLS=ghcr.io/astral-sh/uv:0.5.11@sha256:63cfc9546248b573fb684997028e682a28c13e2c9d16e297ceafd65f73de669f DEBUG=0

FROM ${TOOLS} AS tools
FROM python:${PY}-slim AS lint
FROM ${BASE_IMAGE} AS train
COPY --from=tools /uv /usr/local/bin/uv
FROM $BASE_IMAGE
