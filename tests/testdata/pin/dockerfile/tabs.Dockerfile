	FROM	--platform=linux/amd64	python:3.11-slim	AS	base
	RUN	pip install --no-cache-dir 'ray[train]==2.40.0'
FROM	base
	COPY	--from=ghcr.io/astral-sh/uv:0.5.11	/uv	/usr/local/bin/uv
FROM		ubuntu	
