package manifest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Error is one problem in a stream: where it is (file, line), which object
// and which field, and what to do about it.
type Error struct {
	// File is set by InFile; Line counts from 1 in the whole stream.
	File string
	Line int
	// Object is "Kind namespace/name", empty before an object is known.
	Object string
	// Field is the field path, e.g. spec.containers[0].resources.requests[cpu];
	// empty when the problem is the whole object.
	Field  string
	Detail string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	} else {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Object != "" {
		b.WriteString(e.Object + ": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Detail)
	return b.String()
}

// InFile names the file in every Error err holds (one, several joined, or
// wrapped), so that each reads "FILE:LINE: ...".
func InFile(name string, err error) error {
	visit(err, func(e *Error) { e.File = name })
	return err
}

func visit(err error, f func(*Error)) {
	switch x := err.(type) {
	case *Error:
		f(x)
	case interface{ Unwrap() []error }:
		for _, e := range x.Unwrap() {
			visit(e, f)
		}
	case interface{ Unwrap() error }:
		visit(x.Unwrap(), f)
	}
}

var yamlLine = regexp.MustCompile(`^(?:error converting YAML to JSON: )?yaml: line (\d+): `)

// syntaxError turns a YAML parser's error, whose line counts from the start
// of the document, into an Error on the line of the file; the document has
// lines lines (a parser may point past the last one at the end of input).
func syntaxError(err error, offset, lines int) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &Error{Line: min(max(n, 1), lines) + offset, Detail: "YAML syntax: " + msg[len(m[0]):]}
	}
	return &Error{Line: offset + 1, Detail: "YAML syntax: " + strings.TrimPrefix(msg, "yaml: ")}
}

// Errorf is an Error on the object's field path (empty for the object as a
// whole), on that field's line.
func (o *Object) Errorf(path, format string, args ...any) *Error {
	return o.errorf(path, format, args...)
}

func (o *Object) errorf(path, format string, args ...any) *Error {
	return &Error{Line: o.LineOf(path), Object: o.ID(), Field: path, Detail: fmt.Sprintf(format, args...)}
}

// FieldErrors places validation errors on their lines, one Error each.
func (o *Object) FieldErrors(errs field.ErrorList) []error {
	out := make([]error, 0, len(errs))
	for _, fe := range errs {
		e := o.errorf(fe.Field, "%s", fe.ErrorBody())
		out = append(out, e)
	}
	return out
}

// Leaves lists the errors err joins, looking through wrapping; an Error is a
// leaf. A caller prints or counts them one by one.
func Leaves(err error) []error {
	switch x := err.(type) {
	case nil:
		return nil
	case *Error:
		return []error{x}
	case interface{ Unwrap() []error }:
		var out []error
		for _, e := range x.Unwrap() {
			out = append(out, Leaves(e)...)
		}
		return out
	case interface{ Unwrap() error }:
		if inner := Leaves(x.Unwrap()); len(inner) > 0 {
			return inner
		}
	}
	return []error{err}
}
