#!/bin/sh
# A stand-in for helm in tests of Escalator's helm adapter (helm is not installed here). It answers
# `helm version --short`, and for `helm template [-f values]… -- <release> <chart>` prints a fixed
# Deployment whose image tag is the `tag:` line of the last values file (or of <chart>/values.yaml),
# so a values change shows as a rendered change. A values file containing `fail: <text>` makes it
# fail with that text on stderr, as a chart's `fail` call would.
case "$1" in
  version) echo "v3.99.0+fake"; exit 0 ;;
  template) ;;
  *) echo "fake helm: unsupported command $1" >&2; exit 1 ;;
esac
shift
# Flags as helm takes them (`-f x`, `--values=x`, other `--flag=value`s ignored); `--` ends them,
# and the first two positional arguments are the release and the chart.
release=""; chart=""; values=""; flags=1
while [ $# -gt 0 ]; do
  if [ "$flags" = 1 ]; then
    case "$1" in
      --) flags=0; shift; continue ;;
      -f|--values) values="$2"; shift 2; continue ;;
      --values=*) values="${1#--values=}"; shift; continue ;;
      -*) shift; continue ;;
    esac
  fi
  if [ -z "$release" ]; then release="$1"; elif [ -z "$chart" ]; then chart="$1"; fi
  shift
done
[ -n "$values" ] || values="$chart/values.yaml"
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
