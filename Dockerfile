# Production image of the rbxl-import service.
# Build: docker build -t rbxl-import .   Run: docker run -p 8080:8080 -v rbxl-data:/data rbxl-import
# Several instances: the same STORE_URL=s3://BUCKET/PREFIX (and AWS_REGION, AWS_ACCESS_KEY_ID,
# AWS_SECRET_ACCESS_KEY; S3_ENDPOINT and S3_FORCE_PATH_STYLE=1 for non-AWS stores) on each: see README.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Dependencies ship prebuilt binaries (uWebSockets.js, lz4-napi); no install script is needed.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The script scanner's WebAssembly module (AssemblyScript, a dev dependency), then the TypeScript; the CLI (`node dist/src/cli/main.js`) executable, as npm run build leaves it.
RUN npm run build:wasm && npx tsc -p tsconfig.build.json && chmod 755 dist/src/cli/main.js

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    AUTH_MODE=gateway \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/src ./dist/src
COPY public ./public
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# /health waits up to 3 s for the store: the check's timeout leaves room for that answer.
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/api-rbxl/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The service finishes requests in flight for SHUTDOWN_GRACE_MS (30 s) after SIGTERM: give it
# `docker run --stop-timeout 35` (docker stop kills after 10 s otherwise), or lower the grace.
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
