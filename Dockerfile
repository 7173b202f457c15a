# The worker image: builds wallet-recon and runs the nightly scheduler.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY migrations ./migrations
COPY jobs ./jobs
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app /app
USER node
ENTRYPOINT ["node", "bin/wallet-recon.js"]
CMD ["schedule"]
