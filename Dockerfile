# syntax=docker/dockerfile:1.7
# Escalator: one image for the web and worker roles (ESCALATOR_ROLE=web|worker|all).

ARG NODE_IMAGE=node:20.20-bookworm-slim

# --- build: compile TypeScript with dev dependencies ---------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# packages/ (the GitHub simulator and the simulated agents, a workspace for tests, benches and
# `npm run sandbox`) is never copied: npm ci skips a workspace whose folder is absent,
# tsconfig.build.json leaves out src/main/sandbox.ts (its only importer in src/), and the
# dependency rules keep the rest of src/ off it.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/
COPY src ./src
# The type check first (the build itself only strips types: scripts/build.mjs).
RUN npx tsc -p tsconfig.build.json --noEmit && npm run build

# --- tools: kustomize and helm, pinned and verified by sha256 -------------------------------
# Checksums are the ones the projects publish (kustomize checksums.txt, get.helm.sh *.sha256sum).
FROM ${NODE_IMAGE} AS tools
ARG TARGETARCH=amd64
ARG KUSTOMIZE_VERSION=v5.4.3
ARG KUSTOMIZE_SHA256_amd64=3669470b454d865c8184d6bce78df05e977c9aea31c30df3c669317d43bcc7a7
ARG KUSTOMIZE_SHA256_arm64=1b515578b0af12c15d9856720066ce2fe66756d63785b2cbccaf2885beb2381c
ARG HELM_VERSION=v3.16.4
ARG HELM_SHA256_amd64=fc307327959aa38ed8f9f7e66d45492bb022a66c3e5da6063958254b9767d179
ARG HELM_SHA256_arm64=d3f8f15b3d9ec8c8678fbf3280c3e5902efabe5912e2f9fcf29107efbc8ead69
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /tools
RUN set -eu; \
    case "${TARGETARCH}" in \
      amd64) kustomize_sha="${KUSTOMIZE_SHA256_amd64}"; helm_sha="${HELM_SHA256_amd64}" ;; \
      arm64) kustomize_sha="${KUSTOMIZE_SHA256_arm64}"; helm_sha="${HELM_SHA256_arm64}" ;; \
      *) echo "unsupported architecture ${TARGETARCH}" >&2; exit 1 ;; \
    esac; \
    curl -fsSLo kustomize.tar.gz "https://github.com/kubernetes-sigs/kustomize/releases/download/kustomize%2F${KUSTOMIZE_VERSION}/kustomize_${KUSTOMIZE_VERSION}_linux_${TARGETARCH}.tar.gz"; \
    echo "${kustomize_sha}  kustomize.tar.gz" | sha256sum -c -; \
    tar -xzf kustomize.tar.gz kustomize; \
    curl -fsSLo helm.tar.gz "https://get.helm.sh/helm-${HELM_VERSION}-linux-${TARGETARCH}.tar.gz"; \
    echo "${helm_sha}  helm.tar.gz" | sha256sum -c -; \
    tar -xzf helm.tar.gz --strip-components=1 "linux-${TARGETARCH}/helm"; \
    chmod 0755 kustomize helm; \
    rm kustomize.tar.gz helm.tar.gz

# --- runtime: production dependencies only, non-root ----------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
# git: rendered diffs read repository archives; tini: signals reach node, zombies are reaped.
# util-linux (unshare, setpriv) and mount: every kustomize/helm render runs in its own user,
# network and mount namespaces with only its checkout visible (docs/operations.md, "Render
# isolation"). Debian ships both as required packages; they are named so that a base image
# without them fails the build here rather than refusing every render at run time.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git tini ca-certificates util-linux mount \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=tools /tools/kustomize /tools/helm /usr/local/bin/
COPY app.yml ./
COPY bin ./bin
COPY schema ./schema
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main/index.js"]
