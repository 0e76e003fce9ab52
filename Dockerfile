# syntax=docker/dockerfile:1
# onto-operator image: compile the TypeScript in a full Node.js 20 image, then run the compiled
# JavaScript with production dependencies only, on a distroless Node.js 20 base (no shell, no
# package manager) as the non-root user 65532.
#
#   docker build -t ghcr.io/coomia/onto-operator:0.1.0 .
#
# The Deployment (deploy/operator/deployment.yaml, charts/onto-operator) runs
#   node dist/cli/main.js operator --leader-elect --metrics-port 8080 --health-port 8081
# from WORKDIR /app; `node` resolves through PATH below.

ARG NODE_IMAGE=node:20-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs20-debian12:nonroot

# 1. Compile: all dependencies (TypeScript is a dev dependency), then tsc into dist/: the first step
# of `npm run build`. Its second step, the CLI bundle in dist-bundle/, is not in the image: the
# operator runs from dist/ (docs/operations/guide.md, "The onto command", says why).
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json

# 2. Production dependencies only, without install scripts (none of them needs one).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# 3. Runtime: package.json (it says "type": "module"), node_modules and dist/ only.
FROM ${RUNTIME_IMAGE}
WORKDIR /app
ENV NODE_ENV=production \
    PATH=/nodejs/bin:/usr/local/bin:/usr/bin:/bin
COPY --from=deps --chown=0:0 /app/node_modules ./node_modules
COPY --from=build --chown=0:0 /src/dist ./dist
COPY --chown=0:0 package.json ./
# Files belong to root and are read-only for the process; it runs as nonroot (65532) and the
# Deployment mounts the root filesystem read-only.
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["operator", "--leader-elect", "--metrics-port", "8080", "--health-port", "8081"]
