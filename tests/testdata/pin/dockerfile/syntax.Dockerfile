# syntax = docker/dockerfile:1.7
# escape=`
# check=skip=JSONArgsRecommended
FROM python:3.11-slim AS base
# syntax=docker/dockerfile:1.4 here is a comment: directives end at the first instruction
RUN pip install `
      numpy
FROM base
CMD python -c "print('hello')"
