# The redflow command in a container: `docker compose up` runs its workers (see docker-compose.yml).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY schemas ./schemas
COPY src ./src
COPY bin ./bin
COPY examples ./examples
# `npm ci` builds dist/ (prepare); the dev dependencies are only needed for that.
RUN npm ci --no-audit --no-fund && npm prune --omit=dev
USER node
ENTRYPOINT ["node", "bin/redflow.js"]
