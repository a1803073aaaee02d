//go:build tools

package tools

import _ "github.com/johannesboyne/gofakes3/cmd/gofakes3"
