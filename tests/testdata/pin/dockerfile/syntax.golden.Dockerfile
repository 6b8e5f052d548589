# syntax = docker/dockerfile:1.7@sha256:29e468345dfa2dd2de31b9b9aae733f7c88928dc0172e6e511630e7b4bcc09d5
# escape=`
# check=skip=JSONArgsRecommended
FROM python:3.11-slim@sha256:36d2dc9a2f771249eedd3a45eee6757c6f01de8dd0f67aec77662d5bc40eb123 AS base
# syntax=docker/dockerfile:1.4 here is a comment: directives end at the first instruction
RUN pip install `
      numpy
FROM base
CMD python -c "print('hello')"
