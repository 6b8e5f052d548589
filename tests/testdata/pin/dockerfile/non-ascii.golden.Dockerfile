# Bäckerei-Pipeline ☕ — Basisabbild für das Training
# 训练镜像
FROM python:3.11-slim@sha256:36d2dc9a2f771249eedd3a45eee6757c6f01de8dd0f67aec77662d5bc40eb123 AS base
LABEL org.opencontainers.image.description="naïve café ☕ image" \
      org.opencontainers.image.authors="Zoë Ñúñez"
FROM base
COPY --chown=appuser:appuser --from=ghcr.io/astral-sh/uv:0.5.11@sha256:63cfc9546248b573fb684997028e682a28c13e2c9d16e297ceafd65f73de669f /uv /bin/uv
