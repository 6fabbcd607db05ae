#!/usr/bin/env bash
# Runs a command (the real-operator test files) inside a network namespace of its own, which has
# only loopback, with kwok's pod CIDR routed locally (so processes can bind and reach pod IPs), and
# a mount namespace with a private /etc/hosts (the bed maps the operator's `<svc>.<ns>.svc` names in
# it). Nothing started inside can reach, or be reached from, any address outside.
#   test/infra/harness/operator-bed/in-netns.sh npx jest ...
set -euo pipefail
POD_CIDR="${VMROLLOUT_POD_CIDR:-10.244.0.0/16}"
hosts="$(mktemp "${TMPDIR:-/tmp}/vmrollout-netns-hosts.XXXXXX")"
trap 'rm -f "$hosts"' EXIT
printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n' >"$hosts"
# Root: a plain network + mount namespace. Otherwise a user namespace maps us to root in it.
userns=()
[[ "$(id -u)" == 0 ]] || userns=(--map-root-user)
unshare "${userns[@]}" --net --mount --propagation private -- bash -c '
  set -euo pipefail
  ip link set lo up
  ip route add local "$1" dev lo
  mount --bind "$2" /etc/hosts
  cidr="$1"
  shift 2
  VMROLLOUT_OPERATOR_NETNS="$cidr" exec "$@"
' in-netns "$POD_CIDR" "$hosts" "$@"
