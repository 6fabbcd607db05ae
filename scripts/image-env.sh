# Sourced by scripts/image*.sh and scripts/buildah.sh: where the container images live and how
# buildah is called, in one place.
#
# No Docker engine here: buildah builds and runs without a daemon. Its storage is the vfs driver (a
# plain directory per layer: no kernel overlay mount is needed, so it works wherever buildah runs
# as root) under the versioned cache, apart from any system storage, so removing the cache removes
# every image. chroot isolation: no OCI runtime (runc, crun) is needed either.
# shellcheck shell=bash
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=tool-versions.env
source "$ROOT/scripts/tool-versions.env"
CACHE="${VMROLLOUT_CACHE:-$HOME/.cache/vmrollout}"
IMAGES_DIR="$CACHE/images"
BUILDAH=(buildah --root "$IMAGES_DIR/storage" --runroot "$IMAGES_DIR/run" --storage-driver vfs)
export BUILDAH_ISOLATION=chroot
# The application image `make image` builds, and its OCI archive. Tagged with the code's version,
# the tag the chart defaults to (its appVersion, kept equal to package.json's version).
IMAGE="localhost/vmrollout:$(node -p "require('$ROOT/package.json').version")"
IMAGE_ARCHIVE="$ROOT/.tmp/vmrollout-image.oci.tar"
# The bases scripts/image-base.sh builds (tagged with its key).
BASE_REPO="localhost/vmrollout-base"
BUILD_BASE_REPO="localhost/vmrollout-build-base"
