FROM node:20@sha256:786b84c56c90c6e4aa645dff8141bff288c86b2eada3106f6f3877e184bd3d57 AS web
RUN npm ci && npm run build

FROM python:3.11@sha256:2b98077386f24c126214452dcc5b0ca9a1592556c4c33b34fb0dc57591a2cb68 AS api
COPY --from=web /dist /srv/static
COPY --link --from=nginx:1.25-alpine@sha256:93775076138058ae4b4a004f78ee6b4d2f5cefae70fa46b95ac394c8991a09de /etc/nginx/nginx.conf /etc/nginx/
RUN --mount=type=bind,from=busybox:1.36@sha256:d55432289a2f69dad7e00346d00e8d4df4d0053a44dffb3f8cf463f6e3fb4b04,source=/bin/busybox,target=/bb /bb true
RUN <<EOF
FROM evil:1
EOF

FROM api
COPY --from=1 /srv /srv
