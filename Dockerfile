# The redflow command in a container: `docker compose up` runs its workers (see docker-compose.yml).
# Node 24, an LTS release (Node 20 reached its end of life in April 2026).
#
# Built in two stages: the first builds and packs the package (`npm pack`, what `npm publish`
# would publish); the second installs that package as a user would, with its optional peers pg
# (tool.postgres) and tsx (tool.module files in TypeScript), which the examples use. The image so
# holds the published files and production dependencies only.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY schemas ./schemas
COPY src ./src
COPY bin ./bin
COPY examples ./examples
# `npm ci` builds dist/ (prepare); `npm pack` then needs no second build.
RUN npm ci --no-audit --no-fund && npm pack --ignore-scripts --pack-destination /tmp \
  && mv /tmp/redflow-*.tgz /tmp/redflow.tgz

FROM node:24-bookworm-slim
WORKDIR /app
COPY --from=build /tmp/redflow.tgz /tmp/redflow.tgz
# The peers' ranges are the package's own (its peerDependencies).
RUN npm init -y >/dev/null \
  && npm install --omit=dev --no-audit --no-fund /tmp/redflow.tgz \
  && npm install --omit=dev --no-audit --no-fund \
    "pg@$(node -p "require('redflow/package.json').peerDependencies.pg")" \
    "tsx@$(node -p "require('redflow/package.json').peerDependencies.tsx")" \
  && rm /tmp/redflow.tgz && npm cache clean --force
# The flows the workers host by default (docker-compose.yml names them relative to /app).
COPY examples ./examples
USER node
ENTRYPOINT ["node", "node_modules/redflow/bin/redflow.js"]
