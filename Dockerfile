# One image for the worker and the trigger; the Helm chart and docker-compose pick the entry point.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && npm run bundle:workflows

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY --from=build /app/dist ./dist
# The image's `node` user, by number: kubelet can check runAsNonRoot against it (the chart also sets
# runAsUser 1000). Nothing is written at run time (the chart mounts the root filesystem read-only).
USER 1000:1000
