package reference

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// ResourceType is one resource type an action is authorized on.
type ResourceType struct {
	Name     string
	Required bool
	// ARN is its format, e.g. arn:${Partition}:ec2:${Region}:${Account}:instance/${InstanceId}.
	ARN string
}

// Example is an ARN of the type in a partition, region and account, with
// id as every other variable.
func (r ResourceType) Example(partition, region, account, id string) string {
	s := strings.NewReplacer("${Partition}", partition, "${Region}", region, "${Account}", account).Replace(r.ARN)
	return regexp.MustCompile(`\$\{[^}]*\}`).ReplaceAllString(s, id)
}

// ResourceTypes reads, from the iam-data under modules, the resource types
// AWS authorizes an action (service:Name) on.
func ResourceTypes(modules, action string) ([]ResourceType, error) {
	svc, name, ok := strings.Cut(action, ":")
	if !ok {
		return nil, fmt.Errorf("%q is not service:Action", action)
	}
	data := filepath.Join(modules, "@cloud-copilot", "iam-data", "data")
	var actions map[string]rawAction
	var types map[string]rawResourceType
	if err := readJSON(filepath.Join(data, "actions", svc+".json"), &actions); err != nil {
		return nil, err
	}
	if err := readJSON(filepath.Join(data, "resourceTypes", svc+".json"), &types); err != nil {
		return nil, err
	}
	a, ok := actions[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("%s is not an action of the reference", action)
	}
	out := make([]ResourceType, 0, len(a.ResourceTypes))
	for _, r := range a.ResourceTypes {
		out = append(out, ResourceType{Name: r.Name, Required: r.Required, ARN: types[strings.ToLower(r.Name)].ARN})
	}
	return out, nil
}
