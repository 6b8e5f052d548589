#SYNTAX=docker/dockerfile:1@sha256:f86143b75e5ff8b48f6ab64d61eb77856596c4a6a0264fba4d78400d85b8bfcd // options for the frontend
#escape=\
FROM alpine:3.20@sha256:75be9c490b21b793193f47be0daf1e1ba283c3a002c8e84091e2c871cc49f219
RUN echo one \
    && echo two
