package awsemu

import (
	"net/http"
	"slices"
)

// vpcConfig is a function's VPC configuration: the subnets and security
// groups of the network interfaces Lambda gives it.
type vpcConfig struct {
	SubnetIDs        []string `json:"SubnetIds"`
	SecurityGroupIDs []string `json:"SecurityGroupIds"`
	VpcID            string   `json:"VpcId,omitempty"`
}

// orNil drops an empty configuration: Lambda reads it as none.
func (v *vpcConfig) orNil() *vpcConfig {
	if v == nil || len(v.SubnetIDs) == 0 && len(v.SecurityGroupIDs) == 0 {
		return nil
	}
	return v
}

type updateFunctionConfigurationInput struct {
	Role        string               `json:"Role"`
	Description *string              `json:"Description"`
	Timeout     int                  `json:"Timeout"`
	MemorySize  int                  `json:"MemorySize"`
	Environment *functionEnvironment `json:"Environment"`
	VpcConfig   *vpcConfig           `json:"VpcConfig"`
}

func (e *Emulator) updateFunctionConfigurationHTTP(r *http.Request, body []byte) (int, any, *APIError) {
	var in updateFunctionConfigurationInput
	if apiErr := decodeLambda(body, &in); apiErr != nil {
		return 0, nil, apiErr
	}
	out, apiErr := e.updateFunctionConfiguration(r.PathValue("name"), in)
	return http.StatusOK, out, apiErr
}

// updateFunctionConfiguration changes what a request sets and keeps the
// rest; a VpcConfig with no subnets takes the function out of its VPC. The
// next invocation starts a new execution environment.
func (e *Emulator) updateFunctionConfiguration(name string, in updateFunctionConfigurationInput) (*functionConfiguration, *APIError) {
	if in.Timeout < 0 || in.Timeout > maxFunctionTimeout {
		return nil, &APIError{"ValidationException", "1 validation error detected: Value at 'timeout' failed to satisfy constraint: Member must have value less than or equal to 900"}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	fn, apiErr := e.functionLocked(name)
	if apiErr != nil {
		return nil, apiErr
	}
	if in.Role != "" {
		if m := roleARNPattern.FindStringSubmatch(in.Role); m == nil || m[1] != e.cfg.AccountID {
			return nil, &APIError{"ValidationException", "Value '" + in.Role + "' at 'role' is not an IAM role ARN of the account"}
		}
		fn.role, fn.cred = in.Role, e.roleSessionLocked(in.Role, fn.name)
	}
	if in.Description != nil {
		fn.description = *in.Description
	}
	if in.Timeout > 0 {
		fn.timeout = in.Timeout
	}
	if in.MemorySize > 0 {
		fn.memory = in.MemorySize
	}
	if in.Environment != nil {
		fn.env = map[string]string{}
		for k, v := range in.Environment.Variables {
			fn.env[k] = v
		}
	}
	if in.VpcConfig != nil {
		fn.vpc = in.VpcConfig.orNil()
	}
	fn.lastModified = e.clk.Now()
	fn.revision++
	return e.configurationLocked(fn), nil
}

// Functions returns the names of every function, sorted.
func (e *Emulator) Functions() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return sortedKeys(e.lambda.functions)
}

// EventSourceMappings returns the ids of every event source mapping, sorted.
func (e *Emulator) EventSourceMappings() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := sortedKeys(e.lambda.mappings)
	return slices.Clip(out)
}

// Rules returns the names of every EventBridge rule, sorted.
func (e *Emulator) Rules() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return sortedKeys(e.bus.rules)
}
