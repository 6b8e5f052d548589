#!/usr/bin/env -S docker build -f
# syntax=docker/dockerfile:1.7-labs
FROM golang:1.22 AS build
