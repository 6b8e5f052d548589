FROM node:20 AS web
RUN npm ci && npm run build

FROM python:3.11 AS api
COPY --from=web /dist /srv/static
COPY --link --from=nginx:1.25-alpine /etc/nginx/nginx.conf /etc/nginx/
RUN --mount=type=bind,from=busybox:1.36,source=/bin/busybox,target=/bb /bb true
RUN <<EOF
FROM evil:1
EOF

FROM api
COPY --from=1 /srv /srv
