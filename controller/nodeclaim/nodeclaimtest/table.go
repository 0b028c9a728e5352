package nodeclaimtest

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// tableAccept asks the API server for the table kubectl prints.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// Printed returns the cells `kubectl get` prints for one stowage.dev object
// of resource (nodepools, nodeclasses, nodeclaims), by column name.
func (e *Env) Printed(resource, name string) map[string]string {
	e.T.Helper()
	kube, err := kubernetes.NewForConfig(e.Mgr.GetConfig())
	if err != nil {
		e.T.Fatal(err)
	}
	raw, err := kube.Discovery().RESTClient().Get().AbsPath("/apis", v1alpha1.Group, "v1alpha1", resource, name).
		SetHeader("Accept", tableAccept).DoRaw(e.Ctx)
	if err != nil {
		e.T.Fatalf("getting %s %s as a table: %v", resource, name, err)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(raw, table); err != nil || len(table.Rows) != 1 {
		e.T.Fatalf("decoding the table (%v): %s", err, raw)
	}
	cells := map[string]string{}
	for i, c := range table.ColumnDefinitions {
		cells[c.Name] = fmt.Sprint(table.Rows[0].Cells[i])
	}
	return cells
}
