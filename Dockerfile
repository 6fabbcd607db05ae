# One image for the worker and the trigger; the Helm chart and docker-compose pick the entry point.
# BASE_IMAGE runs it, BUILD_IMAGE (the same plus npm) builds it. `docker build .` uses the official
# Node 22 image for both; `make image` builds without a Docker engine and passes its own Debian
# trixie + Node 22 bases (scripts/image.sh, scripts/image-base.sh).
ARG BASE_IMAGE=node:22-trixie-slim
ARG BUILD_IMAGE=node:22-trixie-slim

FROM ${BUILD_IMAGE} AS build
# Set only by a build behind a TLS-inspecting proxy (scripts/image.sh): a CA bundle for npm, in the
# build stages alone.
ARG NODE_EXTRA_CA_CERTS
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm run bundle:workflows

FROM ${BUILD_IMAGE} AS deps
ARG NODE_EXTRA_CA_CERTS
WORKDIR /app
COPY package.json package-lock.json ./
# Only what runs: no TypeScript sources, declarations or source maps (about 85 MB), and of the
# Temporal SDK's native bridge, shipped prebuilt for five platforms with its Rust sources, only this
# platform's library (where the SDK looks for it: getPrebuiltTargetName()), about 120 MB less. The
# last command proves the bridge still loads.
RUN npm ci --omit=dev --no-audit --no-fund \
 && find node_modules -type f \( -name '*.map' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' \) -delete \
 && cd node_modules/@temporalio/core-bridge \
 && keep="$(node -p 'require("./common").getPrebuiltTargetName()')" \
 && find releases -mindepth 1 -maxdepth 1 ! -name "$keep" -exec rm -rf {} + \
 && rm -rf sdk-core src Cargo.toml Cargo.lock bridge-macros \
 && node -e 'require("./")'

FROM ${BASE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The image's `node` user, by number: kubelet can check runAsNonRoot against it (the chart also sets
# runAsUser 1000). Nothing is written at run time (the chart mounts the root filesystem read-only).
USER 1000:1000
