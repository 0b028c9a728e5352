package awsemu

import (
	"net/url"
	"strings"
	"time"
)

// Administrator is the IAM user the emulator seeds for tests that act as the
// account's administrator: AdministratorAccess attached, and the access key
// DefaultAccessKeyID with DefaultSecretAccessKey.
const Administrator = "administrator"

// iamUser is an emulated IAM user: its policies and its access keys.
type iamUser struct {
	name, path, id string
	tags           map[string]string
	inline         map[string]string // policy name -> document
	attached       []string          // managed policy ARNs
	keys           []string          // access key ids
	created        time.Time
}

func (e *Emulator) userARN(u *iamUser) string {
	return "arn:aws:iam::" + e.cfg.AccountID + ":user" + u.path + u.name
}

// seedAdministratorLocked creates the Administrator user with its key.
func (e *Emulator) seedAdministratorLocked() {
	// A fixed id: the seeded random ids (and the simulator's figures) stay as they were.
	u := &iamUser{name: Administrator, path: "/", id: "AIDAADMINISTRATOR0001", tags: map[string]string{}, inline: map[string]string{},
		created: e.clk.Now()}
	e.iam.users[Administrator] = u
	u.attached = []string{"arn:aws:iam::aws:policy/AdministratorAccess"}
	e.addKeyLocked(u, DefaultAccessKeyID, DefaultSecretAccessKey)
}

func (e *Emulator) newUserLocked(name, path string) *iamUser {
	u := &iamUser{name: name, path: path, id: "AIDA" + strings.ToUpper(e.newID("x")[2:19]), tags: map[string]string{},
		inline: map[string]string{}, created: e.clk.Now()}
	e.iam.users[name] = u
	return u
}

func (e *Emulator) addKeyLocked(u *iamUser, id, secret string) {
	u.keys = append(u.keys, id)
	e.sts.creds[id] = Credential{AccessKeyID: id, SecretAccessKey: secret, ARN: e.userARN(u), UserID: u.id}
}

// AddUser creates an IAM user with an access key and policies: each
// document (by name) as a customer managed policy of the account, and AWS's
// managed policies by ARN. Tests act
// as it by signing with the key, as a pipeline running Terraform would.
func (e *Emulator) AddUser(name, accessKeyID, secret string, inline map[string]string, managed ...string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.iam.users[name] != nil {
		return &APIError{"EntityAlreadyExists", "User with name " + name + " already exists."}
	}
	for policyName, doc := range inline {
		if _, err := parsePolicy(doc, identityPolicy); err != nil {
			return &APIError{"MalformedPolicyDocument", policyName + ": " + err.Error()}
		}
	}
	for _, arn := range managed {
		if e.managedPolicyLocked(arn) == nil {
			return &APIError{"NoSuchEntity", "Policy " + arn + " does not exist or is not attachable."}
		}
	}
	u := e.newUserLocked(name, "/")
	for _, policyName := range sortedKeys(inline) { // customer managed policies: a user's inline ones total 2,048 characters
		doc := inline[policyName]
		if policySize(doc) > maxManagedSize {
			return &APIError{"LimitExceeded", "Cannot exceed quota for PolicySize: 6144"}
		}
		arn := "arn:aws:iam::" + e.cfg.AccountID + ":policy/" + policyName
		e.iam.customer[arn] = &managedPolicy{name: policyName, arn: arn, doc: doc}
		u.attached = append(u.attached, arn)
	}
	u.attached = append(u.attached, managed...)
	e.addKeyLocked(u, accessKeyID, secret)
	return nil
}

// userByKeyLocked finds the user an access key belongs to.
func (e *Emulator) userByKeyLocked(key string) *iamUser {
	for _, u := range e.iam.users {
		for _, k := range u.keys {
			if k == key {
				return u
			}
		}
	}
	return nil
}

// userPoliciesLocked are a user's inline and attached policies.
func (e *Emulator) userPoliciesLocked(u *iamUser) []*policy {
	return e.policiesLocked(u.inline, u.attached)
}

// iamUserHandlers answer the IAM user actions, one line each, under the
// emulator's lock.
var iamUserHandlers = map[string]func(e *Emulator, p params) (any, *APIError){
	"CreateUser":               (*Emulator).iamCreateUser,
	"GetUser":                  (*Emulator).iamGetUser,
	"DeleteUser":               (*Emulator).iamDeleteUser,
	"CreateAccessKey":          (*Emulator).iamCreateAccessKey,
	"DeleteAccessKey":          (*Emulator).iamDeleteAccessKey,
	"PutUserPolicy":            (*Emulator).iamPutUserPolicy,
	"DeleteUserPolicy":         (*Emulator).iamDeleteUserPolicy,
	"AttachUserPolicy":         (*Emulator).iamAttachUserPolicy,
	"DetachUserPolicy":         (*Emulator).iamDetachUserPolicy,
	"ListAttachedUserPolicies": (*Emulator).iamListAttachedUserPolicies,
	"CreateServiceLinkedRole":  (*Emulator).iamCreateServiceLinkedRole,
}

func (e *Emulator) userLocked(name string) (*iamUser, *APIError) {
	u := e.iam.users[name]
	if u == nil {
		return nil, &APIError{"NoSuchEntity", "The user with name " + name + " cannot be found."}
	}
	return u, nil
}

type xmlUser struct {
	Path    string `xml:"Path"`
	Name    string `xml:"UserName"`
	ID      string `xml:"UserId"`
	Arn     string `xml:"Arn"`
	Created string `xml:"CreateDate"`
}

func (e *Emulator) userBody(u *iamUser) any {
	return struct {
		User xmlUser `xml:"User"`
	}{xmlUser{u.path, u.name, u.id, e.userARN(u), isoTime(u.created)}}
}

func (e *Emulator) iamCreateUser(p params) (any, *APIError) {
	name := p.str("UserName")
	if !roleNamePattern.MatchString(name) {
		return nil, &APIError{"ValidationError", "The specified value for userName is invalid: use 1 to 64 of A-Z, a-z, 0-9 and +=,.@_-"}
	}
	if e.iam.users[name] != nil {
		return nil, &APIError{"EntityAlreadyExists", "User with name " + name + " already exists."}
	}
	u := e.newUserLocked(name, orDefault(p.str("Path"), "/"))
	u.tags = p.tags("Tags.member")
	return e.userBody(u), nil
}

func (e *Emulator) iamGetUser(p params) (any, *APIError) {
	u, apiErr := e.userLocked(p.str("UserName"))
	if apiErr != nil {
		return nil, apiErr
	}
	return e.userBody(u), nil
}

// iamDeleteUser refuses a user that still has keys or policies, as IAM does.
func (e *Emulator) iamDeleteUser(p params) (any, *APIError) {
	u, apiErr := e.userLocked(p.str("UserName"))
	if apiErr != nil {
		return nil, apiErr
	}
	if len(u.keys) > 0 || len(u.inline) > 0 || len(u.attached) > 0 {
		return nil, &APIError{"DeleteConflict", "Cannot delete entity, must delete access keys and policies first."}
	}
	delete(e.iam.users, u.name)
	return nil, nil
}

// iamCreateAccessKey issues a key whose secret only this answer shows.
func (e *Emulator) iamCreateAccessKey(p params) (any, *APIError) {
	u, apiErr := e.userLocked(p.str("UserName"))
	if apiErr != nil {
		return nil, apiErr
	}
	if len(u.keys) >= 2 {
		return nil, &APIError{"LimitExceeded", "Cannot exceed quota for AccessKeysPerUser: 2"}
	}
	id := "AKIA" + strings.ToUpper(e.newID("x")[2:18])
	secret := e.newID("secret")
	e.addKeyLocked(u, id, secret)
	type xmlKey struct {
		UserName string `xml:"UserName"`
		ID       string `xml:"AccessKeyId"`
		Status   string `xml:"Status"`
		Secret   string `xml:"SecretAccessKey"`
		Created  string `xml:"CreateDate"`
	}
	return struct {
		Key xmlKey `xml:"AccessKey"`
	}{xmlKey{u.name, id, "Active", secret, isoTime(e.clk.Now())}}, nil
}

func (e *Emulator) iamDeleteAccessKey(p params) (any, *APIError) {
	id := p.str("AccessKeyId")
	u := e.userByKeyLocked(id)
	if u == nil || (p.str("UserName") != "" && u.name != p.str("UserName")) {
		return nil, &APIError{"NoSuchEntity", "The Access Key with id " + id + " cannot be found."}
	}
	for i, k := range u.keys {
		if k == id {
			u.keys = append(u.keys[:i], u.keys[i+1:]...)
		}
	}
	delete(e.sts.creds, id)
	return nil, nil
}

func (e *Emulator) iamPutUserPolicy(p params) (any, *APIError) {
	u, apiErr := e.userLocked(p.str("UserName"))
	if apiErr != nil {
		return nil, apiErr
	}
	name, doc := p.str("PolicyName"), p.str("PolicyDocument")
	if apiErr := checkInlinePolicy(name, doc, u.inline, maxUserInlineSize, "user "+u.name); apiErr != nil {
		return nil, apiErr
	}
	u.inline[name] = doc
	return nil, nil
}

func (e *Emulator) iamDeleteUserPolicy(p params) (any, *APIError) {
	u, apiErr := e.userLocked(p.str("UserName"))
	if apiErr != nil {
		return nil, apiErr
	}
	if _, ok := u.inline[p.str("PolicyName")]; !ok {
		return nil, &APIError{"NoSuchEntity", "The user policy with name " + p.str("PolicyName") + " cannot be found."}
	}
	delete(u.inline, p.str("PolicyName"))
	return nil, nil
}

func (e *Emulator) iamAttachUserPolicy(p params) (any, *APIError) {
	u, apiErr := e.userLocked(p.str("UserName"))
	if apiErr != nil {
		return nil, apiErr
	}
	u.attached, apiErr = e.attachLocked(u.attached, p.str("PolicyArn"))
	return nil, apiErr
}

func (e *Emulator) iamDetachUserPolicy(p params) (any, *APIError) {
	u, apiErr := e.userLocked(p.str("UserName"))
	if apiErr != nil {
		return nil, apiErr
	}
	u.attached, apiErr = detach(u.attached, p.str("PolicyArn"))
	return nil, apiErr
}

func (e *Emulator) iamListAttachedUserPolicies(p params) (any, *APIError) {
	u, apiErr := e.userLocked(p.str("UserName"))
	if apiErr != nil {
		return nil, apiErr
	}
	return e.attachedBodyLocked(u.attached), nil
}

// userResourceLocked is the ARN of the user a call names.
func (e *Emulator) userResourceLocked(name string) string {
	if u := e.iam.users[name]; u != nil {
		return e.userARN(u)
	}
	return "arn:aws:iam::" + e.cfg.AccountID + ":user/" + url.PathEscape(name)
}
