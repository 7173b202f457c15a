# The worker image: builds wallet-recon and runs the nightly scheduler.
# Node 24 is the current LTS (Node 20 reached end of life in April 2026); the suite runs on 20 and 24 in CI.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/build.mjs ./scripts/
COPY bin ./bin
COPY src ./src
COPY migrations ./migrations
COPY jobs ./jobs
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
# /metrics and /healthz; inside the container's own network namespace, so bound to all its addresses.
ENV RECON_METRICS_PORT=9464 RECON_METRICS_HOST=0.0.0.0
EXPOSE 9464
WORKDIR /app
COPY --from=build /app /app
USER node
# The slim image has no curl: Node's fetch asks /healthz (200 while the scheduler and the database live).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.RECON_METRICS_PORT || 9464) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/wallet-recon.js"]
CMD ["schedule"]
