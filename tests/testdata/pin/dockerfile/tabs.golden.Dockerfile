	FROM	--platform=linux/amd64	python:3.11-slim@sha256:36d2dc9a2f771249eedd3a45eee6757c6f01de8dd0f67aec77662d5bc40eb123	AS	base
	RUN	pip install --no-cache-dir 'ray[train]==2.40.0'
FROM	base
	COPY	--from=ghcr.io/astral-sh/uv:0.5.11@sha256:63cfc9546248b573fb684997028e682a28c13e2c9d16e297ceafd65f73de669f	/uv	/usr/local/bin/uv
FROM		ubuntu:latest@sha256:b68304d63fad7718d8983d6b8118f956b7d6a44baf27ac3dac773a3eb49ac850	
