package docsrun

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Marker opens a runnable block: a fenced shell block whose info string is
// `sh {runnable}`.
const Marker = "```sh {runnable}"

// Block is one runnable block of a document.
type Block struct {
	// File and Line say where it starts.
	File string
	Line int
	// Script is the block's text.
	Script string
}

// Blocks returns the runnable blocks of a Markdown document, in order; an
// unclosed block is an error naming its line.
func Blocks(file string, r io.Reader) ([]Block, error) {
	var out []Block
	var cur *Block
	var b strings.Builder
	s := bufio.NewScanner(r)
	for line := 1; s.Scan(); line++ {
		text := s.Text()
		switch {
		case cur == nil && strings.TrimSpace(text) == Marker:
			cur = &Block{File: file, Line: line}
			b.Reset()
		case cur != nil && strings.TrimSpace(text) == "```":
			cur.Script = b.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			b.WriteString(text + "\n")
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: the runnable block is not closed", file, cur.Line)
	}
	return out, s.Err()
}
