package nodeboot

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sync"

	"github.com/google/cel-go/cel"
)

// instanceInfoJSONL is nodeadm's own table of instance types (data/README.md
// names its source): the ENIs of the default network card and the IPv4
// addresses per ENI.
//
//go:embed data/instance-info.jsonl
var instanceInfoJSONL []byte

// ENIInfo is what nodeadm knows of an instance type's networking.
type ENIInfo struct {
	InstanceType     string `json:"instanceType"`
	DefaultMaxENIs   int64  `json:"defaultMaxENIs"`
	IPv4PerInterface int64  `json:"ipv4AddressesPerInterface"`
}

// defaultMaxPods is the kubelet's own default, nodeadm's answer for a type
// it cannot find.
const defaultMaxPods = 110

var instanceInfo = sync.OnceValue(func() map[string]ENIInfo {
	out := map[string]ENIInfo{}
	for s := bufio.NewScanner(bytes.NewReader(instanceInfoJSONL)); s.Scan(); {
		var info ENIInfo
		if json.Unmarshal(s.Bytes(), &info) == nil && info.InstanceType != "" {
			out[info.InstanceType] = info
		}
	}
	return out
})

// LookupENIs returns nodeadm's table's entry for an instance type.
func LookupENIs(instanceType string) (ENIInfo, bool) {
	info, ok := instanceInfo()[instanceType]
	return info, ok
}

// BaseMaxPods is the max pods nodeadm writes into the kubelet's base
// configuration: ENIs × (IPv4 addresses per ENI − 1) + 2, from its table
// or else from what EC2 says of the type (eni, when known), or 110 without
// either; then a maxPodsExpression's positive result, when it has one
// (nodeadm warns and keeps the standard value when it fails). Kube-reserved
// memory follows this value, not a maxPods the kubelet config overrides.
func BaseMaxPods(instanceType string, eni *ENIInfo, expression string) int64 {
	info, ok := LookupENIs(instanceType)
	if !ok && eni != nil {
		info, ok = *eni, true
	}
	if !ok {
		return defaultMaxPods
	}
	standard := info.DefaultMaxENIs*(info.IPv4PerInterface-1) + 2
	if expression == "" {
		return standard
	}
	if v, err := evalMaxPods(expression, info, standard); err == nil {
		return v
	}
	return standard
}

// evalMaxPods evaluates a maxPodsExpression with cel-go over nodeadm's
// three variables.
func evalMaxPods(expression string, info ENIInfo, standard int64) (int64, error) {
	env, err := cel.NewEnv(cel.Variable("default_enis", cel.IntType), cel.Variable("ips_per_eni", cel.IntType),
		cel.Variable("max_pods", cel.IntType))
	if err != nil {
		return 0, err
	}
	ast, issues := env.Compile(expression)
	if issues != nil && issues.Err() != nil {
		return 0, fmt.Errorf("compiling maxPodsExpression %q: %w", expression, issues.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		return 0, err
	}
	out, _, err := prg.Eval(map[string]any{"default_enis": info.DefaultMaxENIs, "ips_per_eni": info.IPv4PerInterface, "max_pods": standard})
	if err != nil {
		return 0, fmt.Errorf("evaluating maxPodsExpression %q: %w", expression, err)
	}
	v, ok := out.ConvertToType(cel.IntType).Value().(int64)
	if !ok || v <= 0 || v > math.MaxInt32 {
		return 0, fmt.Errorf("maxPodsExpression %q gives %v, not a positive count", expression, out.Value())
	}
	return v, nil
}
