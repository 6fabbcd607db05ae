#!/usr/bin/env bash
# buildah on the project's image storage (scripts/image-env.sh), e.g.
#   scripts/buildah.sh images
#   scripts/buildah.sh from --name try localhost/vmrollout:<version> && scripts/buildah.sh run try -- node --version
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/image-env.sh"
exec "${BUILDAH[@]}" "$@"
