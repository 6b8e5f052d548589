FROM python:3.11@sha256:2b98077386f24c126214452dcc5b0ca9a1592556c4c33b34fb0dc57591a2cb68 AS base
FROM docker.io/library/python:3.11-slim@sha256:36d2dc9a2f771249eedd3a45eee6757c6f01de8dd0f67aec77662d5bc40eb123
COPY --from=alpine@sha256:5e9c88174a28c259c349f308dd661a6ec61ed5f8c72ecfaefb46cceb811b55a1 /etc/alpine-release /
COPY --from=base /usr/local /usr/local
