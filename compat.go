package main

import (
	"github.com/capwrap/capwrap/preview"
	"github.com/capwrap/capwrap/store"
)

func ptr[T any](v T) *T          { return &v }
func unwrapPath(err error) error { return store.UnwrapPath(err) }
func shellQuote(s string) string { return preview.ShellQuote(s) }
func humanBytes(n int64) string  { return preview.HumanBytes(n) }
