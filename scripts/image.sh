#!/usr/bin/env bash
# `make image`: the worker and trigger image, built without a Docker engine.
#   1. buildah and mmdebstrap from Debian, when missing;
#   2. the bases (scripts/image-base.sh: Debian trixie + Node 22, and the same with npm), cached;
#   3. the Dockerfile, with `buildah bud` on those bases, as localhost/vmrollout:<version> in the
#      project's image storage (scripts/buildah.sh reaches it);
#   4. its OCI archive, .tmp/vmrollout-image.oci.tar (`podman load -i`, `skopeo copy oci-archive:...`).
# Skipped when nothing it is built from changed: the image carries a hash of its inputs (the bases'
# key, the files of the build context) as a label, and the archive a copy of it beside it.
set -Eeuo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/image-env.sh"
cd "$ROOT"

log() { printf '[image] %s\n' "$*" >&2; }

if ! command -v buildah >/dev/null || ! command -v mmdebstrap >/dev/null; then
  log "installing buildah and mmdebstrap (Debian packages)"
  apt-get install -y -q --no-install-recommends buildah mmdebstrap >&2 ||
    { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends buildah mmdebstrap >&2; }
fi

KEY="$(scripts/image-base.sh)"

# Every file git knows (or would add) but those .dockerignore keeps out at the top level: a change
# anywhere in the build context rebuilds; one in the tests or the docs does not.
inputs_hash() {
  {
    echo "$KEY"
    git ls-files -z --cached --others --exclude-standard |
      grep -zvE '^(test|docs|examples|bench|charts|\.ci)/|^(README\.md|CONTRIBUTING\.md|docker-compose\.yml|Makefile)$' |
      sort -zu |
      while IFS= read -r -d '' f; do if [[ -f "$f" ]]; then sha256sum "$f"; fi; done
  } | sha256sum | cut -c1-16
}
INPUTS="$(inputs_hash)"
LABEL="vmrollout.inputs"

built="$("${BUILDAH[@]}" inspect --type image --format "{{index .OCIv1.Config.Labels \"$LABEL\"}}" "$IMAGE" 2>/dev/null || true)"
if [[ "$built" == "$INPUTS" ]]; then
  log "present: $IMAGE (inputs $INPUTS)"
else
  t0=$(date +%s)
  # Behind a TLS-inspecting proxy the build's npm must trust what this host's Node or npm trusts: that
  # CA bundle is mounted for the RUN steps only (nothing of it goes into a layer) and named by the
  # Dockerfile's NODE_EXTRA_CA_CERTS build argument.
  ca=()
  ca_file="${NODE_EXTRA_CA_CERTS:-$(npm config get cafile 2>/dev/null || true)}"
  if [[ -f "$ca_file" ]]; then
    ca=(--volume "$ca_file:/run/host-ca.crt:ro" --build-arg NODE_EXTRA_CA_CERTS=/run/host-ca.crt)
  fi
  log "building $IMAGE on the bases $KEY (inputs $INPUTS)"
  # No layer cache: with vfs every cached layer is a full copy of its file system (about 1 GB each
  # in the build stage); the whole build runs only when its inputs changed.
  "${BUILDAH[@]}" bud --layers=false --pull=never \
    --build-arg "BASE_IMAGE=$BASE_REPO:$KEY" --build-arg "BUILD_IMAGE=$BUILD_BASE_REPO:$KEY" \
    "${ca[@]}" --label "$LABEL=$INPUTS" -t "$IMAGE" -f Dockerfile . >&2
  # The image it replaces, now untagged.
  "${BUILDAH[@]}" rmi --prune >/dev/null 2>&1 || true
  log "built in $(($(date +%s) - t0))s"
fi

if [[ "$(cat "$IMAGE_ARCHIVE.inputs" 2>/dev/null)" != "$INPUTS" ]]; then
  mkdir -p "$(dirname "$IMAGE_ARCHIVE")"
  rm -f "$IMAGE_ARCHIVE.inputs" "$IMAGE_ARCHIVE.tmp"
  "${BUILDAH[@]}" push --quiet "$IMAGE" "oci-archive:$IMAGE_ARCHIVE.tmp:${IMAGE#localhost/}" >&2
  mv "$IMAGE_ARCHIVE.tmp" "$IMAGE_ARCHIVE"
  echo "$INPUTS" >"$IMAGE_ARCHIVE.inputs"
fi
log "$IMAGE: $("${BUILDAH[@]}" images --format '{{.Size}}' "$IMAGE") in storage, archive $IMAGE_ARCHIVE ($(du -h "$IMAGE_ARCHIVE" | cut -f1))"
