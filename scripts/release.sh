#!/usr/bin/env bash
# `make release VERSION=x.y.z`: every artefact of a release, in $RELEASE_DIR/<version>/ (default
# dist/release), from this checkout as it is:
#   vmrollout-<v>.oci.tar        the worker and trigger image (scripts/image.sh), an OCI archive
#   vmrollout-<v>.oci.digest     its manifest digest (sha256:…), what `skopeo copy` pushes
#   vmrollout-<v>.spdx.json      its SBOM (syft: the Debian packages and the npm packages inside)
#   vmrollout-<v>.tgz            the Helm chart (`helm package`, chart version = app version)
#   kubectl-vmdc                 the kubectl plugin, one file that needs only node
#   kubectl_complete-vmdc        what kubectl runs for `kubectl vmdc <TAB>` (it asks the plugin)
#   kubectl-vmdc-<v>.tar.gz      the two with LICENSE, and vmdc.yaml, its krew manifest
#   RELEASE_NOTES.md             the version's section of CHANGELOG.md
#   SHA256SUMS                   the checksums of all of the above
# The version must be the one the checkout declares (package.json, Chart.yaml's version and
# appVersion) and have a CHANGELOG.md section: a release is cut from a commit that says what it is.
# docs/releasing.md says how to publish the artefacts.
set -Eeuo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { printf '[release] %s\n' "$*" >&2; }
fail() {
  log "ERROR: $*"
  exit 1
}

VERSION="${1:-${VERSION:-}}"
VERSION="${VERSION#v}"
[[ "$VERSION" =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] ||
  fail "VERSION must be a semantic version like 1.2.3 or v1.2.3-rc.1 (got '${1:-${VERSION:-}}')"
declared="$(node -p "require('./package.json').version")"
chart_version="$(sed -n 's/^version: *//p' charts/vmrollout/Chart.yaml)"
chart_app="$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/vmrollout/Chart.yaml)"
[[ "$declared" == "$VERSION" && "$chart_version" == "$VERSION" && "$chart_app" == "$VERSION" ]] ||
  fail "release $VERSION, but the checkout declares package.json $declared, Chart.yaml version $chart_version appVersion $chart_app: set all three first"
grep -q "^## \[$VERSION\]" CHANGELOG.md || fail "CHANGELOG.md has no section '## [$VERSION]'"

# shellcheck source=/dev/null
source "${VMROLLOUT_CACHE:-$HOME/.cache/vmrollout}/tools/tools.env" 2>/dev/null || fail "no tools: run make tools"
for t in HELM SYFT; do
  p="VMROLLOUT_$t"
  [[ -x "${!p:-}" ]] || fail "$(tr 'A-Z' 'a-z' <<<"$t") is not installed (make tools)"
done

OUT="${RELEASE_DIR:-dist/release}/$VERSION"
rm -rf "$OUT"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

log "image"
scripts/image.sh
# shellcheck source=image-env.sh
source scripts/image-env.sh
cp "$IMAGE_ARCHIVE" "$OUT/vmrollout-$VERSION.oci.tar"
tar -xOf "$OUT/vmrollout-$VERSION.oci.tar" index.json |
  node -e 'const i = JSON.parse(require("fs").readFileSync(0, "utf8")); const m = i.manifests ?? []; if (m.length !== 1) throw new Error(`index.json lists ${m.length} manifests, not 1`); console.log(m[0].digest)' \
    >"$OUT/vmrollout-$VERSION.oci.digest"

log "SBOM"
"$VMROLLOUT_SYFT" scan --quiet "oci-archive:$OUT/vmrollout-$VERSION.oci.tar" --source-name vmrollout --source-version "$VERSION" \
  -o "spdx-json=$OUT/vmrollout-$VERSION.spdx.json"

log "chart"
"$VMROLLOUT_HELM" package charts/vmrollout --version "$VERSION" --app-version "$VERSION" --destination "$OUT" >&2

log "kubectl plugin"
npm run --silent build:cli >&2
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cp dist/kubectl-vmdc.cjs "$OUT/kubectl-vmdc"
cp dist/kubectl-vmdc.cjs "$stage/kubectl-vmdc"
cp scripts/kubectl_complete-vmdc "$OUT/kubectl_complete-vmdc"
cp scripts/kubectl_complete-vmdc "$stage/kubectl_complete-vmdc"
cp LICENSE "$stage/LICENSE"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2000-01-01 00:00Z' -C "$stage" -czf "$OUT/kubectl-vmdc-$VERSION.tar.gz" \
  kubectl-vmdc kubectl_complete-vmdc LICENSE
PLUGIN_SHA="$(sha256sum "$OUT/kubectl-vmdc-$VERSION.tar.gz" | cut -d' ' -f1)"
DOWNLOAD="${RELEASE_DOWNLOAD_URL:-https://github.com/vmrollout/vmrollout/releases/download}/v$VERSION"
sed -e "s|@VERSION@|$VERSION|g" -e "s|@URI@|$DOWNLOAD/kubectl-vmdc-$VERSION.tar.gz|g" -e "s|@SHA256@|$PLUGIN_SHA|g" \
  scripts/krew-manifest.yaml >"$OUT/vmdc.yaml"

log "release notes"
awk -v v="$VERSION" '$0 ~ "^## \\[" v "\\]" { on = 1; print; next } on && /^## \[/ { exit } on' CHANGELOG.md >"$OUT/RELEASE_NOTES.md"

(cd "$OUT" && sha256sum -- * | grep -v ' SHA256SUMS$' >SHA256SUMS)
log "release $VERSION in $OUT:"
(cd "$OUT" && ls -l >&2)
