# Bäckerei-Pipeline ☕ — Basisabbild für das Training
# 训练镜像
FROM python:3.11-slim AS base
LABEL org.opencontainers.image.description="naïve café ☕ image" \
      org.opencontainers.image.authors="Zoë Ñúñez"
FROM base
COPY --chown=appuser:appuser --from=ghcr.io/astral-sh/uv:0.5.11 /uv /bin/uv
