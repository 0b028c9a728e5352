// Package report holds what `stowage simulate` measured, for every system it
// compared (Stowage, the Cluster Autoscaler model), and renders it three ways:
// a terminal summary (WriteText, with Progress for long runs), a
// self-contained HTML page with inline SVG charts and no JavaScript
// (WriteHTML), and JSON for machines (WriteJSON, schema in
// docs/guides/simulate-report.md).
//
// Every renderer is a pure function of the Report: the same Report gives the
// same bytes. Maps are walked in sorted key order and numbers are printed
// with fixed precision.
package report
