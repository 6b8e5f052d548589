FROM \
    --platform=$BUILDPLATFORM \
    # a comment inside a continuation is dropped
    golang:1.22-alpine@sha256:c7a9d8023e8008e18dd6bd9c1940b3a7dccb02b660f2e8060f38e3e7d9ce81ff \

    AS build
RUN go build -o /app . \
 && echo done
FROM gcr.io/distroless/static-debian12:nonroot@sha256:6f68261444e524c701c4622a965f1e1dcca760b96995fd60c9ab19f160d18998
COPY --from=build /app /app
