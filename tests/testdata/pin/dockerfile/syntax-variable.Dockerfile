# syntax=${DOCKERFILE_FRONTEND}
FROM scratch
COPY app /
