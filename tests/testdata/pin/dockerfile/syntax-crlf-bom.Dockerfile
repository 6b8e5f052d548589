#SYNTAX=docker/dockerfile:1 // options for the frontend
#escape=\
FROM alpine:3.20
RUN echo one \
    && echo two
