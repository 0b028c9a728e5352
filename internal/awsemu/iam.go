package awsemu

import (
	"encoding/xml"
	"net/http"
	"sort"
)

type iamState struct {
	roles    map[string]*iamRole // name -> role (iam_roles.go)
	profiles map[string]*InstanceProfile
	oidc     map[string]*oidcProvider  // issuer without https:// -> provider (sts.go)
	sessions map[string]*roleSession   // access key id -> session (sts.go)
	users    map[string]*iamUser       // name -> user (iam_users.go)
	customer map[string]*managedPolicy // ARN -> the account's own managed policy
	spotRole bool                      // AWSServiceRoleForEC2Spot exists (iam_spot_role.go)
	// parsed is identity policy document -> its parse, which every
	// authorization reads: policies never change once parsed
	parsed map[string]*policy
}

func newIAMState() iamState {
	return iamState{roles: map[string]*iamRole{}, profiles: map[string]*InstanceProfile{},
		oidc: map[string]*oidcProvider{}, sessions: map[string]*roleSession{}, users: map[string]*iamUser{},
		customer: map[string]*managedPolicy{}, parsed: map[string]*policy{}}
}

// InstanceProfile is an emulated IAM instance profile.
type InstanceProfile struct {
	Name  string
	ID    string
	Path  string
	Roles []string
	Tags  map[string]string
}

// AddRole creates an IAM role that instance profiles may hold: one EC2 may
// assume, with no policy.
func (e *Emulator) AddRole(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.iam.roles[name] == nil {
		e.iam.roles[name] = e.newRoleLocked(name, "/", ec2TrustPolicy)
	}
}

// InstanceProfile returns a copy of a profile and whether it exists.
func (e *Emulator) InstanceProfile(name string) (InstanceProfile, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.iam.profiles[name]
	if !ok {
		return InstanceProfile{}, false
	}
	cp := *p
	cp.Roles = append([]string(nil), p.Roles...)
	return cp, true
}

type iamResponse struct {
	XMLName   xml.Name
	Xmlns     string `xml:"xmlns,attr"`
	Result    any    `xml:",omitempty"`
	RequestID string `xml:"ResponseMetadata>RequestId"`
}

type xmlRole struct {
	RoleName string `xml:"RoleName"`
	RoleID   string `xml:"RoleId"`
	Arn      string `xml:"Arn"`
	Path     string `xml:"Path"`
	Created  string `xml:"CreateDate"`
}

type xmlProfileBody struct {
	Name    string    `xml:"InstanceProfileName"`
	ID      string    `xml:"InstanceProfileId"`
	Arn     string    `xml:"Arn"`
	Path    string    `xml:"Path"`
	Created string    `xml:"CreateDate"`
	Roles   []xmlRole `xml:"Roles>member"`
}

type profileResult struct {
	XMLName xml.Name
	Profile xmlProfileBody `xml:"InstanceProfile"`
}

func (e *Emulator) serveIAM(w http.ResponseWriter, req request) {
	p := req.form
	e.mu.Lock()
	defer e.mu.Unlock()
	name := p.str("InstanceProfileName")
	var result any
	var apiErr *APIError
	switch req.action {
	case "GetInstanceProfile":
		result, apiErr = e.iamProfileResultLocked(req.action, name)
	case "CreateInstanceProfile":
		if _, ok := e.iam.profiles[name]; ok {
			apiErr = &APIError{"EntityAlreadyExists", "Instance Profile " + name + " already exists."}
			break
		}
		e.iam.profiles[name] = &InstanceProfile{Name: name, ID: "AIPA" + e.newID("x")[2:], Path: orDefault(p.str("Path"), "/"), Tags: p.tags("Tags.member")}
		result, apiErr = e.iamProfileResultLocked(req.action, name)
	case "AddRoleToInstanceProfile":
		apiErr = e.addRoleLocked(name, p.str("RoleName"))
	default:
		result, apiErr = e.serveIAMRolesLocked(req.action, p)
	}
	if apiErr != nil {
		writeIAMError(w, iamStatus(apiErr.Code), apiErr.Code, apiErr.Message)
		return
	}
	writeXML(w, http.StatusOK, iamResponse{XMLName: xml.Name{Local: req.action + "Response"},
		Xmlns: "https://iam.amazonaws.com/doc/2010-05-08/", Result: result, RequestID: "req-emulated"})
}

func (e *Emulator) iamProfileResultLocked(action, name string) (any, *APIError) {
	prof, ok := e.iam.profiles[name]
	if !ok {
		return nil, &APIError{"NoSuchEntity", "Instance Profile " + name + " cannot be found."}
	}
	body := xmlProfileBody{prof.Name, prof.ID, "arn:aws:iam::" + e.cfg.AccountID + ":instance-profile" + prof.Path + prof.Name,
		prof.Path, isoTime(e.clk.Now()), nil}
	for _, r := range prof.Roles {
		body.Roles = append(body.Roles, xmlRole{r, "AROA" + r, "arn:aws:iam::" + e.cfg.AccountID + ":role/" + r, "/", isoTime(e.clk.Now())})
	}
	return profileResult{XMLName: xml.Name{Local: action + "Result"}, Profile: body}, nil
}

func (e *Emulator) addRoleLocked(profile, role string) *APIError {
	prof, ok := e.iam.profiles[profile]
	if !ok {
		return &APIError{"NoSuchEntity", "Instance Profile " + profile + " cannot be found."}
	}
	if e.iam.roles[role] == nil {
		return &APIError{"NoSuchEntity", "The role with name " + role + " cannot be found."}
	}
	if len(prof.Roles) > 0 {
		return &APIError{"LimitExceeded", "Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1"}
	}
	prof.Roles = append(prof.Roles, role)
	sort.Strings(prof.Roles)
	return nil
}

func iamStatus(code string) int {
	switch code {
	case "NoSuchEntity":
		return http.StatusNotFound
	case "EntityAlreadyExists", "LimitExceeded":
		return http.StatusConflict
	}
	return http.StatusBadRequest
}

type iamErrorResponse struct {
	XMLName   xml.Name `xml:"ErrorResponse"`
	Type      string   `xml:"Error>Type"`
	Code      string   `xml:"Error>Code"`
	Message   string   `xml:"Error>Message"`
	RequestID string   `xml:"RequestId"`
}

func writeIAMError(w http.ResponseWriter, status int, code, msg string) {
	kind := "Sender"
	if status >= 500 {
		kind = "Receiver"
	}
	writeXML(w, status, iamErrorResponse{Type: kind, Code: code, Message: msg, RequestID: "req-emulated"})
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
