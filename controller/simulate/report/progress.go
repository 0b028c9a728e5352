package report

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

const progressBarWidth = 40

// Progress draws a one-line progress bar, redrawing only when the whole
// percentage changes. It draws nothing when disabled, which by default it is
// unless its writer is a terminal.
type Progress struct {
	w       io.Writer
	label   string
	total   int64
	enabled bool
	// drawn is the last percentage drawn; -1 before the first.
	drawn int
}

// ProgressOption adjusts a Progress.
type ProgressOption func(*Progress)

// ProgressEnabled forces the bar on or off, whatever the writer is.
func ProgressEnabled(enabled bool) ProgressOption {
	return func(p *Progress) { p.enabled = enabled }
}

// NewProgress returns a bar for total units of work, labelled label (cut to
// 40 characters), drawing on w when w is a terminal.
func NewProgress(w io.Writer, label string, total int64, opts ...ProgressOption) *Progress {
	p := &Progress{w: w, label: fit(label, 40), total: max(total, 1), enabled: IsTerminal(w), drawn: -1}
	for _, o := range opts {
		o(p)
	}
	return p
}

// IsTerminal reports whether w is a file open on a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Update records done units of work (clamped to [0, total]) and redraws if
// the whole percentage changed.
func (p *Progress) Update(done int64) error {
	if !p.enabled {
		return nil
	}
	pct := int(min(max(done, 0), p.total) * 100 / p.total)
	if pct == p.drawn {
		return nil
	}
	p.drawn = pct
	filled := pct * progressBarWidth / 100
	_, err := fmt.Fprintf(p.w, "\r%s [%s%s] %3d%%", p.label,
		strings.Repeat("#", filled), strings.Repeat(".", progressBarWidth-filled), pct)
	return err
}

// Done draws 100% and ends the line, if the bar was drawn at all.
func (p *Progress) Done() error {
	if !p.enabled || p.drawn < 0 {
		return nil
	}
	if err := p.Update(p.total); err != nil {
		return err
	}
	_, err := io.WriteString(p.w, "\n")
	return err
}
