FROM \
    --platform=$BUILDPLATFORM \
    # a comment inside a continuation is dropped
    golang:1.22-alpine \

    AS build
RUN go build -o /app . \
 && echo done
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /app /app
