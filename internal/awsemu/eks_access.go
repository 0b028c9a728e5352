package awsemu

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// AccessEntry is an EKS access entry: an IAM principal's Kubernetes identity
// in a cluster.
type AccessEntry struct {
	Cluster      string
	PrincipalARN string
	// Username is the Kubernetes user; for a role, by default,
	// arn:aws:sts::<account>:assumed-role/<role>/{{SessionName}}.
	Username string
	// Groups are the Kubernetes groups the principal is in.
	Groups  []string
	Type    string
	Tags    map[string]string
	Created time.Time
}

// PodIdentityAssociation is an EKS Pod Identity association: the role pods of
// a service account get credentials of.
type PodIdentityAssociation struct {
	ID, Cluster, Namespace, ServiceAccount, RoleARN string
	Tags                                            map[string]string
	Created                                         time.Time
}

type eksAccessState struct {
	entries      map[string]*AccessEntry            // cluster + "\x00" + principal ARN -> entry
	associations map[string]*PodIdentityAssociation // id -> association
}

// AccessEntryFor returns the cluster's access entry for a principal, as the
// EKS authenticator consults it: an assumed-role session's ARN finds its
// role's entry.
func (e *Emulator) AccessEntryFor(cluster, principalARN string) (AccessEntry, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if role, ok := strings.CutPrefix(principalARN, "arn:aws:sts::"+e.cfg.AccountID+":assumed-role/"); ok {
		name, _, _ := strings.Cut(role, "/")
		if r := e.iam.roles[name]; r != nil {
			principalARN = e.roleARN(r)
		} else {
			principalARN = "arn:aws:iam::" + e.cfg.AccountID + ":role/" + name
		}
	}
	a, ok := e.eksAccess.entries[cluster+"\x00"+principalARN]
	if !ok {
		return AccessEntry{}, false
	}
	cp := *a
	cp.Groups = append([]string(nil), a.Groups...)
	return cp, true
}

// PodIdentityAssociations returns every association, in no order.
func (e *Emulator) PodIdentityAssociations() []PodIdentityAssociation {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]PodIdentityAssociation, 0, len(e.eksAccess.associations))
	for _, id := range sortedKeys(e.eksAccess.associations) {
		out = append(out, *e.eksAccess.associations[id])
	}
	return out
}

// eksAccessRoutes name the access-entry and Pod Identity operations by
// method and the path's shape after /clusters/{name}/.
var eksAccessRoutes = map[string]string{
	"POST access-entries": "CreateAccessEntry", "GET access-entries": "ListAccessEntries",
	"GET access-entries/*": "DescribeAccessEntry", "POST access-entries/*": "UpdateAccessEntry", "DELETE access-entries/*": "DeleteAccessEntry",
	"POST pod-identity-associations": "CreatePodIdentityAssociation", "GET pod-identity-associations": "ListPodIdentityAssociations",
	"GET pod-identity-associations/*":    "DescribePodIdentityAssociation",
	"POST pod-identity-associations/*":   "UpdatePodIdentityAssociation",
	"DELETE pod-identity-associations/*": "DeletePodIdentityAssociation",
}

// eksAccessAction names an access-entry or Pod Identity request, or "".
func eksAccessAction(r *http.Request) string {
	parts := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	if len(parts) < 3 || parts[0] != "clusters" {
		return ""
	}
	shape := parts[2]
	if len(parts) == 4 {
		shape += "/*"
	}
	return eksAccessRoutes[r.Method+" "+shape]
}

// eksAccessHandlers answer those operations, one line each.
var eksAccessHandlers = map[string]func(e *Emulator, cluster, id string, req request) (any, int, *APIError){
	"CreateAccessEntry":              (*Emulator).createAccessEntry,
	"DescribeAccessEntry":            (*Emulator).describeAccessEntry,
	"UpdateAccessEntry":              (*Emulator).updateAccessEntry,
	"DeleteAccessEntry":              (*Emulator).deleteAccessEntry,
	"ListAccessEntries":              (*Emulator).listAccessEntries,
	"CreatePodIdentityAssociation":   (*Emulator).createPodIdentityAssociation,
	"DescribePodIdentityAssociation": (*Emulator).describePodIdentityAssociation,
	"UpdatePodIdentityAssociation":   (*Emulator).updatePodIdentityAssociation,
	"DeletePodIdentityAssociation":   (*Emulator).deletePodIdentityAssociation,
	"ListPodIdentityAssociations":    (*Emulator).listPodIdentityAssociations,
}

// serveEKSAccess answers an access-entry or Pod Identity operation; false
// when the action is not one.
func (e *Emulator) serveEKSAccess(w http.ResponseWriter, req request) bool {
	h, ok := eksAccessHandlers[req.action]
	if !ok {
		return false
	}
	parts := strings.Split(strings.Trim(req.path, "/"), "/")
	cluster, id := parts[1], ""
	if len(parts) == 4 {
		id = parts[3]
	}
	e.mu.Lock()
	_, known := e.eksClusters[cluster]
	if e.eksAccess.entries == nil {
		e.eksAccess = eksAccessState{entries: map[string]*AccessEntry{}, associations: map[string]*PodIdentityAssociation{}}
	}
	e.mu.Unlock()
	if !known {
		writeRESTError(w, http.StatusNotFound, &APIError{"ResourceNotFoundException", "No cluster found for name: " + cluster + "."})
		return true
	}
	out, status, apiErr := h(e, cluster, id, req)
	if apiErr != nil {
		writeRESTError(w, status, apiErr)
		return true
	}
	writeJSON(w, "eks", out)
	return true
}

type accessEntryInput struct {
	PrincipalARN string            `json:"principalArn"`
	Groups       []string          `json:"kubernetesGroups"`
	Username     string            `json:"username"`
	Type         string            `json:"type"`
	Tags         map[string]string `json:"tags"`
}

func (e *Emulator) accessEntryJSON(a *AccessEntry) map[string]any {
	arnPart := strings.ReplaceAll(strings.TrimPrefix(a.PrincipalARN, "arn:aws:iam::"), ":", "/")
	return map[string]any{"accessEntry": map[string]any{"clusterName": a.Cluster, "principalArn": a.PrincipalARN,
		"kubernetesGroups": a.Groups, "username": a.Username, "type": a.Type, "tags": a.Tags,
		"accessEntryArn": "arn:aws:eks:" + e.cfg.Region + ":" + e.cfg.AccountID + ":access-entry/" + a.Cluster + "/" + arnPart,
		"createdAt":      float64(a.Created.Unix()), "modifiedAt": float64(a.Created.Unix())}}
}

// validGroups refuses the groups EKS refuses: none may start with system:.
func validGroups(groups []string) *APIError {
	for _, g := range groups {
		if strings.HasPrefix(g, "system:") {
			return &APIError{"InvalidParameterException", "The kubernetes group name " + g + " is invalid, it cannot start with system:"}
		}
	}
	return nil
}

func (e *Emulator) createAccessEntry(cluster, _ string, req request) (any, int, *APIError) {
	var in accessEntryInput
	if err := json.Unmarshal(req.body, &in); err != nil || !strings.HasPrefix(in.PrincipalARN, "arn:aws:iam::") {
		return nil, http.StatusBadRequest, &APIError{"InvalidParameterException", "The principalArn parameter must be an IAM role or user ARN."}
	}
	if apiErr := validGroups(in.Groups); apiErr != nil {
		return nil, http.StatusBadRequest, apiErr
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	key := cluster + "\x00" + in.PrincipalARN
	if _, ok := e.eksAccess.entries[key]; ok {
		return nil, http.StatusConflict, &APIError{"ResourceInUseException", "The specified access entry resource is already in use on this cluster."}
	}
	a := &AccessEntry{Cluster: cluster, PrincipalARN: in.PrincipalARN, Groups: in.Groups, Username: in.Username,
		Type: orDefault(in.Type, "STANDARD"), Tags: in.Tags, Created: e.clk.Now()}
	if a.Groups == nil {
		a.Groups = []string{}
	}
	if a.Username == "" {
		a.Username = in.PrincipalARN
		if role, ok := strings.CutPrefix(in.PrincipalARN, "arn:aws:iam::"+e.cfg.AccountID+":role/"); ok {
			a.Username = "arn:aws:sts::" + e.cfg.AccountID + ":assumed-role/" + role[strings.LastIndex(role, "/")+1:] + "/{{SessionName}}"
		}
	}
	e.eksAccess.entries[key] = a
	return e.accessEntryJSON(a), 0, nil
}

func (e *Emulator) entryLocked(cluster, escaped string) (*AccessEntry, *APIError) {
	principal, _ := url.PathUnescape(escaped)
	a, ok := e.eksAccess.entries[cluster+"\x00"+principal]
	if !ok {
		return nil, &APIError{"ResourceNotFoundException", "The specified access entry resource could not be found."}
	}
	return a, nil
}

func (e *Emulator) describeAccessEntry(cluster, id string, _ request) (any, int, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, apiErr := e.entryLocked(cluster, id)
	if apiErr != nil {
		return nil, http.StatusNotFound, apiErr
	}
	return e.accessEntryJSON(a), 0, nil
}

func (e *Emulator) updateAccessEntry(cluster, id string, req request) (any, int, *APIError) {
	var in accessEntryInput
	_ = json.Unmarshal(req.body, &in)
	if apiErr := validGroups(in.Groups); apiErr != nil {
		return nil, http.StatusBadRequest, apiErr
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	a, apiErr := e.entryLocked(cluster, id)
	if apiErr != nil {
		return nil, http.StatusNotFound, apiErr
	}
	if in.Groups != nil {
		a.Groups = in.Groups
	}
	if in.Username != "" {
		a.Username = in.Username
	}
	return e.accessEntryJSON(a), 0, nil
}

func (e *Emulator) deleteAccessEntry(cluster, id string, _ request) (any, int, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, apiErr := e.entryLocked(cluster, id)
	if apiErr != nil {
		return nil, http.StatusNotFound, apiErr
	}
	delete(e.eksAccess.entries, cluster+"\x00"+a.PrincipalARN)
	return struct{}{}, 0, nil
}

func (e *Emulator) listAccessEntries(cluster, _ string, _ request) (any, int, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []string{}
	for _, key := range sortedKeys(e.eksAccess.entries) {
		if a := e.eksAccess.entries[key]; a.Cluster == cluster {
			out = append(out, a.PrincipalARN)
		}
	}
	return map[string][]string{"accessEntries": out}, 0, nil
}

type podIdentityInput struct {
	Namespace      string            `json:"namespace"`
	ServiceAccount string            `json:"serviceAccount"`
	RoleARN        string            `json:"roleArn"`
	Tags           map[string]string `json:"tags"`
}

func (e *Emulator) associationJSON(a *PodIdentityAssociation) map[string]any {
	return map[string]any{"association": map[string]any{"clusterName": a.Cluster, "namespace": a.Namespace,
		"serviceAccount": a.ServiceAccount, "roleArn": a.RoleARN, "associationId": a.ID, "tags": a.Tags,
		"associationArn": "arn:aws:eks:" + e.cfg.Region + ":" + e.cfg.AccountID + ":podidentityassociation/" + a.Cluster + "/" + a.ID,
		"createdAt":      float64(a.Created.Unix()), "modifiedAt": float64(a.Created.Unix())}}
}

func (e *Emulator) createPodIdentityAssociation(cluster, _ string, req request) (any, int, *APIError) {
	var in podIdentityInput
	if err := json.Unmarshal(req.body, &in); err != nil || in.Namespace == "" || in.ServiceAccount == "" || !strings.HasPrefix(in.RoleARN, "arn:aws:iam::") {
		return nil, http.StatusBadRequest, &APIError{"InvalidParameterException", "namespace, serviceAccount and an IAM roleArn are required."}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, a := range e.eksAccess.associations {
		if a.Cluster == cluster && a.Namespace == in.Namespace && a.ServiceAccount == in.ServiceAccount {
			return nil, http.StatusConflict, &APIError{"ResourceInUseException", "Association already exists: " + a.ID}
		}
	}
	a := &PodIdentityAssociation{ID: "a-" + e.newID("x")[2:], Cluster: cluster, Namespace: in.Namespace,
		ServiceAccount: in.ServiceAccount, RoleARN: in.RoleARN, Tags: in.Tags, Created: e.clk.Now()}
	e.eksAccess.associations[a.ID] = a
	return e.associationJSON(a), 0, nil
}

func (e *Emulator) associationLocked(cluster, id string) (*PodIdentityAssociation, *APIError) {
	a, ok := e.eksAccess.associations[id]
	if !ok || a.Cluster != cluster {
		return nil, &APIError{"ResourceNotFoundException", "Association " + id + " not found."}
	}
	return a, nil
}

func (e *Emulator) describePodIdentityAssociation(cluster, id string, _ request) (any, int, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, apiErr := e.associationLocked(cluster, id)
	if apiErr != nil {
		return nil, http.StatusNotFound, apiErr
	}
	return e.associationJSON(a), 0, nil
}

func (e *Emulator) updatePodIdentityAssociation(cluster, id string, req request) (any, int, *APIError) {
	var in podIdentityInput
	_ = json.Unmarshal(req.body, &in)
	e.mu.Lock()
	defer e.mu.Unlock()
	a, apiErr := e.associationLocked(cluster, id)
	if apiErr != nil {
		return nil, http.StatusNotFound, apiErr
	}
	if in.RoleARN != "" {
		a.RoleARN = in.RoleARN
	}
	return e.associationJSON(a), 0, nil
}

func (e *Emulator) deletePodIdentityAssociation(cluster, id string, _ request) (any, int, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, apiErr := e.associationLocked(cluster, id)
	if apiErr != nil {
		return nil, http.StatusNotFound, apiErr
	}
	delete(e.eksAccess.associations, id)
	return e.associationJSON(a), 0, nil
}

func (e *Emulator) listPodIdentityAssociations(cluster, _ string, req request) (any, int, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, _ := url.ParseQuery(req.query)
	out := []map[string]any{}
	for _, id := range sortedKeys(e.eksAccess.associations) {
		a := e.eksAccess.associations[id]
		if a.Cluster != cluster || (q.Get("namespace") != "" && q.Get("namespace") != a.Namespace) ||
			(q.Get("serviceAccount") != "" && q.Get("serviceAccount") != a.ServiceAccount) {
			continue
		}
		out = append(out, map[string]any{"clusterName": a.Cluster, "namespace": a.Namespace, "serviceAccount": a.ServiceAccount,
			"associationId": a.ID, "associationArn": e.associationJSON(a)["association"].(map[string]any)["associationArn"]})
	}
	return map[string]any{"associations": out}, 0, nil
}
