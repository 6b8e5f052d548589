#!/usr/bin/env -S docker build -f
# syntax=docker/dockerfile:1.7-labs@sha256:d9b79b81e83c28d161ff6d8876a408179bb309f38d5f12152fb552eda0624f45
FROM golang:1.22@sha256:0a1573672dbcb1439594d9f51838e33025c07a7aa5cc5a95c5717948bfc7b806 AS build
