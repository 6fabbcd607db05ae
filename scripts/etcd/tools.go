//go:build tools

// Package tools pins the etcd server so that scripts/install-tools.sh can build it with
// `go build go.etcd.io/etcd/server/v3` from this wrapper module (etcd's own go.mod has
// replace directives, so a plain `go install ...@version` is refused).
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
)
