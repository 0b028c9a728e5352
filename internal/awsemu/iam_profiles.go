package awsemu

import (
	"sort"
	"strings"
)

func (e *Emulator) profilesOfLocked(role string) []*InstanceProfile {
	var out []*InstanceProfile
	for _, name := range sortedKeys(e.iam.profiles) {
		if contains(e.iam.profiles[name].Roles, role) {
			out = append(out, e.iam.profiles[name])
		}
	}
	return out
}

func (e *Emulator) iamRemoveRoleFromInstanceProfile(p params) (any, *APIError) {
	prof, ok := e.iam.profiles[p.str("InstanceProfileName")]
	if !ok {
		return nil, &APIError{"NoSuchEntity", "Instance Profile " + p.str("InstanceProfileName") + " cannot be found."}
	}
	for i, r := range prof.Roles {
		if r == p.str("RoleName") {
			prof.Roles = append(prof.Roles[:i], prof.Roles[i+1:]...)
			return nil, nil
		}
	}
	return nil, &APIError{"NoSuchEntity", "The role with name " + p.str("RoleName") + " cannot be found in the instance profile."}
}

func (e *Emulator) iamDeleteInstanceProfile(p params) (any, *APIError) {
	prof, ok := e.iam.profiles[p.str("InstanceProfileName")]
	if !ok {
		return nil, &APIError{"NoSuchEntity", "Instance Profile " + p.str("InstanceProfileName") + " cannot be found."}
	}
	if len(prof.Roles) > 0 {
		return nil, &APIError{"DeleteConflict", "Cannot delete entity, must remove roles from instance profile first."}
	}
	delete(e.iam.profiles, prof.Name)
	return nil, nil
}

func (e *Emulator) iamListInstanceProfilesForRole(p params) (any, *APIError) {
	if _, apiErr := e.roleLocked(p.str("RoleName")); apiErr != nil {
		return nil, apiErr
	}
	out := struct {
		Profiles  []xmlProfileBody `xml:"InstanceProfiles>member"`
		Truncated bool             `xml:"IsTruncated"`
	}{}
	for _, prof := range e.profilesOfLocked(p.str("RoleName")) {
		res, _ := e.iamProfileResultLocked("GetInstanceProfile", prof.Name)
		out.Profiles = append(out.Profiles, res.(profileResult).Profile)
	}
	sort.Slice(out.Profiles, func(i, j int) bool { return out.Profiles[i].Name < out.Profiles[j].Name })
	return out, nil
}

func (e *Emulator) iamListInstanceProfiles(p params) (any, *APIError) {
	out := struct {
		Profiles  []xmlProfileBody `xml:"InstanceProfiles>member"`
		Truncated bool             `xml:"IsTruncated"`
	}{}
	for _, name := range sortedKeys(e.iam.profiles) {
		if prof := e.iam.profiles[name]; strings.HasPrefix(prof.Path, orDefault(p.str("PathPrefix"), "/")) {
			res, _ := e.iamProfileResultLocked("GetInstanceProfile", name)
			out.Profiles = append(out.Profiles, res.(profileResult).Profile)
		}
	}
	return out, nil
}

func (e *Emulator) iamListInstanceProfileTags(p params) (any, *APIError) {
	prof, ok := e.iam.profiles[p.str("InstanceProfileName")]
	if !ok {
		return nil, &APIError{"NoSuchEntity", "Instance Profile " + p.str("InstanceProfileName") + " cannot be found."}
	}
	return struct {
		Tags      []xmlTagMember `xml:"Tags>member"`
		Truncated bool           `xml:"IsTruncated"`
	}{xmlTags(prof.Tags), false}, nil
}

// InstanceProfiles returns the names of every instance profile, sorted.
func (e *Emulator) InstanceProfiles() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return sortedKeys(e.iam.profiles)
}
