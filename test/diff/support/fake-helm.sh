#!/bin/sh
# A stand-in for helm in tests of Escalator's helm adapter (helm is not installed here). It answers
# `helm version --short`, and for `helm template <release> <chart> [-f values]…` prints a fixed
# Deployment whose image tag is the `tag:` line of the last values file (or of <chart>/values.yaml),
# so a values change shows as a rendered change. A values file containing `fail: <text>` makes it
# fail with that text on stderr, as a chart's `fail` call would.
case "$1" in
  version) echo "v3.99.0+fake"; exit 0 ;;
  template) ;;
  *) echo "fake helm: unsupported command $1" >&2; exit 1 ;;
esac
release="$2"; chart="$3"; shift 3
values="$chart/values.yaml"
while [ $# -gt 0 ]; do
  case "$1" in -f) values="$2"; shift 2 ;; *) shift ;; esac
done
failure=$(sed -n 's/^fail: *//p' "$values")
if [ -n "$failure" ]; then echo "Error: execution error at ($release/templates/deployment.yaml:1:3): $failure" >&2; exit 1; fi
tag=$(sed -n 's/^tag: *//p' "$values")
cat <<YAML
---
# Source: $release/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: $release
spec:
  selector:
    matchLabels:
      app: $release
  template:
    metadata:
      labels:
        app: $release
    spec:
      containers:
        - name: app
          image: ghcr.io/example/$release:$tag
YAML
